# trace in fallback mode (global sched_switch with a PID test): with
# --no-views, with the module unloaded, and with a module that cannot make
# views. Same causes as in views mode.
. /xp/selftests/tests/lib.sh
nullblk_setup 2
for sc in sleep cpu lock io net pipe wakeup; do
	trace_scenario /tmp/fb-$sc $sc --no-views -W
	note "$sc: $(cat /tmp/fb-$sc.err | tr '\n' ' ') traced xw_delay calls: $(fn /tmp/fb-$sc.json xw_delay calls)"
	assert_eq "$sc mode" fallback "$(jsonq /tmp/fb-$sc.json mode)"
	assert_eq "$sc: xw_delay through a uprobe" uprobe "$(fn /tmp/fb-$sc.json xw_delay probe)"
	for f in xw_request xw_prepare xw_delay; do
		check_balance /tmp/fb-$sc.json $f
	done
	assert_eq "$sc: xw_delay calls" 6 "$(fn /tmp/fb-$sc.json xw_delay calls)"
	check_wall /tmp/fb-$sc.json xw_delay /tmp/fb-$sc.err
done
check_cause /tmp/fb-sleep.json xw_delay sleep /tmp/fb-sleep.err
check_cause /tmp/fb-cpu.json xw_delay runq /tmp/fb-cpu.err
check_cause /tmp/fb-lock.json xw_delay lock /tmp/fb-lock.err
check_cause /tmp/fb-io.json xw_delay io /tmp/fb-io.err
check_cause /tmp/fb-net.json xw_delay net /tmp/fb-net.err
check_cause /tmp/fb-pipe.json xw_delay net /tmp/fb-pipe.err
check_wakeup /tmp/fb-wakeup.json xw_delay /tmp/fb-wakeup.err
# wakers, named in fallback mode: threads of ours by function, another
# process by pid, a timer as a timer
check_waker /tmp/fb-lock.json xw_delay thread xw_hold /tmp/fb-lock.err
check_waker /tmp/fb-net.json xw_delay thread xw_reply /tmp/fb-net.err
check_waker /tmp/fb-pipe.json xw_delay task - /tmp/fb-pipe.err
check_waker /tmp/fb-sleep.json xw_delay timer - /tmp/fb-sleep.err
check_waker /tmp/fb-wakeup.json xw_delay timer - /tmp/fb-wakeup.err
quota_setup /sys/fs/cgroup/xwq 5000 20000
XW_MS=10 XW_CG=/sys/fs/cgroup/xwq trace_scenario /tmp/fb-quota quota --no-views
note "quota: $(cat /tmp/fb-quota.err | tr '\n' ' ')"
check_balance /tmp/fb-quota.json xw_delay
check_throttled /tmp/fb-quota.json xw_delay /tmp/fb-quota.err
trace_scenario /tmp/fb-fault fault --no-views
note "fault: $(cat /tmp/fb-fault.err | tr '\n' ' ')"
check_cause /tmp/fb-fault.json xw_delay io /tmp/fb-fault.err 90
trace_scenario /tmp/fb-klock klock --no-views -W
note "klock: $(cat /tmp/fb-klock.err | tr '\n' ' ')"
check_cause /tmp/fb-klock.json xw_delay lock /tmp/fb-klock.err 90
check_waker /tmp/fb-klock.json xw_delay thread xw_khold /tmp/fb-klock.err
mem_setup /sys/fs/cgroup/xwm 32M
XW_CG=/sys/fs/cgroup/xwm trace_scenario /tmp/fb-mem mem --no-views
note "mem: $(cat /tmp/fb-mem.err | tr '\n' ' ')"
check_mem /tmp/fb-mem.json xw_delay /tmp/fb-mem.err
# --children: a server and the 2 workers it forks, per process and combined
# (the workers start once xprobectl has attached their probes: XW_GO)
XW_GO=2 trace_scenario /tmp/fb-fork fork --no-views --children -v
note "fork: $(grep -v '^libbpf: ' /tmp/fb-fork.err | tr '\n' ' ')"
check_children /tmp/fb-fork.json /tmp/fb-fork.err
assert_eq "no view was made" "" "$(xprobectl view list | sed 1d)"

# Without the module: fallback on its own, said in the report and on stderr.
unload_module
trace_scenario /tmp/nomod sleep
load_module
assert_eq "mode without the module" fallback "$(jsonq /tmp/nomod.json mode)"
assert_match "the report says why" "module not loaded" "$(jsonq /tmp/nomod.json mode_note)"
check_cause /tmp/nomod.json xw_delay sleep /tmp/nomod.err

# A module that cannot make views (an unverified kernel, a missing symbol;
# here views=0, the same path): status says why, trace falls back and says so.
unload_module
insmod $KO views=0 || fail "insmod views=0"
assert_match "status: unsupported" "mode: +unsupported" "$(xprobectl status)"
assert_match "status: the reason" "kernel views do not work here: turned off at load \(views=0\)" "$(xprobectl status)"
trace_scenario /tmp/off sleep
unload_module
load_module
assert_eq "mode with views off" fallback "$(jsonq /tmp/off.json mode)"
assert_match "the report says why" "views=0" "$(jsonq /tmp/off.json mode_note)"
assert_match "stderr says fallback" "using fallback mode" "$(cat /tmp/off.err)"
check_cause /tmp/off.json xw_delay sleep /tmp/off.err
