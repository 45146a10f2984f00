# trace (views mode), one scenario per cause of the original research: the
# injected off-CPU time lands in the right cause (>= 80%), ON+OFF = wall.
. /xp/selftests/tests/lib.sh
nullblk_setup 2
for sc in baseline work cpu lock io disk net; do
	trace_scenario /tmp/$sc $sc
	note "$sc: $(cat /tmp/$sc.err | tr '\n' ' ') traced xw_delay calls: $(fn /tmp/$sc.json xw_delay calls)"
	assert_eq "$sc mode" views "$(jsonq /tmp/$sc.json mode)"
	for f in xw_request xw_prepare xw_delay; do
		check_balance /tmp/$sc.json $f
	done
	assert_within "$sc: xw_delay wall vs the workload's clock" 10 \
		$(fn /tmp/$sc.json xw_delay wall_ns) $(truth /tmp/$sc.err delay_wall_ns)
done
# CPU-only functions are on CPU; more work shows as more ON-CPU time
for sc in baseline work; do
	assert_ge "$sc: xw_delay on-CPU >= 90% of wall" $(($(fn /tmp/$sc.json xw_delay on_cpu_ns) * 10)) \
		$(($(fn /tmp/$sc.json xw_delay wall_ns) * 9))
done
assert_ge "work: twice the CPU of baseline (>= 1.7x)" $(($(fn /tmp/work.json xw_delay on_cpu_ns) * 10)) \
	$(($(fn /tmp/baseline.json xw_delay on_cpu_ns) * 17))
check_cause /tmp/cpu.json xw_delay runq /tmp/cpu.err
check_cause /tmp/lock.json xw_delay lock /tmp/lock.err
check_cause /tmp/io.json xw_delay io /tmp/io.err
check_cause /tmp/disk.json xw_delay io /tmp/disk.err
check_cause /tmp/net.json xw_delay net /tmp/net.err
# a busy disk makes each request wait longer
assert_ge "disk: io wait per call >= 1.3x the quiet disk's" \
	$(($(fn /tmp/disk.json xw_delay off_cpu_ns_by_cause.io) * 10)) \
	$(($(fn /tmp/io.json xw_delay off_cpu_ns_by_cause.io) * 13))
# the spinning helper in "cpu" is pinned with us: xw_prepare also waits in runq
assert_ge "cpu: xw_prepare runq" $(fn /tmp/cpu.json xw_prepare off_cpu_ns_by_cause.runq) 1
