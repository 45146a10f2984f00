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

start=$SECONDS
echo "TAP version 13"
echo "# guest suite: booting $(readlink "$BUILD/kernel/current") (console log: $OUT/console.log)"

# 1. The guest suite, one boot. Its TAP lines are renumbered into ours.
bash "$RUNVM" --timeout "${XP_CHECK_TIMEOUT:-2400}" --log "$OUT/console.log" --no-splat-check \
	-- "sh /xp/selftests/run.sh ${XP_TESTS:-}" > "$OUT/guest.txt" 2> "$OUT/guest.err" &
vpid=$!
tail -n +1 -s 0.5 -f --pid=$vpid "$OUT/guest.txt" | grep --line-buffered '^#' &
wait $vpid
vm_rc=$?
sleep 0.6
while IFS= read -r line; do
	case $line in
	"ok "*"# SKIP"*)
		name=$(echo "$line" | sed -E 's/^ok [0-9]+ ([^ ]+).*/\1/')
		record skip "$name" "$(echo "$line" | sed 's/.*# SKIP *//')" ;;
	"ok "*)
		name=$(echo "$line" | sed -E 's/^ok [0-9]+ ([^ ]+).*/\1/')
		record ok "$name" "$(echo "$line" | sed -n 's/.*# //p')" ;;
	"not ok "*)
		name=$(echo "$line" | sed -E 's/^not ok [0-9]+ ([^ ]+).*/\1/')
		record "not ok" "$name" "$(echo "$line" | sed -n 's/.*# //p')" ;;
	esac
done < "$OUT/guest.txt"
if [ $vm_rc != 0 ]; then
	cat "$OUT/guest.err"
	record "not ok" guest-suite-completed "VM exited $vm_rc"
else
	record ok guest-suite-completed
fi

# 2. No kernel splat anywhere in the guest's log.
if splats=$(bash "$HERE/vm/splat.sh" "$OUT/console.log"); then
	record ok kernel-log-clean
else
	echo "$splats" | sed 's/^/# /'
	record "not ok" kernel-log-clean "see $OUT/console.log"
fi

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
