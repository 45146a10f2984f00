#!/bin/bash
# Host side of 'make check': boot the VM once for the whole guest suite, then
# check the harness itself, then print the summary line
#   N passed, N failed, N skipped
# Fails on any failed test and on any kernel splat in the guest's log.
set -u
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(readlink -f "$HERE/..")
BUILD=${XP_BUILD:-$TOP/build}
OUT=$BUILD/check
mkdir -p "$OUT"
RUNVM=$HERE/vm/run-vm.sh

pass=0 fail=0 skip=0 n=0
tap=$OUT/tap.txt
: > "$tap"

record() {	# record STATUS(ok|not ok|skip) NAME [COMMENT]
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); line="ok $n $2${3:+ # $3}" ;;
	skip) skip=$((skip + 1)); line="ok $n $2 # SKIP ${3:-}" ;;
	*) fail=$((fail + 1)); line="not ok $n $2${3:+ # $3}" ;;
	esac
	echo "$line" | tee -a "$tap"
}

# 1. The guest suites, one boot each; their TAP lines are renumbered into ours.
#    The main one runs every test on the default machine (5-level paging, no
#    PTI under TCG); the second runs the view tests on a 4-level machine with
#    PTI forced on, the shape of most real servers.
guest_suite() {	# guest_suite NAME TESTS RUN-VM-OPTIONS...
	local name=$1 tests=$2 log=$OUT/console-$1.log line vm_rc
	shift 2
	echo "# guest suite '$name' (console log: $log)"
	bash "$RUNVM" --timeout "${XP_CHECK_TIMEOUT:-2400}" --log "$log" --no-splat-check "$@" \
		-- "sh /xp/selftests/run.sh $tests" > "$OUT/guest-$name.txt" 2> "$OUT/guest-$name.err" &
	vpid=$!
	tail -n +1 -s 0.5 -f --pid=$vpid "$OUT/guest-$name.txt" | grep --line-buffered '^#' &
	wait $vpid
	vm_rc=$?
	sleep 0.6
	while IFS= read -r line; do
		tname=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ ([^ ]+).*/\2/')
		[ "$name" = main ] || tname="$tname[$name]"
		case $line in
		"ok "*"# SKIP"*) record skip "$tname" "$(echo "$line" | sed 's/.*# SKIP *//')" ;;
		"ok "*) record ok "$tname" "$(echo "$line" | sed -n 's/.*# //p')" ;;
		"not ok "*) record "not ok" "$tname" "$(echo "$line" | sed -n 's/.*# //p')" ;;
		esac
	done < "$OUT/guest-$name.txt"
	if [ $vm_rc != 0 ]; then
		cat "$OUT/guest-$name.err"
		record "not ok" "guest-suite-completed[$name]" "VM exited $vm_rc"
	else
		record ok "guest-suite-completed[$name]"
	fi
	logs="$logs $log"
}

start=$SECONDS
logs=
echo "TAP version 13"
echo "# kernel $(readlink "$BUILD/kernel/current")"
# 0. Host side: our x86 decoder agrees with objdump on every instruction of
#    the target kernel's text (the module trusts it to displace instructions).
host_insn_check() {
	local dir=$BUILD/host vml
	mkdir -p "$dir"
	vml=$dir/vmlinux
	[ -s "$vml" ] && [ "$vml" -nt "$BUILD/kernel/current/vmlinuz" ] ||
		bash "$HERE/host/extract-vmlinux.sh" "$BUILD/kernel/current/vmlinuz" > "$vml" || return 1
	${CC:-cc} -O2 -o "$dir/insn-check" "$HERE/host/insn-check.c" "$TOP/module/insn.c" || return 1
	objdump -d -w --section=.text "$vml" | "$dir/insn-check"
}
if out=$(host_insn_check 2>&1); then
	echo "# $out"
	record ok host-insn-decoder
else
	echo "$out" | tail -n 25 | sed 's/^/# /'
	record "not ok" host-insn-decoder
fi

guest_suite main "${XP_TESTS:-}"
if [ -z "${XP_TESTS:-}" ] || [ -n "${XP_TESTS_4L:-}" ]; then
	guest_suite 4level-pti "${XP_TESTS_4L:-view-hits view-peek view-structure view-rmmod view-bpf view-refusals view-dispatch life-fork life-exec life-exit coh-self coh-static trace-views trace-causes}" --cpu max,la57=off --append pti=on
fi

# 2. No kernel splat anywhere in the guests' logs.
for log in $logs; do
	lname=$(basename "$log" .log)
	if splats=$(bash "$HERE/vm/splat.sh" "$log"); then
		record ok "kernel-log-clean[${lname#console-}]"
	else
		echo "$splats" | sed 's/^/# /'
		record "not ok" "kernel-log-clean[${lname#console-}]" "see $log"
	fi
done

# 3. The harness notices a splat: a WARNING written to the kernel log must fail a run.
bash "$RUNVM" --timeout 120 --log "$OUT/splat-selftest.log" --no-module \
	-- 'echo "WARNING: CPU: 0 PID: 1 at xprobes-harness-selftest" > /dev/kmsg' \
	> "$OUT/splat-selftest.txt" 2>&1
rc=$?
if [ $rc = 125 ] && grep -q 'splat \[boot\]: .*xprobes-harness-selftest' "$OUT/splat-selftest.txt"; then
	record ok harness-detects-splat
else
	sed 's/^/# /' "$OUT/splat-selftest.txt"
	record "not ok" harness-detects-splat "run-vm exited $rc, expected 125"
fi

# 4. The harness reports a failing guest command's exit status.
bash "$RUNVM" --timeout 120 --log "$OUT/status-selftest.log" --no-module -- 'exit 7' \
	> "$OUT/status-selftest.txt" 2>&1
rc=$?
if [ $rc = 7 ]; then record ok harness-reports-status; else record "not ok" harness-reports-status "got $rc"; fi

echo "1..$n"
echo "# make check took $((SECONDS - start))s; TAP in $tap"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
