# Experiment 5: attribution accuracy, one table. Each scenario of the
# workload program injects a known amount of one kind of time into
# xw_delay() (selftests/progs/workload.c); xprobectl trace reports how
# xw_delay's wall time splits into ON-CPU and OFF-CPU by cause. Per scenario
# and mode (views, fallback), against the workload's own clocks around the
# calls (CLOCK_MONOTONIC and the thread's CPU clock, nothing from the
# tracer): wall vs traced wall; for a CPU scenario, CPU time vs traced ON;
# for the others, wall minus CPU (the injected off-CPU time) vs the time
# traced in the expected cause; and that cause's share of all traced
# off-CPU time (of the wall, for CPU scenarios).
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
printf '%-9s %-8s %-6s %10s %10s %6s %10s %10s %6s %6s\n' scenario mode cause \
	clock_ms traced_ms err% truth_ms cause_ms err% share%
first=1
for sc in baseline work cpu lock io disk net sleep; do
	for mode in views fallback; do
		opt=
		[ $mode = fallback ] && opt=--no-views
		xprobectl trace --json -f 'xw_*' $opt -- workload $sc -n $N -t $MS -d /dev/nullb0 \
			> /tmp/attr.json 2> /tmp/attr.err || { echo "bench: trace $sc ($mode) failed: $(tail -n 1 /tmp/attr.err)"; continue; }
		cause=$(expected $sc)
		clock=$(truth /tmp/attr.err delay_wall_ns)
		clock_in=$(truth /tmp/attr.err delay_in_ns)
		cpu=$(truth /tmp/attr.err delay_cpu_ns)
		wall=$(fn /tmp/attr.json xw_delay wall_ns)
		on=$(fn /tmp/attr.json xw_delay on_cpu_ns)
		off=$(fn /tmp/attr.json xw_delay off_cpu_ns)
		if [ $cause = on ]; then
			inj=$cpu got=$on whole=$wall
		else
			inj=$((clock - cpu)) got=$(fn /tmp/attr.json xw_delay off_cpu_ns_by_cause.$cause) whole=$off
		fi
		share=$(awk -v g=$got -v w=$whole 'BEGIN { printf "%.1f", w ? 100 * g / w : 0 }')
		awk -v sc=$sc -v m=$mode -v c=$cause -v clock=$clock -v wall=$wall -v inj=$inj -v got=$got -v share=$share '
			function pct(a, b) { return b ? 100 * (a - b) / b : 0 }
			BEGIN { printf "%-9s %-8s %-6s %10.1f %10.1f %6.1f %10.1f %10.1f %6.1f %6s\n", sc, m, c,
				clock / 1e6, wall / 1e6, pct(wall, clock), inj / 1e6, got / 1e6, pct(got, inj), share }'
		[ $first = 1 ] || printf ',' >> "$J"
		first=0
		printf '{"scenario":"%s","mode":"%s","cause":"%s","clock_ns":%s,"clock_in_ns":%s,"cpu_clock_ns":%s,"wall_ns":%s,"on_ns":%s,"off_ns":%s,"injected_ns":%s,"in_cause_ns":%s,"share_pct":%s}' \
			$sc $mode $cause $clock $clock_in $cpu $wall $on $off $inj $got $share >> "$J"
	done
done
echo "]}" >> "$J"
echo "xw_delay over $N calls of $MS ms; clock, truth: the workload's own clocks (wall; CPU for 'on', wall - CPU otherwise)"
echo "results: $J"
