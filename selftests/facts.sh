# The kernel facts xprobes relies on, as the running kernel has them: what
# docs/views.md ("Kernel facts, per kernel") records for each kernel, and what
# to look at first on a kernel xprobes was not verified on. In the VM:
#   make vm [KSERIES=6.1] CMD='sh /xp/selftests/facts.sh'
. /xp/selftests/tests/lib.sh
T=/sys/kernel/tracing
F=__x64_sys_getppid

echo "release: $(uname -r)"
dmesg | grep -o 'xprobes: kernel text .*' | head -n 1
echo "views: $(xprobectl status | sed -n 's/^mode: *//p')"
dmesg | grep -q 'Kernel/User page tables isolation: enabled' && pti=on || pti=off
echo "PTI: $pti"
bytes=$(xprobectl peek $$ $F 16 | cut -d: -f2)
case $bytes in
" f3 0f 1e fa"*) echo "IBT: functions start with ENDBR64" ;;
*) echo "IBT: no ENDBR64 at function entries" ;;
esac
echo "$F:$bytes"
e=$(ksym _etext)
echo "_etext 2 MiB aligned: $([ $((0x$e & 0x1fffff)) = 0 ] && echo yes || echo "no (+0x$(printf %x $((0x$e & 0x1fffff))))")"
xprobectl walk $$ $F | sed 's/^/shared text: /'
[ $pti = on ] && xprobectl walk --user $$ $F | sed 's/^/PTI user tables: /'

# Symbols the module resolves (kallsyms) or probes, and the hook sites of
# trace (scheduler) and metrics/latency (syscall entry and exit).
for s in _stext _etext text_mutex __start___ex_table __text_poke text_poke_memset \
	pgd_lock cpa_lock kprobes_all_disarmed kprobe_ftrace_disabled write_enabled_file_bool \
	optprobe_template_entry arch_prepare_kprobe x64_sys_call do_syscall_64 \
	switch_mm_irqs_off finish_task_switch finish_task_switch.isra.0 do_exit \
	__rcu_read_lock __rcu_read_unlock rcu_read_unlock_special notify_die bpf_trace_run3 \
	bpf_uprobe_multi_link_attach __x64_sys_uretprobe; do
	if [ -n "$(ksym $s)" ]; then echo "symbol $s: present"; else echo "symbol $s: absent"; fi
done
for tp in sched/sched_process_fork sched/sched_process_exec sched/sched_switch \
	raw_syscalls/sys_enter raw_syscalls/sys_exit; do
	[ -d $T/events/$tp ] && echo "tracepoint $tp: present" || echo "tracepoint $tp: absent"
done

# Hook sites in a view: which kind each becomes (call or int3), and where
# x64_sys_call returns into do_syscall_64 (the syscall exit metrics uses).
sysloop -n 0 getppid &
A=$!
xprobectl view add $A > /dev/null || echo "view add: failed"
for s in x64_sys_call switch_mm_irqs_off finish_task_switch.isra.0 finish_task_switch do_exit; do
	[ -n "$(ksym $s)" ] || continue
	j=$(xprobectl hook add --json $A $s 2>&1) &&
		echo "hook $s: $(json_get "$j" kind) at $(hook_col $(json_get "$j" id) 4)" ||
		echo "hook $s: $j"
done
j=$(xprobectl hook add --json --return $A x64_sys_call 2>&1) &&
	echo "return hook x64_sys_call: $(json_get "$j" kind) at $(hook_col $(json_get "$j" id) 4)" ||
	echo "return hook x64_sys_call: $j"
xprobectl view del $A > /dev/null
kill $A
