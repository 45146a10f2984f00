# Coherence with static calls and static keys all over the kernel: switch the
# preemption model (PREEMPT_DYNAMIC rewrites cond_resched and preemption
# static calls and keys at thousands of sites) 5 times (2 on the debug
# kernel) while a traced process runs through its hooks; the audit finds
# nothing to repair, the hooks keep counting, no splat. The process is
# paced: under single-threaded TCG every
# text_poke_bp() sync waits for a busy vCPU's time slice, and a busy loop
# makes one switch take minutes, with or without xprobes.
. /xp/selftests/tests/lib.sh
P=/sys/kernel/debug/sched/preempt
[ -w $P ] || skip "no $P"
orig=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' $P)
# The models this kernel switches to (6.12's PREEMPT_RT lists some it
# refuses: none), tried before anything is traced.
modes=
for m in $(tr -d '()' < $P); do
	echo $m > $P 2> /dev/null && modes="$modes $m"
done
echo "$orig" > $P
[ $(echo $modes | wc -w) -ge 2 ] || skip "the kernel takes one preemption model only:$modes"

sysloop -n 0 -i 2000 getppid &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A __x64_sys_getppid) || fail "hook add"
for f in schedule __cond_resched preempt_schedule dynamic_might_resched; do
	xprobectl hook add $A $f > /dev/null 2>&1 && note "also hooked $f"
done
jump_among $id
i=1
R=$(scaled 5)	# 2 on the debug kernel
while [ $i -le $R ]; do
	for m in $modes; do
		echo $m > $P || fail "cannot switch to $m"
	done
	i=$((i + 1))
done
echo "$orig" > $P
h1=$(hook_col $id 5)
sleep 0.3
[ "$(hook_col $id 5)" -gt "$h1" ] || fail "the hook stopped counting"
note "text writes mirrored: $(status_field text_writes_mirrored)"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"
xprobectl view del $A
kill $A; wait $A
