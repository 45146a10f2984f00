#!/bin/sh
# Guest: run the module's KUnit suites and print every case as a TAP line
# ("ok N kunit.SUITE.CASE"). KUnit runs a module's suites when it loads; the
# view suites build views for the sleepers named by kunit_pid= and kunit_pid2=.
. /xp/selftests/tests/lib.sh

lsmod | grep -q '^xprobes ' && rmmod xprobes
sleep 1000 &
target=$!
sleep 1000 &
target2=$!
dmesg -c > /dev/null
insmod /xp/xprobes-kunit.ko kunit_pid=$target kunit_pid2=$target2 || echo "not ok 0 kunit.insmod"
rmmod xprobes
kill $target $target2
insmod $KO || echo "not ok 0 kunit.reload"

# KTAP in the kernel log: "# Subtest: SUITE" opens a suite, its cases are
# indented "ok N CASE [# SKIP why]" lines, the suite's own result follows.
dmesg | sed 's/^\[[ 0-9.]*\] //' | awk '
	/^    # Subtest: / { suite = $3; next }
	/^    +# / { sub(/^ +/, ""); print; next }
	/^    +[^ ]/ && !/^    (not )?ok [0-9]+ / { sub(/^ +/, "#   "); print; next }
	/^    (not )?ok [0-9]+ / {
		line = substr($0, 5); notok = (line ~ /^not /)
		sub(/^(not )?ok [0-9]+ /, "", line)
		name = line; sub(/ #.*/, "", name)
		cmt = ""; if (line ~ / # /) { cmt = line; sub(/^[^#]* # /, "", cmt); cmt = " # " cmt }
		printf "%sok %d kunit.%s.%s%s\n", notok ? "not " : "", ++n, suite, name, cmt
		next
	}
	/^(not )?ok [0-9]+ xprobes_/ { suites++ }
	END { if (!n) print "not ok 0 kunit.no-results"; printf "# kunit: %d cases in %d suites\n", n, suites }'
