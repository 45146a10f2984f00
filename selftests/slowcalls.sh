# slowcalls under an xprobectl command, and its slow-call lines counted:
# shared by selftests/tests/45-trace-latency.sh and 52-latency.sh (sourced,
# in the guest, after tests/lib.sh and nullblk_setup).

# The injected slow read: 30 ms, 100 ms on the debug kernel. There, beside
# a second VM, 12 of 13 30-ms reads were reported once; most likely its
# jitter had widened read's learned spread until the threshold neared 30 ms.
SLOW_MS=30
[ -n "$DEBUG_KERNEL" ] && SLOW_MS=100
SLOW_US=$((SLOW_MS * 800))	# a read that long was injected

# slow_start OUT ROUNDS STARTED XPROBECTL-ARGS...: start slowcalls gated
# (its pid in SC, its output in OUT.sc), then 'xprobectl ARGS... SC' into
# OUT.json and OUT.err (its pid in XP) until OUT.err matches STARTED.
slow_start() {
	local out=$1 rounds=$2 started=$3
	shift 3
	: > $out.sc
	slowcalls -g -n $rounds -e 100 -s $SLOW_MS -d /dev/nullb0 > $out.sc &
	SC=$!
	wait_for $out.sc '^ready' "slowcalls did not start"
	: > $out.err
	xprobectl "$@" $SC > $out.json 2> $out.err &
	XP=$!
	wait_for $out.err "$started" "xprobectl $1 did not start"
}

# slow_finish OUT: let slowcalls run to its end, stop xprobectl, reap both.
slow_finish() {
	local out=$1
	kill -USR1 $SC
	wait_for $out.sc '^truth' "slowcalls did not finish" 6000
	kill -INT $XP
	wait $XP || fail "xprobectl failed: $(cat $out.err)"
	kill $SC
	wait $SC 2> /dev/null
}

# slow_count OUT AWK-CONDITION: slow-call lines of OUT.json meeting it.
# Fields: tid, sys (syscall name), us (duration), fn (function, "-" when
# none); main is slowcalls' main thread.
slow_count() {
	awk -v main=$SC '
		/"type":"slow"/ {
			tid = $0; sub(/.*"tid":/, "", tid); sub(/,.*/, "", tid)
			sys = $0; sub(/.*"syscall":"/, "", sys); sub(/".*/, "", sys)
			us = $0; sub(/.*"duration_us":/, "", us); sub(/,.*/, "", us)
			fn = "-"
			if ($0 ~ /"function":"/) { fn = $0; sub(/.*"function":"/, "", fn); sub(/".*/, "", fn) }
			tid += 0; us += 0	# numbers, not strings, in the comparisons
			if ('"$2"') n++
		}
		END { print n + 0 }' $1.json
}
