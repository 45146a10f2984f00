# Experiment 5: attribution accuracy, one table. Each scenario of the
# workload program injects a known amount of one kind of time into
# xw_delay() (selftests/progs/workload.c); xprobectl trace reports how
# xw_delay's wall time splits into ON-CPU and OFF-CPU by cause. Per scenario
# and mode (views, fallback): the workload's own clock around xw_delay vs
# the traced wall time, the off-CPU time the scenario injected (its clock
# minus the traced ON-CPU time) vs what landed in the expected cause, and
# the share of all off-CPU time that cause got.
. /xp/bench/lib.sh
. /xp/selftests/tests/lib.sh
N=${ATTR_N:-20}
MS=${ATTR_MS:-20}
nullblk_setup 2

expected() {
	case $1 in
	baseline|work) echo on ;;
	cpu) echo runq ;;
	lock) echo lock ;;
	io|disk) echo io ;;
	net) echo net ;;
	sleep) echo sleep ;;
	esac
}

J=$OUT/attribution.json
printf '{"experiment":"attribution","calls":%d,"ms":%d,"results":[' $N $MS > "$J"
printf '%-9s %-8s %-6s %12s %12s %7s %12s %12s %7s %7s\n' scenario mode cause \
	clock_ms traced_ms err% injected_ms in_cause_ms err% share%
first=1
for sc in baseline work cpu lock io disk net sleep; do
	for mode in views fallback; do
		opt=
		[ $mode = fallback ] && opt=--no-views
		xprobectl trace --json -f 'xw_*' $opt -- workload $sc -n $N -t $MS -d /dev/nullb0 \
			> /tmp/attr.json 2> /tmp/attr.err || { echo "bench: trace $sc ($mode) failed: $(tail -n 1 /tmp/attr.err)"; continue; }
		cause=$(expected $sc)
		clock=$(truth /tmp/attr.err delay_wall_ns)
		wall=$(fn /tmp/attr.json xw_delay wall_ns)
		on=$(fn /tmp/attr.json xw_delay on_cpu_ns)
		off=$(fn /tmp/attr.json xw_delay off_cpu_ns)
		if [ $cause = on ]; then
			inj=$clock got=$on
		else
			inj=$((clock - on)) got=$(fn /tmp/attr.json xw_delay off_cpu_ns_by_cause.$cause)
		fi
		share=$(awk -v g=$got -v o=$off -v c=$cause 'BEGIN { d = (c == "on") ? g + o : o; printf "%.1f", d ? 100 * g / d : 0 }')
		err_wall=$(awk -v a=$wall -v b=$clock 'BEGIN { printf "%.1f", b ? 100 * (a - b) / b : 0 }')
		err_cause=$(awk -v a=$got -v b=$inj 'BEGIN { printf "%.1f", b ? 100 * (a - b) / b : 0 }')
		printf '%-9s %-8s %-6s %12.1f %12.1f %7s %12.1f %12.1f %7s %7s\n' $sc $mode $cause \
			$(awk -v v=$clock 'BEGIN { print v / 1e6 }') $(awk -v v=$wall 'BEGIN { print v / 1e6 }') $err_wall \
			$(awk -v v=$inj 'BEGIN { print v / 1e6 }') $(awk -v v=$got 'BEGIN { print v / 1e6 }') $err_cause $share
		[ $first = 1 ] || printf ',' >> "$J"
		first=0
		printf '{"scenario":"%s","mode":"%s","cause":"%s","clock_ns":%s,"wall_ns":%s,"on_ns":%s,"off_ns":%s,"injected_ns":%s,"in_cause_ns":%s,"share_pct":%s}' \
			$sc $mode $cause $clock $wall $on $off $inj $got $share >> "$J"
	done
done
echo "]}" >> "$J"
echo "on/off-CPU of xw_delay over $N calls of $MS ms; clock: the workload's own clock around the call"
echo "results: $J"
