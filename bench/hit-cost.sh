# Experiment 2: what one hook hit costs the traced process itself.
# The target makes getppid() for D seconds (callrate -g: started, made the
# target, then let go) with a hook on __x64_sys_getppid under each of:
# none, view (the function's first instruction, a jump hook over push+call),
# view-call (its first instruction of 5 bytes or more, a call hook),
# view-int3 (that one kept an int3), view-tp (as view, the program reached
# through the xprobes_hook tracepoint instead of run by the hook itself),
# view-bare (as view, no BPF program: the mechanism alone), view-hc (as
# view, with the older hookcount program), view-kp (as view, the program a
# kprobe one, on the hook's registers, as xprobectl trace's are), in
# (global kprobe + PID test in BPF), fentry (global fentry + PID test). The
# view configurations run the very program body in and fentry run
# (pidfilter -m hook: PID test and two atomic adds). Cost of a hit =
# 1/rate - 1/rate of none in the same round; under -icount a guest
# nanosecond is one emulated instruction, so the cost reads as instructions
# per hit.
#   hit-cost.sh tp: the target makes kill(itself, an ignored signal), each
#   call passing signal:signal_generate, under none, tp-view (that
#   tracepoint hooked in its view) and tp-in (the same program on the global
#   tracepoint, PID test inside BPF); results in hit-cost-tp.json.
#   hit-cost.sh sys: the target makes getppid(), each call passing
#   raw_syscalls:sys_enter, under none, tp-view and tp-in as above (the
#   system call's slow path included: the hook flags the target's threads,
#   the global tracepoint every thread); results in hit-cost-sys.json.
. /xp/bench/lib.sh
ROUNDS=${ROUNDS:-7}
D=${D:-1}
export VIEW_BPF=hook
NAME=hit-cost
CALL=getppid
HOOKS=__x64_sys_getppid
case ${1:-} in
tp|sys)
	NAME=hit-cost-$1
	TP=raw_syscalls:sys_enter
	[ $1 = tp ] && CALL=kill TP=signal:signal_generate
	HOOKS=tracepoint:$TP
	CONFIGS=${CONFIGS:-"none tp-view tp-in"} ;;
*) CONFIGS=${CONFIGS:-"none view view-kp view-tp view-call view-int3 view-bare view-hc in fentry"} ;;
esac

start_target() {
	start_ready /tmp/rate.out callrate -g -d $D $CALL
	TARGET=$BG
}
# measure runs in a command substitution, a subshell that cannot 'wait' for
# the target: watch for its rate line instead.
measure() {
	kill -USR1 $TARGET
	wait_line /tmp/rate.out '^[0-9]' 60 && tail -n 1 /tmp/rate.out
}
PREPARE=start_target
rounds $NAME "$CONFIGS" $ROUNDS

echo "cost of one hit in the traced process ($CALL loop, hook on $HOOKS; $ROUNDS rounds)"
printf '%-8s %14s %16s %14s\n' config "calls/s" "ns per call" "ns per hit"
first=1
json="{\"experiment\":\"$NAME\",\"rounds\":$ROUNDS,\"hook\":\"$HOOKS\",\"results\":["
for c in $CONFIGS; do
	rate=$(awk -v c=$c '$2 == c { print $3 }' "$RAW" | median)
	costs=$(awk -v c=$c '{ v[$1 "," $2] = $3 } END { for (k in v) { split(k, p, ","); if (p[2] == c) print 1e9 / v[k] - 1e9 / v[p[1] ",none"] } }' "$RAW")
	cost=$(echo "$costs" | median) lo=$(echo "$costs" | minimum) hi=$(echo "$costs" | maximum)
	printf '%-8s %14.0f %16.1f %14.1f\n' $c $rate "$(awk -v r=$rate 'BEGIN { print 1e9 / r }')" $cost
	[ $first = 1 ] || json="$json,"
	first=0
	json="$json{\"config\":\"$c\",\"calls_per_s\":$rate,\"ns_per_hit\":$cost,\"ns_per_hit_min\":$lo,\"ns_per_hit_max\":$hi}"
done
echo "$json]}" > "$OUT/$NAME.json"
echo "results: $OUT/$NAME.json"
