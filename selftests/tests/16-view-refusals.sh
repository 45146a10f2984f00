# (g) Bad requests get a clear error and change nothing: pid 0, pid 1, a kernel
# thread, a nonexistent pid, an unknown symbol, freed init code, the end of text, data, a mid-instruction offset, a
# blacklisted function, an fentry site, ENDBR, a duplicate hook, a second view,
# functions xprobes' own dispatch path runs (__rcu_read_lock, ...), the
# return and indirect thunks (every ret and indirect call of that path goes
# through one on CPUs that need them; TCG's do not, so the test is the
# refusal itself).
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid

start_loop /tmp/a.out -e -n 1 getppid
A=$LOOP_PID
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A $F) || fail "hook add"
wait_settled		# a jump hook's kind changes once it is live
state() { xprobectl view list; xprobectl hook list; xprobectl status | grep -E '^(views|hooks|memory):'; }
before=$(state)

# refused WHAT PATTERN xprobectl-args...
refused() {
	local what=$1 pat=$2
	shift 2
	refused_with "$what" 1 "$pat" xprobectl "$@"
}
expect_rc "view add pid 0 (usage)" 2 xprobectl view add 0
refused "view add pid 1" "refusing to trace init" view add 1
refused "view add kernel thread" "no user address space" view add 2
refused "view add nonexistent pid" "no process with pid" view add 3999999
refused "second view" "already has a kernel view" view add $A
refused "hook without view" "has no kernel view" hook add $$ $F
refused "unknown symbol" "unknown kernel function" hook add $A no_such_function_xyz
refused "init text (freed)" "not a function in the text of the kernel or of a loaded module" hook add $A start_kernel
refused "end of text" "not a function in the text of the kernel or of a loaded module" hook add $A _etext
refused "data symbol" "not a function in the text of the kernel or of a loaded module" hook add $A jiffies_64
refused "mid-instruction" "not an instruction boundary" hook add $A $F+0x10
refused "blacklisted function" "kprobes refuses" hook add $A do_int3+0x9
E=$(entry_off $A $F)
refused "fentry site" "ftrace \(fentry\) site" hook add $A $F+$((E - 5))
if [ $E = 9 ]; then	# built with IBT (6.12; Debian's 6.1 is not)
	refused "ENDBR" "ENDBR" hook add $A $F+0
	refused "ENDBR (middle)" "ENDBR" hook add $A $F+2
else
	note "no ENDBR on this kernel: nothing to refuse there"
fi
refused "duplicate" "already has hook $id" hook add $A $F+$E
refused "beyond the function" "beyond the end" hook add $A $F+0x10000
refused "padding int3" "breakpoint|beyond|boundary|kprobes refuses" hook add $A $F+0x36
# xprobes' own dispatch path runs these before (or only inside) its re-entry
# guard: an int3 there would trap again before any of our code runs.
# (A kernel may inline some of them: the debug kernel has no
# rcu_read_unlock_special symbol.)
for f in __rcu_read_lock __rcu_read_unlock rcu_read_unlock_special notify_die bpf_trace_run3; do
	if [ -z "$(ksym $f)" ]; then
		note "($f: no such symbol in this kernel)"
		continue
	fi
	refused "dispatch path: $f" "dispatch path|kprobes refuses" hook add $A $f
done
assert_match "__rcu_read_lock: refused as xprobes' dispatch path" "dispatch path" \
	"$(xprobectl hook add $A __rcu_read_lock 2>&1)"
n=0
for f in __x86_return_thunk __x86_return_skl call_depth_return_thunk retbleed_return_thunk \
	 retbleed_untrain_ret entry_untrain_ret srso_return_thunk srso_untrain_ret srso_safe_ret \
	 srso_alias_return_thunk srso_alias_untrain_ret srso_alias_safe_ret its_return_thunk \
	 __x86_indirect_thunk_rax __x86_indirect_thunk_r11 __x86_indirect_call_thunk_r11 \
	 __x86_indirect_jump_thunk_r11 __x86_indirect_its_thunk_r11; do
	[ -n "$(ksym $f)" ] || continue
	refused "thunk: $f" "dispatch path|kprobes refuses" hook add $A $f
	n=$((n + 1))
done
note "ok: $n return and indirect thunks refused"
assert_match "__x86_return_thunk: refused as xprobes' dispatch path" "dispatch path" \
	"$(xprobectl hook add $A __x86_return_thunk 2>&1)"
refused "hook del unknown" "no hook with id" hook del 999999
refused "view del unviewed" "has no kernel view" view del $$
after=$(state)
[ "$before" = "$after" ] || fail "state changed: before [$before] after [$after]"
note "ok: nothing changed"
xprobectl view del $A
end_loop $A /tmp/a.out
