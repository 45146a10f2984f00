# Hooks that run a BPF program themselves (XPROBES_CMD_HOOK_PROG, xprobectl
# hook prog), not through the xprobes_hook tracepoint. (a) One raw tracepoint
# program pinned in bpffs, given to a jump, a call and an int3 hook of A,
# counts exactly A's calls through each, attributed to A, with no program on
# the tracepoint at all; the list shows the program's id. (e) A kprobe
# program given to a hook of C gets C's registers as its context (the
# syscall's pt_regs in rdi: getppid's number in it, every hit). (b) A hook whose
# program is detached runs it no more (hits still counted). (c) Refusals,
# each with its reason: not a BPF program, a program that reads past the
# hook's three arguments, a sleepable program (it would sleep with
# preemption off), a negative fd, no such hook. (d) Ending a view, or
# rmmod, gives the program back: it is freed once its loader lets go. (f) A
# kprobe program on a jump hook runs on every hit with BPF statistics on
# (which count each run) and beside a program on the xprobes_hook
# tracepoint (which counts each hit). (g) A program already running on
# this CPU when its hook hits is not entered again, and the skip is counted
# as the program's recursion miss (bpftool's recursion_misses), as the
# kernel counts a tracepoint's skipped run: the program runs at every system
# call (raw_syscalls:sys_enter) and calls bpf_ktime_get_ns(), and G's hook
# on that helper runs the same program, so every hit is a miss.
. /xp/selftests/tests/lib.sh
N=$(scaled 1000)
F=__x64_sys_getppid
PIN=/sys/fs/bpf/xp_test26

# first_kind PID FROM KIND [FLAGS]: add a hook at the first offset from FROM
# that becomes KIND; print "ID OFF" (the others tried are removed).
first_kind() {
	local off=$2 j
	while [ $off -lt 64 ]; do
		if j=$(xprobectl hook add --json $4 "$1" "$F+$off" 2>/dev/null); then
			if [ "$(json_get "$j" kind)" = "$3" ]; then
				echo "$(json_get "$j" id) $off"
				return 0
			fi
			xprobectl hook del "$(json_get "$j" id)"
		fi
		off=$((off + 1))
	done
	return 1
}
# pin_hookcount [-S]: hookcount's programs pinned at PIN (PIN_kprobe...), its pid
# in HC; /tmp/hc.out emptied first, not another run's (the wait could read it).
pin_hookcount() {
	rm -f /tmp/hc.out
	hookcount -P $PIN "$@" > /tmp/hc.out 2> /tmp/hc.err &
	HC=$!
	wait_for /tmp/hc.out attached "hookcount did not pin its programs"
}
# viewed_loop OUT: a sysloop of N getppid calls, not yet started, in a view
# of its own; its pid in LOOP_PID.
viewed_loop() {
	start_loop $1 -e -n $N getppid
	xprobectl view add $LOOP_PID > /dev/null || fail "view add $LOOP_PID"
}
# prog_gone ID: wait until BPF program ID no longer exists.
prog_gone() {
	local i=0
	while bpftool prog show id "$1" > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "BPF program $1 is still loaded: $2"
		sleep 0.1
	done
}

pin_hookcount
viewed_loop /tmp/a.out
A=$LOOP_PID
viewed_loop /tmp/b.out
B=$LOOP_PID
viewed_loop /tmp/c.out
C=$LOOP_PID

# (a) a jump (the default place), a call and an int3 hook in A
jid=$(xprobectl hook add $A $F) || fail "hook add"
wait_jump $jid
set -- $(first_kind $A 10 call) || fail "no call hook in $F"
cid=$1
set -- $(first_kind $A $(($2 + 1)) int3 --trap) || fail "no int3 hook in $F"
tid=$1
note "jump $jid, call $cid, int3 $tid: $(xprobectl hook list $A | awk 'NR > 1 { print $4, $8 }' | tr '\n' ';')"
for id in $jid $cid $tid; do
	xprobectl hook prog $id $PIN || fail "hook prog $id"
done
pid_prog=$(hook_col $jid 10)
[ "$pid_prog" -gt 0 ] 2>/dev/null || fail "hook list shows no program id: '$pid_prog'"
assert_eq "the call hook runs the same program" "$pid_prog" "$(hook_col $cid 10)"
assert_eq "the program is the pinned one" "$pid_prog" \
	"$(bpftool prog show pinned $PIN | sed -n 's/^\([0-9]*\):.*/\1/p')"

# (b) B's hook gets the program, then loses it
bid=$(xprobectl hook add $B $F) || fail "hook add B"
xprobectl hook prog $bid $PIN || fail "hook prog B"
xprobectl hook prog $bid --detach || fail "hook prog --detach"
assert_eq "a detached hook lists no program" 0 "$(hook_col $bid 10)"

# (e) a kprobe program: the hook's registers are its context
kid=$(xprobectl hook add --cookie 77 $C $F) || fail "hook add C"
xprobectl hook prog $kid ${PIN}_kprobe || fail "hook prog $kid (a kprobe program)"
wait_jump $kid			# its hits through the jump path (module/hooks/jump.c), not an int3
assert_eq "the hook lists the kprobe program" \
	"$(bpftool prog show pinned ${PIN}_kprobe | sed -n 's/^\([0-9]*\):.*/\1/p')" "$(hook_col $kid 10)"

# (c) refusals
out=$(nlraw $CMD_HOOK_PROG $A_HOOK_ID:u32:$jid $A_PROG_FD:u32:0 < /dev/null) &&
	fail "fd 0 (/dev/null) accepted as a program"
assert_match "not a program" "not a BPF raw tracepoint or kprobe program" "$out"
out=$(nlraw $CMD_HOOK_PROG $A_HOOK_ID:u32:$jid $A_PROG_FD:u32:4294967295) &&
	fail "fd -1 accepted"
assert_match "negative fd" "out of range" "$out"
out=$(xprobectl hook prog $jid ${PIN}_past 2>&1) && fail "a program reading past the arguments accepted"
assert_match "reads past" "reads 32 bytes of context" "$out"
out=$(xprobectl hook prog $jid ${PIN}_sleepable 2>&1) && fail "a sleepable program accepted"
assert_match "sleepable" "a sleepable program cannot run at a hook" "$out"
out=$(xprobectl hook prog 999999 $PIN 2>&1) && fail "hook 999999 accepted"
assert_match "no such hook" "no hook with id 999999" "$out"
out=$(xprobectl hook prog $jid /sys/fs/bpf/nothing 2>&1) && fail "a missing pin accepted"
assert_match "missing pin" "cannot open the pinned program" "$out"

go_loop $A /tmp/a.out
go_loop $B /tmp/b.out
go_loop $C /tmp/c.out
sysloop -n $N getppid			# untraced
kill -USR1 $HC
wait $HC
note "hookcount: $(tr '\n' ';' < /tmp/hc.out)"
# cnt ID PID [FILE]: what hookcount counted for ID (a hook, or a kprobe program's cookie) in PID
cnt() { awk -v id=$1 -v p=$2 '$1 == id && $2 == p { print $3 }' "${3:-/tmp/hc.out}"; }
assert_eq "program count, jump hook" $N "$(cnt $jid $A)"
assert_eq "program count, call hook" $N "$(cnt $cid $A)"
assert_eq "program count, int3 hook" $N "$(cnt $tid $A)"
assert_eq "program count, detached hook" "" "$(cnt $bid $B)"
assert_eq "kprobe program count (by cookie), every hit with getppid's registers" $N "$(cnt 77 $C)"
assert_eq "no kprobe hit saw other registers" "" "$(grep 'did not see' /tmp/hc.err)"
assert_eq "program events from other processes" 0 \
	"$(awk -v a=$A -v c=$C 'NF == 3 && $2 != a && !($1 == 77 && $2 == c) { n += $3 } END { print n + 0 }' /tmp/hc.out)"
for id in $jid $cid $tid $bid $kid; do
	assert_eq "module hits of hook $id" $N "$(hook_col $id 5)"
done
assert_eq "the jump is still a jump" jump "$(hook_col $jid 8)"
assert_eq "the kprobe program's hook is still a jump" jump "$(hook_col $kid 8)"

# (d) the program outlives neither the view nor the module
end_loop $A /tmp/a.out
end_loop $B /tmp/b.out
end_loop $C /tmp/c.out
wait_views 0
prog_gone $pid_prog "after its views ended and hookcount exited"

pin_hookcount
viewed_loop /tmp/a.out
A=$LOOP_PID
jid=$(xprobectl hook add $A $F) || fail "hook add"
xprobectl hook prog $jid $PIN || fail "hook prog"
p=$(hook_col $jid 10)
go_loop $A /tmp/a.out
unload_module
kill -USR1 $HC
wait $HC
assert_eq "program count before rmmod" $N "$(cnt $jid $A)"
prog_gone $p "after rmmod and hookcount exited"
end_loop $A /tmp/a.out
load_module

# (f) a kprobe program on a jump hook with BPF statistics on (D's calls: the
# program then runs through bpf_prog_run(), which counts each run) and beside
# a program on the xprobes_hook tracepoint (E's: both run, each hit)
rm -f /tmp/hc2.out
pin_hookcount
viewed_loop /tmp/d.out
D=$LOOP_PID
viewed_loop /tmp/e.out
E=$LOOP_PID
did=$(xprobectl hook add --cookie 78 $D $F) || fail "hook add D"
eid=$(xprobectl hook add --cookie 79 $E $F) || fail "hook add E"
for id in $did $eid; do
	xprobectl hook prog $id ${PIN}_kprobe || fail "hook prog $id (a kprobe program)"
	wait_jump $id
done
run_cnt() { bpftool prog show pinned ${PIN}_kprobe | sed -n 's/.* run_cnt \([0-9]*\).*/\1/p'; }
stats=$(cat /proc/sys/kernel/bpf_stats_enabled) HC2=
# a failure below leaves the statistics as found, and the pins unpinned (hookcount does at exit)
trap 'echo $stats > /proc/sys/kernel/bpf_stats_enabled
	[ -z "$HC$HC2" ] || { kill $HC $HC2; wait $HC $HC2; } 2> /dev/null' EXIT
echo 1 > /proc/sys/kernel/bpf_stats_enabled || fail "cannot turn BPF statistics on"
c0=$(run_cnt)
go_loop $D /tmp/d.out
c1=$(run_cnt)
echo $stats > /proc/sys/kernel/bpf_stats_enabled
assert_eq "BPF statistics count each of D's hits (run_cnt $c0 to $c1)" $N "$((${c1:-0} - ${c0:-0}))"
hookcount > /tmp/hc2.out 2> /tmp/hc2.err &
HC2=$!
wait_for /tmp/hc2.out attached "hookcount did not attach to the tracepoint"
go_loop $E /tmp/e.out
kill -USR1 $HC2 $HC
wait $HC2
wait $HC
HC= HC2=
assert_eq "kprobe program count for D, statistics on" $N "$(cnt 78 $D)"
assert_eq "kprobe program count for E, tracepoint on" $N "$(cnt 79 $E)"
assert_eq "tracepoint count for E's hook" $N "$(cnt $eid $E /tmp/hc2.out)"
assert_eq "no kprobe hit saw other registers" "" "$(grep 'did not see' /tmp/hc.err)"
for id in $did $eid; do
	assert_eq "module hits of hook $id" $N "$(hook_col $id 5)"
	assert_eq "hook $id is still a jump" jump "$(hook_col $id 8)"
done
end_loop $D /tmp/d.out
end_loop $E /tmp/e.out

# (g) every hit of G's hook comes inside its program's own run (hookcount -S)
pin_hookcount -S
viewed_loop /tmp/g.out
G=$LOOP_PID
gid=$(xprobectl hook add $G bpf_ktime_get_ns) || fail "hook add G bpf_ktime_get_ns"
xprobectl hook prog $gid ${PIN}_reenter || fail "hook prog $gid (the reenter program)"
misses() { bpftool prog show pinned ${PIN}_reenter | sed -n 's/.* recursion_misses \([0-9]*\).*/\1/p'; }
m0=$(misses)
go_loop $G /tmp/g.out
# G blocks once its loop is done: read until two readings agree
i=0 prev=
while :; do
	cur="$(hook_col $gid 5) $(($(misses) - ${m0:-0}))"
	[ "$cur" != "$prev" ] || break
	prev=$cur i=$((i + 1))
	[ $i -lt 50 ] || fail "G's hits and misses did not settle: $cur"
	sleep 0.1
done
set -- $cur
[ "$1" -ge $N ] 2>/dev/null || fail "hook $gid on bpf_ktime_get_ns hit $1 times, fewer than G's $N system calls"
assert_eq "each hit inside the program's run is its recursion miss (hook $gid: $(hook_col $gid 8))" "$1" "$2"
kill -USR1 $HC
wait $HC
HC=
end_loop $G /tmp/g.out
