# Experiment 7: what one traced call of a user function costs the process
# (issue 19). callrate calls cr_fn (push rbp; mov rsp,rbp; lea; pop; ret)
# for D seconds, started, made the target, then let go, under:
#   none          no tracing
#   uhook         an xprobes user hook with events on cr_fn (a jump into a
#                 trampoline whose syscall only the process's view
#                 intercepts), an empty BPF program on xprobes_uhook
#   uhook-ret     the same with --returns and an empty program on
#                 xprobes_uhook_ret too (a return thunk per call)
#   urec          an xprobes user hook with records on cr_fn (the trampoline
#                 appends a record to its CPU's buffer under rseq; the view
#                 hands the records over at switches, exits and full
#                 buffers), an empty program on xprobes_urecs (per batch)
#   urec-ret      the same with --returns (a return thunk appends a record)
#   uprobe        a uprobe on cr_fn with an empty BPF program
#   uprobe-ret    a uprobe and a uretprobe, empty programs
#   uhook-bare    a user hook without events: the jump and trampoline alone
#   trace1        xprobectl trace -f cr_fn: records and returns, replayed
#                 into trace's per-function statistics (the user hooks'
#                 whole cost to a traced process, less the scheduler side,
#                 which this loop rarely reaches)
#   trace1-events, trace1-uprobes   the same on events, on uprobes
#   trace2        xprobectl trace -f 'cr_*': cr_fn's calls nested in its
#                 traced caller cr_batch (256 a call), so the process sums
#                 them itself (XPROBES_F_SUMS): no record handed over a call
#   trace2-nosums the same with XPROBECTL_NO_SUMS=1 (every call a record)
# Cost of a call = 1/rate - 1/rate of none in the same round; under -icount
# a guest nanosecond is one emulated instruction, so it reads as
# instructions per call (per entry+return pair for the -ret rows).
. /xp/bench/lib.sh
ROUNDS=${ROUNDS:-7}
D=${D:-1}
CONFIGS=${CONFIGS:-"none uhook uhook-ret urec urec-ret uprobe uprobe-ret uhook-bare trace1 trace1-events trace1-uprobes"}
UFUNC=cr_fn
BIN=$(command -v callrate)

start_target() {
	start_ready /tmp/rate.out callrate -g -d $D fn
	TARGET=$BG
}
measure() {
	kill -USR1 $TARGET
	wait_line /tmp/rate.out '^[0-9]' 60 && tail -n 1 /tmp/rate.out
}
PREPARE=start_target
rounds ucall-cost "$CONFIGS" $ROUNDS

echo "cost of one traced call of a user function (cr_fn loop; $ROUNDS rounds)"
printf '%-11s %14s %16s %14s\n' config "calls/s" "ns per call" "ns per hit"
first=1
json="{\"experiment\":\"ucall-cost\",\"rounds\":$ROUNDS,\"results\":["
for c in $CONFIGS; do
	rate=$(awk -v c=$c '$2 == c { print $3 }' "$RAW" | median)
	costs=$(awk -v c=$c '{ v[$1 "," $2] = $3 } END { for (k in v) { split(k, p, ","); if (p[2] == c) print 1e9 / v[k] - 1e9 / v[p[1] ",none"] } }' "$RAW")
	cost=$(echo "$costs" | median) lo=$(echo "$costs" | minimum) hi=$(echo "$costs" | maximum)
	printf '%-11s %14.0f %16.1f %14.1f\n' $c $rate "$(awk -v r=$rate 'BEGIN { print 1e9 / r }')" $cost
	[ $first = 1 ] || json="$json,"
	first=0
	json="$json{\"config\":\"$c\",\"calls_per_s\":$rate,\"ns_per_hit\":$cost,\"ns_per_hit_min\":$lo,\"ns_per_hit_max\":$hi}"
done
echo "$json]}" > "$OUT/ucall-cost.json"
echo "results: $OUT/ucall-cost.json"
