# trace (views mode), one scenario per cause of the original research: the
# injected off-CPU time lands in the right cause (>= 80%; >= 90% for the
# kernel-internal causes of issue 20), ON+OFF = wall.
# User functions through xprobes user hooks (the default in views mode);
# the lock scenario once more with --uprobes. With -W (wakers): who ended
# each wait, a thread of ours in a named function or "outside".
. /xp/selftests/tests/lib.sh
nullblk_setup 2
for sc in baseline work cpu lock io disk net pipe wakeup; do
	trace_scenario /tmp/$sc $sc -W
	note "$sc: $(cat /tmp/$sc.err | tr '\n' ' ') traced xw_delay calls: $(fn /tmp/$sc.json xw_delay calls)"
	assert_eq "$sc mode" views "$(jsonq /tmp/$sc.json mode)"
	for f in xw_request xw_prepare xw_delay; do
		check_balance /tmp/$sc.json $f
		assert_eq "$sc: $f through a user hook" uhook "$(fn /tmp/$sc.json $f probe)"
	done
	assert_eq "$sc: xw_delay calls" 6 "$(fn /tmp/$sc.json xw_delay calls)"
	check_wall /tmp/$sc.json xw_delay /tmp/$sc.err
done
# CPU-only functions are on CPU (or preempted); more work shows as more
# ON-CPU time
for sc in baseline work; do
	check_spin /tmp/$sc.json xw_delay
done
# work spins twice as long as baseline: the extra ON-CPU time we saw is the
# extra CPU time the workload measured (the probes' own cost, the same in
# both, cancels out). Interrupts on the thread's CPU count as ON-CPU for
# trace (it was not switched out) but not in the thread's CPU clock (IRQ
# time accounting): once, on 6.1/pti-global, baseline's 120 ms of CPU took
# 469 ms inside the calls, all of it ON-CPU. So the difference lies within
# 20% of the CPU clocks' difference or of the wall-inside-the-calls one,
# which are the same on a quiet machine.
on_d=$(($(fn /tmp/work.json xw_delay on_cpu_ns) - $(fn /tmp/baseline.json xw_delay on_cpu_ns)))
cpu_d=$(($(truth /tmp/work.err delay_cpu_ns) - $(truth /tmp/baseline.err delay_cpu_ns)))
in_d=$(($(truth /tmp/work.err delay_in_ns) - $(truth /tmp/baseline.err delay_in_ns)))
note "work - baseline: ON-CPU $on_d ns, CPU clocks $cpu_d ns, wall inside $in_d ns"
lo=$cpu_d hi=$in_d
[ $lo -le $hi ] || { lo=$in_d hi=$cpu_d; }
assert_ge "work - baseline ON-CPU >= 80% of the lower of the CPU clocks' and the wall's" \
	$((on_d * 100)) $((lo < 0 ? lo * 120 : lo * 80))
assert_ge "work - baseline ON-CPU <= 120% of the higher" \
	$((hi < 0 ? hi * 80 : hi * 120)) $((on_d * 100))
check_cause /tmp/cpu.json xw_delay runq /tmp/cpu.err
check_cause /tmp/lock.json xw_delay lock /tmp/lock.err
check_cause /tmp/io.json xw_delay io /tmp/io.err
check_cause /tmp/disk.json xw_delay io /tmp/disk.err
check_cause /tmp/net.json xw_delay net /tmp/net.err
check_cause /tmp/pipe.json xw_delay net /tmp/pipe.err
check_wakeup /tmp/wakeup.json xw_delay /tmp/wakeup.err
# wakers: the lock holder's xw_hold, the server thread's xw_reply; the pipe's
# other process and the sleep's timer are outside the process (not seen)
check_waker /tmp/lock.json xw_delay thread xw_hold /tmp/lock.err
check_waker /tmp/net.json xw_delay thread xw_reply /tmp/net.err
check_waker /tmp/pipe.json xw_delay outside - /tmp/pipe.err
check_waker /tmp/wakeup.json xw_delay outside - /tmp/wakeup.err
# a CPU cgroup with 25% of a CPU: 20 ms of CPU per call take about 80
quota_setup /sys/fs/cgroup/xwq 5000 20000
XW_MS=10 XW_CG=/sys/fs/cgroup/xwq trace_scenario /tmp/quota quota -W
note "quota: $(cat /tmp/quota.err | tr '\n' ' ')"
check_balance /tmp/quota.json xw_delay
check_throttled /tmp/quota.json xw_delay /tmp/quota.err
# causes from inside the kernel: major faults on a dropped page cache (io),
# an inode's rwsem held by a thread of ours in xw_khold (lock, woken by
# it), memory.high (mem); the bar: 90%
trace_scenario /tmp/fault fault -W
note "fault: $(cat /tmp/fault.err | tr '\n' ' ')"
# How many pages fit in MS depends on the disk's speed; that each touch was
# a major fault does not (MADV_RANDOM, the cache dropped): 9 in 10 at least.
_pg=$(truth /tmp/fault.err pages)
assert_ge "fault: pages touched (one a call at least)" "$_pg" "${XW_N:-6}"
assert_ge "fault: major faults (one a page touched)" "$(($(truth /tmp/fault.err faults) * 10))" "$((_pg * 9))"
check_balance /tmp/fault.json xw_delay
check_cause /tmp/fault.json xw_delay io /tmp/fault.err 90
trace_scenario /tmp/klock klock -W
note "klock: $(cat /tmp/klock.err | tr '\n' ' ')"
check_balance /tmp/klock.json xw_delay
check_cause /tmp/klock.json xw_delay lock /tmp/klock.err 90
check_waker /tmp/klock.json xw_delay thread xw_khold /tmp/klock.err
mem_setup /sys/fs/cgroup/xwm 32M
XW_CG=/sys/fs/cgroup/xwm trace_scenario /tmp/mem mem -W
note "mem: $(cat /tmp/mem.err | tr '\n' ' ')"
check_balance /tmp/mem.json xw_delay
check_mem /tmp/mem.json xw_delay /tmp/mem.err
trace_scenario /tmp/lock-up lock --uprobes -W
assert_eq "--uprobes: xw_delay through a uprobe" uprobe "$(fn /tmp/lock-up.json xw_delay probe)"
assert_eq "--uprobes: xw_delay calls" 6 "$(fn /tmp/lock-up.json xw_delay calls)"
check_balance /tmp/lock-up.json xw_delay
check_cause /tmp/lock-up.json xw_delay lock /tmp/lock-up.err
check_waker /tmp/lock-up.json xw_delay thread xw_hold /tmp/lock-up.err
# --children: the view follows a server's forks (its hook on
# wake_up_new_task enters each new process); per process and combined,
# each worker's sleeps seen through the view's switch hooks
# The earlier scenarios' probes are gone first (trace_scenario waits for
# them before a --children session): behind their detach, the children's
# probes came in after the workers' calls on 6.1-rt (every run there on
# 2026-11-29; the test then skipped this scenario on that kernel).
# The workers start their calls once xprobectl says both have their probes
# (XW_GO): a child's calls before that are not counted, by design, and
# 300 ms were not always enough on 6.1 (one worker counted 4 of 6 in CI,
# 2026-11-30, pti-global); how late they came is the report's.
XW_GO=2 trace_scenario /tmp/fork fork --children -W -v
note "fork: $(grep -v '^libbpf: ' /tmp/fork.err | tr '\n' ' ')"
assert_eq "fork mode" views "$(jsonq /tmp/fork.json mode)"
assert_eq "--children: xw_delay through uprobes" uprobe "$(fn /tmp/fork.json xw_delay probe)"
check_children /tmp/fork.json /tmp/fork.err
# a busy disk makes each request wait longer, and trace sees by how much:
# per write, the time trace has xw_delay off the CPU other than waiting
# for one (runq, wakeup, throttled: mostly io, which check_cause above
# asserts) follows the workload's own waits (the wall of its writes less
# the thread's CPU clock and its run delay across them, from schedstat,
# all read inside xw_delay: io_*_ns) on the quiet and the busy disk alike,
# within 20%. How much longer the busy disk made them is the scheduler's
# and the disk's business (3 to 40 times usually; 1.2 times once on 6.1-rt
# in CI, 2026-12-04, which failed the fixed 1.3x bar this check had).
# Until 2026-12-07 it compared trace's io alone with a run delay read
# around the calls, where a preemption at the system calls before a call
# counted against the writes' waits: it failed twice (traced 8.2 against
# 6.5 ms, 10.2 against 7.7), and four loaded runs at once reproduced it
# (3.07 against 2.37, +29%). io alone would also leave out any other wait
# of the writes (a lock in the file system; in the runs looked at, trace's
# blocked time was its io). Each measure is noted below.
per_write() { echo $(($2 / $(truth /tmp/$1.err writes))); }
blocked_per_write() {
	per_write $1 $(($(fn /tmp/$1.json xw_delay off_cpu_ns) -
		$(fn /tmp/$1.json xw_delay off_cpu_ns_by_cause.runq) -
		$(fn /tmp/$1.json xw_delay off_cpu_ns_by_cause.wakeup) -
		$(fn /tmp/$1.json xw_delay off_cpu_ns_by_cause.throttled)))
}
off_per_write() {
	per_write $1 $(($(truth /tmp/$1.err io_in_ns) - $(truth /tmp/$1.err io_cpu_ns) -
		$(truth /tmp/$1.err io_rundelay_ns)))
}
around_per_write() {
	per_write $1 $(($(truth /tmp/$1.err delay_in_ns) - $(truth /tmp/$1.err delay_cpu_ns) -
		$(truth /tmp/$1.err delay_rundelay_wall_ns)))
}
for sc in io disk; do
	_w=$(blocked_per_write $sc) _t=$(off_per_write $sc)
	note "$sc: a write's waits: traced $_w ns ($(per_write $sc $(fn /tmp/$sc.json xw_delay off_cpu_ns_by_cause.io)) of it io), the workload's $_t ns ($(around_per_write $sc) by the run delay around the calls)"
	# the whole of both sides, for a run where they part (a starved guest: ci.md, stop 80)
	note "$sc: xw_delay traced on $(fn /tmp/$sc.json xw_delay on_cpu_ns) off $(fn /tmp/$sc.json xw_delay off_cpu_ns) runq $(fn /tmp/$sc.json xw_delay off_cpu_ns_by_cause.runq) wakeup $(fn /tmp/$sc.json xw_delay off_cpu_ns_by_cause.wakeup); the writes' wall $(truth /tmp/$sc.err io_in_ns) cpu $(truth /tmp/$sc.err io_cpu_ns) run delay $(truth /tmp/$sc.err io_rundelay_ns), xw_delay's wall $(truth /tmp/$sc.err delay_in_ns) cpu around $(truth /tmp/$sc.err delay_cpu_ns)"
	assert_within "$sc: waits per write vs the workload's waits per write" 20 $_w $_t
done
# the spinning helper in "cpu" is pinned with us: xw_prepare (6 x 5 ms of
# CPU) usually waits in runq too, and whatever it waits is runq. Whether the
# scheduler preempts it at all is the scheduler's choice: once, with two
# guests side by side on a loaded host, it ran all 6 calls unpreempted
# (wall = its CPU time), so the wait itself is not asserted.
off=$(fn /tmp/cpu.json xw_prepare off_cpu_ns)
note "cpu: xw_prepare off-CPU $off ns, runq $(fn /tmp/cpu.json xw_prepare off_cpu_ns_by_cause.runq) ns"
[ $off -lt 1000000 ] ||
	assert_ge "cpu: xw_prepare's off-CPU time is runq (90%)" \
		$(($(fn /tmp/cpu.json xw_prepare off_cpu_ns_by_cause.runq) * 10)) $((off * 9))
