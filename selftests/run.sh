#!/bin/sh
# Guest-side selftest runner (kselftest conventions): runs every test in
# tests/ in order, prints TAP lines; exit code 4 from a test means "skip".
# usage: run.sh [NAME-SUBSTRING...]   (default: all tests)
# XP_TEST_DIR picks another directory of tests (the debug kernel's stress and
# fuzz tests live in debug/tests); XP_TAP_START numbers the first test.
# XP_EXCLUDE="PAT ..." leaves out the tests whose names contain a PAT (make
# check's main suites leave 41-trace-causes to the PTI suites).
# Each test starts with xprobes.ko loaded and must leave it loaded.
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/tests/lib.sh"

# Processes whose parent is init: a killed test's background children end up there.
orphans() {
	local d k v
	for d in /proc/[0-9]*; do
		while read -r k v; do
			[ "$k" = PPid: ] || continue
			[ "$v" = 1 ] && echo "${d#/proc/}"
			break
		done 2>/dev/null < "$d/status"
	done
}

echo "TAP version 13"
n=${XP_TAP_START:-0}
for t in "${XP_TEST_DIR:-$HERE/tests}"/[0-9]*; do
	name=$(basename "$t")
	name=${name%.sh}
	if [ $# -gt 0 ]; then
		keep=0
		for pat in "$@"; do
			case $name in *"$pat"*) keep=1 ;; esac
		done
		[ $keep = 1 ] || continue
	fi
	for pat in ${XP_EXCLUDE:-}; do
		case $name in *"$pat"*) continue 2 ;; esac
	done
	n=$((n + 1))
	echo "xprobes-selftest: begin $name" > /dev/kmsg
	orphans0=" $(orphans | tr '\n' ' ') "
	out=/tmp/selftest-$name.out
	start=$(date +%s)
	( cd /tmp && timeout -s KILL "${XP_TEST_TIMEOUT:-600}" sh "$t" ) > "$out" 2>&1
	rc=$?
	why=$(tail -n 1 "$out")	# a skip's reason, before the audit's line below
	# The page-table invariants (module/views/tables.c) held through the test:
	# the module checks them at every change of a view, so a violation at
	# any point of the test shows here (and in the kernel log).
	if module_loaded && ! xprobectl audit --tables >> "$out" 2>&1; then
		echo "FAIL: page-table invariants violated during $name" >> "$out"
		case $rc in 0|4) rc=1 ;; esac
	fi
	secs=$(( $(date +%s) - start ))
	sed 's/^/# /' "$out"
	case $rc in
	0) echo "ok $n $name # ${secs}s" ;;
	4) echo "ok $n $name # SKIP $why" ;;
	*) echo "not ok $n $name # exit $rc after ${secs}s" ;;
	esac
	echo "xprobes-selftest: end $name rc=$rc" > /dev/kmsg
	# A test that failed half-way leaves its processes, views and tracing
	# behind: clear them, so the next test starts clean instead of failing
	# (or crawling) on this one's leftovers.
	if [ $rc != 0 ] && [ $rc != 4 ]; then
		for p in $(orphans); do
			case $orphans0 in *" $p "*) ;; *)
				c=$(cat /proc/$p/cmdline 2>/dev/null | tr '\0' ' ')
				kill -9 "$p" 2>/dev/null && echo "# cleanup: killed pid $p ($c) left by $name" ;;
			esac
		done
		for p in $(xprobectl view list 2>/dev/null | awk 'NR > 1 { print $1 }'); do
			xprobectl view del "$p" > /dev/null 2>&1 && echo "# cleanup: ended the view of pid $p left by $name"
		done
		reset_tracing
	fi
	# Leave the next test a loaded module, whatever this one did.
	lsmod | grep -q '^xprobes ' || insmod /xp/xprobes.ko
done
echo "xprobes-selftest: all done" > /dev/kmsg
