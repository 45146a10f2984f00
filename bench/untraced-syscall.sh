# Experiment: what tracing process A costs an untraced process B.
#
# B makes getppid() in a loop for D seconds (callrate); A is an idle process
# that is the target of the tracing. Configurations, alternated round by round
# (the order rotates each round) so drifts hit all of them alike:
#   none    no tracing at all
#   view    A has an xprobes view with a hook on __x64_sys_getppid, and a
#           BPF program counts the hook's hits (raw tracepoint xprobes_hook)
#   kprobe  a global kprobe on __x64_sys_getppid whose BPF program tests the
#           PID (what bpftrace -p and bcc tools do)
#   fentry  the same with a global fentry program
# Reports B's rate per configuration as a ratio to 'none' in the same round:
# median and range over the rounds.
#
# Run under QEMU -icount (make bench does): guest time is the number of
# emulated instructions, so a rate is an instruction-cost measure, repeatable
# to about 0.01%, blind to host load, and blind to caches and TLBs. Guest time
# is shared by both vCPUs, so work the other vCPU does counts too: the guest
# settles (SETTLE seconds, free under sleep=off) before every sample, so
# deferred clean-up of the previous configuration (seen: ~4% for a second
# after a kprobe BPF program is detached) does not land on the next one.
. /xp/bench/lib.sh
ROUNDS=${ROUNDS:-7}
D=${D:-1}
SETTLE=${SETTLE:-3}
F=__x64_sys_getppid
CONFIGS="none view kprobe fentry"

sysloop -g -n 1 getppid > /tmp/A.out &
A=$!
wait_line /tmp/A.out ready

setup() {
	case $1 in
	view)
		xprobectl view add $A > /dev/null && xprobectl hook add $A $F > /dev/null || return 1
		hookcount > /tmp/helper.out &
		HELPER=$!
		wait_line /tmp/helper.out attached ;;
	kprobe|fentry)
		pidfilter -p $A -m $1 -f $F > /tmp/helper.out &
		HELPER=$!
		wait_line /tmp/helper.out attached ;;
	esac
}

teardown() {
	case $1 in
	view)
		kill $HELPER; wait $HELPER
		xprobectl view del $A ;;
	kprobe|fentry)
		kill $HELPER; wait $HELPER ;;
	esac
}

raw=$OUT/untraced-syscall.raw
: > "$raw"
r=1
while [ $r -le $ROUNDS ]; do
	# rotate the order each round
	order=$(echo $CONFIGS | awk -v r=$r '{ for (i = 0; i < NF; i++) printf "%s ", $(((i + r) % NF) + 1) }')
	for c in $order; do
		sleep $SETTLE
		setup $c || { echo "bench: cannot set up $c" >&2; exit 1; }
		sleep $SETTLE
		rate=$(callrate -d $D getppid)
		teardown $c
		echo "$r $c $rate" >> "$raw"
	done
	r=$((r + 1))
done
kill $A

json=$OUT/untraced-syscall.json
{
	echo "{\"experiment\":\"untraced-syscall\",\"rounds\":$ROUNDS,\"seconds\":$D,\"syscall\":\"getppid\",\"hook\":\"$F\",\"results\":["
	first=1
	for c in $CONFIGS; do
		rates=$(awk -v c=$c '$2 == c { print $3 }' "$raw")
		ratios=$(awk -v c=$c '{ rate[$1 "," $2] = $3 } END { for (k in rate) { split(k, p, ","); if (p[2] == c) print rate[k] / rate[p[1] ",none"] } }' "$raw")
		[ $first = 1 ] || echo ","
		first=0
		printf '{"config":"%s","median_calls_per_s":%s,"ratio_median":%s,"ratio_min":%s,"ratio_max":%s}' \
			$c "$(echo "$rates" | median)" "$(echo "$ratios" | median)" \
			"$(echo "$ratios" | minimum)" "$(echo "$ratios" | maximum)"
	done
	echo "]}"
} > "$json"

echo "untraced process B: getppid() rate while idle process A is traced ($ROUNDS rounds x ${D}s, alternated)"
printf '%-8s %14s %10s %18s\n' config "B calls/s" "ratio" "ratio range"
sed 's/},{/}\n{/g' "$json" | sed -n 's/.*"config":"\([^"]*\)","median_calls_per_s":\([^,]*\),"ratio_median":\([^,]*\),"ratio_min":\([^,]*\),"ratio_max":\([^}]*\)}.*/\1 \2 \3 \4 \5/p' |
	while read -r c rate med lo hi; do
		printf '%-8s %14.0f %10.4f %8.4f - %.4f\n' $c $rate $med $lo $hi
	done
echo "results: $json"
