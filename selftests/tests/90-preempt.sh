# Kernel and user hooks with any instruction a place to be interrupted and
# preempted (issue 35). TCG takes interrupts only at the end of a
# translation block, so no other test is ever interrupted between two
# straight-line instructions; here QEMU runs one instruction per block
# (run-vm.sh --singlestep, switched on once everything is set up) on a fully
# preemptible kernel (preempt=full switched at run time, or PREEMPT_RT).
#
# On each CPU: a kernel thread calling kstrdup() in a loop (xp_spin.ko), a
# traced process making system calls, and an untraced one spinning, so that
# the kernel thread is preempted in the shared text and switched in again
# after a traced task, on its tables. View A has a jump hook over kstrdup's
# first two instructions (where a kernel thread resuming inside the jump
# crashed the kernel before the view's guard, module/views/guard.c), a call hook
# further in, and a jump hook on getppid() that its own task hits; view B an
# int3 hook on kstrdup. Meanwhile a loop adds and removes a jump hook in A
# and user hooks over several instructions in uhtarget (its threads check
# every result). Afterwards: the guard kept kernel threads off A's tables,
# they ran through B's int3, the hooks counted, uhtarget saw no wrong
# result, the kernel logged nothing (the harness checks the log).
# And the seccomp seal (issue 39): seccompw, a user hook with events on its
# work() (a system call per call, one a millisecond), installs its filter
# once one instruction per block is on: the module takes the hook out
# first (its task work, the thread's thunks given back, the trampolines'
# system calls muted, every CPU serialised), and the process runs on as
# untraced (a seal still at work when the phase's SECS end finishes at
# full speed). (Its TSYNC mode, a second thread calling work() flat out,
# added 53 s here in CI, on make check's longest path: the seal with
# threads inside the trampolines runs in 49 on every kernel, and under
# PREEMPT_RT and lockdep.)
# And sums in the process (issue 41): trace of nestloop's three nested
# functions, whose returns fold and sum themselves in an rseq critical
# section (module/uhooks/urec_tmpl.S) that must restart right wherever the thread
# is preempted, migrated or signalled, runs its rounds once one instruction
# per block is on: every call is counted, and the outer function's own
# time is its wall less its callee's.
. /xp/selftests/tests/lib.sh
grep -q 'xp\.singlestep=1' /proc/cmdline || skip "needs a VM started with run-vm.sh --singlestep"
[ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
[ -f /xp/xp_spin.ko ] || skip "no xp_spin test module"
SECS=${XP_SINGLESTEP_SECS:-90}
PM=/sys/kernel/debug/sched/preempt
model=
if uname -v | grep -q PREEMPT_RT; then
	note "ok: PREEMPT_RT: fully preemptible"
elif [ -w $PM ]; then
	model=$(sed 's/.*(\(.*\)).*/\1/' $PM)
	echo full > $PM || fail "switch the preemption model to full"
	assert_match "preemption model, switched at run time" '\(full\)' "$(cat $PM)"
else
	skip "no PREEMPT_RT and no $PM to switch to full preemption"
fi
# khugepaged runs at nice 19 and, preempted inside an RCU read-side
# section (start_flush_work() in its scan's lru_add_drain_all()), gets no
# CPU back from this load (three tasks a CPU, a nice -20 sample) while one
# instruction per block slows the guest 40 times: RCU's grace periods
# waited on it for minutes (main@6.1, 2026-12-02: rcu_preempt stalls on
# P36, hung tasks behind a view's teardown that waited for RCU-tasks under
# xp_views_lock, the seal 277 s). So it sleeps through the test; a
# non-RT kernel has no RCU priority boosting to save it.
KHP=/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
khp=
if [ -w $KHP ]; then
	khp=$(cat $KHP)
	echo 3600000 > $KHP
fi
restore() {
	[ -z "$model" ] || echo "$model" > $PM
	[ -z "$khp" ] || echo "$khp" > $KHP
}

calls() { cat /sys/module/xp_spin/parameters/calls; }
# seccompw untraced first, what it writes the traced run's reference
rm -f /tmp/pre-sc.go /tmp/pre-sc.go0 /tmp/pre-sc.t /tmp/pre-sc.t.* /tmp/pre-sc.want
touch /tmp/pre-sc.go0
/xp/bin/seccompw_static seccomp 0 /tmp/pre-sc.go0 /tmp/pre-sc.want 2> /dev/null ||
	{ restore; fail "seccompw, untraced: $?"; }
# Everything is set up on quiet CPUs (the loops wait for a signal, the
# kernel threads come later), which the load would slow several times.
start_loop /tmp/pre-m0.out -n 0 getppid
M0=$LOOP_PID
start_loop /tmp/pre-m1.out -n 0 getppid
M1=$LOOP_PID
uhtarget -g -t 2 > /tmp/pre-uh.out 2>&1 &
U=$!
wait_for /tmp/pre-uh.out '^ready' "uhtarget did not start"
SECCOMPW_NO_TAKEOVER=1 /xp/bin/seccompw_static seccomp 0 /tmp/pre-sc.go /tmp/pre-sc.t 2> /dev/null &
S=$!
pids="$M0 $M1"
cleanup() {
	kill $pids $U $S $NLT 2> /dev/null
	wait $pids $U $S $NLT 2> /dev/null
	rmmod xp_spin 2> /dev/null
	restore
}

NLN=2000
rm -f /tmp/pre-nl.go
xprobectl trace --json -f 'nl_*' -- nestloop $NLN /tmp/pre-nl.go > /tmp/pre-nl.json 2> /tmp/pre-nl.err &
NLT=$!
wait_for /tmp/pre-nl.err '^xprobectl: tracing' "trace -- nestloop did not attach" 600

wait_exec $S /xp/bin/seccompw_static
xprobectl view add $M0 > /dev/null && xprobectl view add $M1 > /dev/null &&
	xprobectl view add $U > /dev/null && xprobectl view add $S > /dev/null ||
	{ cleanup; fail "view add"; }
xprobectl uhook add $S work > /dev/null || { cleanup; fail "uhook add $S work"; }
# View A: jumps over several instructions (kstrdup's test; je, and getppid's
# push; call), and a call hook on a call instruction of kstrdup.
ja=$(xprobectl hook add $M0 kstrdup) && jg=$(xprobectl hook add $M0 __x64_sys_getppid) ||
	{ cleanup; fail "hook add in view A"; }
ca=
off=$(entry_off $M0 kstrdup)
while [ -z "$ca" ] && [ $off -lt 64 ]; do
	off=$((off + 1))
	j=$(xprobectl hook add --json $M0 kstrdup+$off 2> /dev/null) || continue
	if [ "$(json_get "$j" kind)" = call ]; then
		ca=$(json_get "$j" id)
	else
		xprobectl hook del "$(json_get "$j" id)"
	fi
done
[ -n "$ca" ] || { cleanup; fail "no call hook found in kstrdup's first 64 bytes"; }
# View B: an int3 on kstrdup, which the kernel threads run through lazily.
ib=$(xprobectl hook add --trap $M1 kstrdup) || { cleanup; fail "hook add --trap in view B"; }
wait_jump $ja
wait_jump $jg
guard=$(guard_of $M0)
note "view A: kstrdup $(hook_col $ja 8), getppid $(hook_col $jg 8), kstrdup+$off $(hook_col $ca 8), guard ${guard:-none}; view B: kstrdup $(hook_col $ib 8)"

# The load: on each CPU a traced loop, an untraced spinner, a kernel thread.
taskset -p 1 $M0 > /dev/null && taskset -p 2 $M1 > /dev/null || { cleanup; fail "taskset"; }
kill -USR1 $M0 $M1
for c in 0 1; do
	taskset $((1 << c)) sysloop -n 0 spin > /dev/null &
	pids="$pids $!"
done
kill -HUP $U
insmod /xp/xp_spin.ko || { cleanup; fail "insmod xp_spin"; }

# Add/del cycles while it all runs, from one process each (an exec under
# one instruction per block takes seconds): a jump in view A that goes live
# for one round in each batch (an RCU-tasks grace period), quick add/del
# rounds of it, and uhtarget's jumps over three instructions (uh_add) and
# two (uh_call), with and without events.
rm -f /tmp/pre-stop /tmp/pre-cycles /tmp/pre-cycles.err
fa() { awk -v f="$1" '$1 == "fn" && $2 == f { print $3, $4 }' /tmp/pre-uh.out; }
(
	n=0
	while [ ! -e /tmp/pre-stop ]; do
		id=$(xprobectl hook add $M0 __x64_sys_getpid 2>> /tmp/pre-cycles.err) || break
		xpcycle uhook $U $(fa uh_add) 4 > /dev/null 2>> /tmp/pre-cycles.err || break
		xpcycle uhook $U $(fa uh_call) 4 > /dev/null 2>> /tmp/pre-cycles.err || break
		xprobectl hook del $id 2>> /tmp/pre-cycles.err || break
		xpcycle hook $M0 __x64_sys_getpid 8 > /dev/null 2>> /tmp/pre-cycles.err || break
		n=$((n + 1))
		echo $n > /tmp/pre-cycles
	done
) &
cyc=$!

# A busy loop's time in hundredths of a second (at the highest priority:
# the CPUs are busy), before and after the switch: the same loop, one
# instruction per block after it.
cs() { sed 's/ .*//; s/\.//' /proc/uptime; }
# The busy loop's own CPU time (user + system, centiseconds): the
# neighbours' add/del loops and the kernel's threads share its CPU, and
# its wall time before the switch has been seen anywhere from 28 to 354
# cs (6.1-rt: 354 against 622 after the switch failed check-flavours on
# 2026-11-29), after it 489 to 622 cs. The faster of two samples, and at
# least twice that after the switch: without the switch the two are alike.
spin_cs() {
	busybox time -p sysloop -p -20 -n 1000000 spin 2>&1 > /dev/null |
		awk '/^(user|sys) / { s += $2 } END { printf "%d\n", s * 100 + 0.5 }'
}
t_fast=$(spin_cs)
t2=$(spin_cs)
[ $t2 -ge $t_fast ] || t_fast=$t2
# The polling below forks nothing and runs at nice -20: under this load
# one instruction per block made a fork and exec of sleep take 87 s on
# 6.12-rt (2026-12-02), and the phase as long. A FIFO no one writes
# times its reads out.
rm -f /tmp/pre-tick
mkfifo /tmp/pre-tick || fail "mkfifo"
renice -n -20 $$ > /dev/null 2>&1
tick() { read -r -t 1 _ <> /tmp/pre-tick; }
echo "XP-SINGLESTEP: on" > /dev/ttyS1
sw=$(cs)
sleep 1
# seccompw's filter (and the seal before it) and nestloop's rounds start
# once one instruction per block is on, before the busy loop's sample:
# that sample took 35 to 59 s of the phase's 90 on the -rt kernels, and
# with the go after it seccompw had about 30 s left for its seal on
# 6.1-rt, which did not always do (check-flavours failed on 2026-12-02):
# the seal under this load took 59 to 277 s after the go since, 44 to 66 s
# once khugepaged slept through the test (above).
touch /tmp/pre-sc.go /tmp/pre-nl.go
c2=$(calls)
w=$(cs)
t_slow=$(spin_cs)
w=$(($(cs) - w))
note "a busy loop took $t_fast cs of CPU, then $t_slow cs ($w cs of wall) one instruction per block"
# Guest time runs as the host's: the phase ends SECS seconds after the
# switch. seccompw's seal began with the go, one instruction per block;
# one that is not done by then (on the -rt kernels under CI's load it took
# 234 to 261 s of this phase, 46 s alone, 44 s on 6.1: CI went to 5260 s
# of its 5400, 2026-12-02) ends at full speed, up to 240 s more, and the
# time it had under one instruction per block is reported.
# (Shell builtins only: a fork and exec takes seconds here.)
sc_at=
elapsed() {	# el: seconds since the switch
	read -r up _ < /proc/uptime
	el=$(((${up%.*}${up#*.} - sw) / 100))
}
sc_poll() {	# sc_at: the phase's second seccompw had its filter (mode 2) or was done
	local k v
	[ -z "$sc_at" ] || return 0
	scmode=
	[ -r /proc/$S/status ] && while read -r k v _; do
		[ "$k" = Seccomp: ] && scmode=$v && break
	done < /proc/$S/status
	[ "${scmode:-2}" = 2 ] && sc_at=$el
}
while :; do
	elapsed
	sc_poll
	[ $el -ge $((SECS - 1)) ] && break
	tick
done
echo "XP-SINGLESTEP: off" > /dev/ttyS1
ss_el=$el
while [ -z "$sc_at" ] && [ $el -lt $((ss_el + 240)) ]; do
	tick
	elapsed
	sc_poll
done
if [ -n "$sc_at" ] && [ $sc_at -le $ss_el ]; then
	note "seccompw filtered $sc_at s after the switch; one instruction per block for $ss_el s"
else
	note "seccompw filtered ${sc_at:-not} s after the switch, its seal one instruction per block for its first $ss_el s"
fi
el=$ss_el
touch /tmp/pre-stop
wait $cyc
c4=$(calls)
ncyc=$(cat /tmp/pre-cycles 2> /dev/null || echo 0)
list=$(xprobectl hook list)
note "$list"
kill $U
wait $U
urc=$?
wait $S
src=$?
wait $NLT
nlrc=$?
cleanup

[ $t_slow -ge $((2 * (t_fast + 1))) ] ||
	fail "one instruction per block did not slow the guest down: a busy loop took $t_fast cs, then $t_slow cs"
note "ok: one instruction per translation block for $el s"
[ $((c4 - c2)) -gt 1000 ] || fail "xp_spin's threads made $((c4 - c2)) calls meanwhile"
note "ok: xp_spin's threads made $((c4 - c2)) kstrdup() calls meanwhile"
col() { echo "$list" | awk -v id="$1" -v c="$2" '$1 == id { print $c }'; }
[ -n "$guard" ] || fail "view A has no guard (a hook on enter_lazy_tlb)"
[ "$(col $guard 5)" -gt 0 ] || fail "view A's guard kept no kernel thread off its tables"
note "ok: view A's guard kept $(col $guard 5) switches to a task without an mm off its tables"
[ "$(col $ib 6)" -gt 0 ] || fail "view B's int3 on kstrdup dropped nothing: no kernel thread ran on its tables"
note "ok: kernel threads ran through view B's int3 $(col $ib 6) times (dropped)"
[ "$(col $jg 5)" -gt 0 ] || fail "view A's jump on getppid() counted no hit"
note "ok: view A's jump on getppid() counted $(col $jg 5) hits"
[ -s /tmp/pre-cycles.err ] && fail "add/del cycles failed: $(cat /tmp/pre-cycles.err)"
[ "$ncyc" -gt 0 ] || fail "no add/del cycle completed"
note "ok: $ncyc rounds of add/del cycles (a kernel jump, live and not; two user jumps)"
grep -q BAD /tmp/pre-uh.out && fail "uhtarget computed a wrong result: $(grep BAD /tmp/pre-uh.out | head -n 3)"
assert_eq "uhtarget's exit status" 0 "$urc"
[ -n "$sc_at" ] ||
	fail "seccompw had no filter 240 s after one instruction per block went off (Seccomp: $scmode)"
assert_eq "seccompw, sealed from one instruction per block: its exit status" 0 "$src"
assert_eq "seccompw, sealed from one instruction per block: what it wrote" "$(cat /tmp/pre-sc.want)" \
	"$(cat /tmp/pre-sc.t 2> /dev/null)"
assert_match "seccompw, sealed: its trampolines' system calls, as it read them after its filter" \
	"^syscalls 0 muted [1-9][0-9]*$" "$(cat /tmp/pre-sc.t.a 2> /dev/null)"
assert_match "uhtarget's count" '^ok calls=' "$(tail -n 1 /tmp/pre-uh.out)"
assert_eq "trace -- nestloop, one instruction per block: its exit status" 0 "$nlrc"
note "nestloop: $(grep -c . /tmp/pre-nl.err) lines from trace; summed $(jsonq /tmp/pre-nl.json counters.calls_summed), switches $(jsonq /tmp/pre-nl.json counters.switch_out)"
for f in nl_outer nl_mid nl_leaf; do
	assert_eq "$f calls, summed one instruction per block" $NLN "$(fn /tmp/pre-nl.json $f calls)"
done
assert_eq "nestloop: unmatched returns" 0 "$(jsonq /tmp/pre-nl.json counters.unmatched)"
assert_eq "nestloop: abandoned calls" 0 "$(jsonq /tmp/pre-nl.json counters.abandoned)"
assert_ge "calls nestloop summed itself" "$(jsonq /tmp/pre-nl.json counters.calls_summed)" 1
assert_within "nl_outer self + nl_mid = nl_outer wall, one instruction per block" 1 \
	$(($(fn /tmp/pre-nl.json nl_outer self.wall_ns) + $(fn /tmp/pre-nl.json nl_mid wall_ns))) \
	$(fn /tmp/pre-nl.json nl_outer wall_ns)
