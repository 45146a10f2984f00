# Per-process tracepoints the scheduler and the block layer fire
# (hooks/tracepoint.c), counted against what the kernel itself counts for
# the traced process, while an untraced process makes the same calls.
# (a) sched:sched_switch, whose one site is in __schedule() with the run
# queue locked and interrupts off: A and B each sleep 1 us N times; the hook's
# hits equal A's own context switches as /proc counts them (nvcsw +
# nivcsw, which __schedule() increments right before the tracepoint), none
# of B's; a tp_btf program on the hook reads prev == current, next != prev.
# (b) The same while another tool holds the tracepoint (the hook goes
# global): the hook, pidfilter's program with a PID test on the hook, the
# same program on the global raw tracepoint (as bpftrace -p) and /proc all
# agree; the audit finds every copy as the shared text outside the armed
# sites after the tracepoint's static call was retargeted both ways.
# (c) block:block_rq_issue on null_blk (no I/O scheduler, one request at a
# time): A and B each read N blocks with O_DIRECT; the hook counts A's N
# requests, none of B's, and the disk's own count says both were issued.
# (d) A livepatch (of getppid) goes in while A sleeps in a loop with
# sched_switch hooked privately, and out again: its transition rewrites
# kernel text all over (ftrace, and on 6.12 cond_resched()'s static calls)
# under the armed copies; the hits still equal A's switches, A's copy
# still jumps, the audit finds nothing.
# (e) raw_syscalls:sys_enter and sys_exit, which the kernel reaches only in
# threads flagged for them (syscall_regfunc() flags every thread when they
# are enabled globally): hooked in A's view, only A's threads carry the
# flag (status: syscall_tp_threads), its threads started later inherit
# it; A's 3 threads make N getppid() each, B as many: raw_tp programs on
# the hooks see A's 3N entries (the number right) and 3N returns (the
# parent's pid), none of B's; before that, tracefs turns sys_enter on
# everywhere: every thread is flagged, sys_enter goes global, sys_exit
# stays private; off again, back to A's thread alone. hook del of one:
# A's thread keeps the flag; of the other while tracefs holds it: every
# thread keeps it, and none once tracefs lets go (the kernel's count is
# back to 0).
# (f) Two views hook sys_enter (each hit then tests the view; with one
# view, the hook's only one, it does not need to): A's and B's N
# getppid() calls each are counted, an untraced C's are not.
. /xp/selftests/tests/lib.sh
N=$(scaled 300)
T=/sys/kernel/tracing
P=/sys/fs/bpf/xp_test39ep M=/sys/fs/bpf/xp_test39em PF=/sys/fs/bpf/xp_test39ef
rm -rf $P $M $PF
sched=
trap 'reset_tracing; rm -rf $P $M $PF
	[ -z "$sched" ] || echo "$sched" > /sys/block/nullb0/queue/scheduler' EXIT

tp_json() { xprobectl hook list --json | tr '{' '\n' | grep "\"id\":$1,"; }
is_global() { tp_json $1 | grep -q '"global":true' && echo global || echo private; }
# switches PID: the context switches away from the task PID, so far
switches() {
	awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n }' /proc/$1/status
}
count_at() {
	bpftool -j map dump pinned $M/counts > /tmp/tpev-map.json || fail "bpftool map dump"
	jsonq /tmp/tpev-map.json "[$1].formatted.value"
}
# hooked_pair TP SYSLOOP-ARGS...: A and B ready to run the same loop, TP
# hooked in A's view (hook id in id, its first site in site)
hooked_pair() {
	local tp=$1
	shift
	start_loop /tmp/a.out -e -n $N "$@"
	A=$LOOP_PID
	start_loop /tmp/b.out -e -n $N "$@"
	B=$LOOP_PID
	xprobectl view add $A > /dev/null || fail "view add ($tp)"
	id=$(xprobectl hook add $A tracepoint:$tp) || fail "hook add $tp: $id"
	site=$(hook_col $id 3)
	note "$tp: hook $id, $(json_get "$(tp_json $id)" sites) site(s), the first at $site ($(hook_col $id 4))"
	assert_match "$tp: A's copy jumps at the site" '^(eb|e9)$' "$(peek_byte $A $site)"
	assert_match "$tp: the shared text keeps the NOP" '^(66|0f)$' "$(peek_byte $$ $site)"
}
run_pair() {
	kill -USR1 $A; kill -USR1 $B
	wait_for /tmp/a.out '^done' "A did not finish" 6000
	wait_for /tmp/b.out '^done' "B did not finish" 6000
}
end_pair() {
	end_loop $A /tmp/a.out
	end_loop $B /tmp/b.out
}

# (a) Sleeps of 1 ms: a 1 us one whose timer expires before the task
# blocks does not switch, which on the debug kernel left A 36 switches
# for 75 sleeps (CI copy of c9ad2ca, 2026-12-04), under the N/2 below.
bpftool prog loadall /xp/tbpf/tpcount.bpf.o $P pinmaps $M || fail "bpftool loadall"
hooked_pair sched:sched_switch -s 1000 nanosleep
assert_eq "sched_switch: nobody else has it on" private "$(is_global $id)"
xprobectl hook prog $id $P/btf_switched || fail "hook prog btf_switched"
# A and B wait in sigwait(): neither switches until its cue
h0=$(hook_col $id 5) a0=$(switches $A) b0=$(switches $B)
run_pair
h1=$(hook_col $id 5) a1=$(switches $A) b1=$(switches $B)
note "private: hits $((h1 - h0)), A switched $((a1 - a0)) times, B $((b1 - b0)); dropped $(hook_col $id 6)"
# A sleep whose timer has expired before the task would block does not
# switch: with 1 ms nearly every one does.
[ $((a1 - a0)) -ge $((N / 2)) ] || fail "A slept $N times but switched only $((a1 - a0)) times"
[ $((b1 - b0)) -ge $((N / 2)) ] || fail "B slept $N times but switched only $((b1 - b0)) times"
assert_eq "sched_switch hits: A's switches, none of B's" $((a1 - a0)) $((h1 - h0))
assert_eq "tp_btf on the hook: prev is current, next another task, each time" $((h1 - h0)) "$(count_at 4)"
assert_eq "tp_btf on the hook: anything else" 0 "$(count_at 5)"
xprobectl hook prog $id --detach || fail "hook prog --detach (a)"
end_pair

# (b)
hooked_pair sched:sched_switch nanosleep
pidfilter_both $A $id sched:sched_switch $PF
assert_eq "another tool's probe: the hook goes global" global "$(is_global $id)"
assert_match "A's copy holds the kernel's jump" '^(eb|e9)$' "$(peek_byte $A $site)"
assert_match "so does the shared text" '^(eb|e9)$' "$(peek_byte $$ $site)"
xprobectl audit > /tmp/audit.out 2>&1 || fail "audit with the static call on __traceiter: $(cat /tmp/audit.out)"
h0=$(hook_col $id 5) a0=$(switches $A)
run_pair
h1=$(hook_col $id 5) a1=$(switches $A)
pidfilter_both_end $id
note "global: hits $((h1 - h0)), A switched $((a1 - a0)) times; pidfilter on the hook: $(tail -n 1 /tmp/pf-view.out); on the global tracepoint: $(tail -n 1 /tmp/pf-global.out)"
assert_eq "while global, the hook counted A's switches" $((a1 - a0)) $((h1 - h0))
assert_eq "the program on A's hook ran for A's switches only" "hits $((h1 - h0)) seen $((h1 - h0))" \
	"$(tail -n 1 /tmp/pf-view.out)"
assert_eq "the program on the global tracepoint, PID-tested, counted as many" "hits $((h1 - h0))" \
	"$(tail -n 1 /tmp/pf-global.out | cut -d' ' -f1,2)"
wait_eq private 100 0.05 "the hook did not go back to private" is_global $id
assert_match "private again: A's copy jumps" '^(eb|e9)$' "$(peek_byte $A $site)"
assert_match "the shared text is a NOP again" '^(66|0f)$' "$(peek_byte $$ $site)"
xprobectl audit > /tmp/audit.out 2>&1 || fail "audit with the static call back on the probe: $(cat /tmp/audit.out)"
end_pair

# (c)
# The trace tests' disk (2 ms a request, one at a time), without its I/O
# scheduler for the while: each request issued by the task that reads;
# the scheduler is given back after.
nullblk_setup 2
sched=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/block/nullb0/queue/scheduler)
echo none > /sys/block/nullb0/queue/scheduler 2>/dev/null
note "nullb0's scheduler: $(cat /sys/block/nullb0/queue/scheduler) (was $sched)"
hooked_pair block:block_rq_issue -d /dev/nullb0 dread
r0=$(awk '{ print $1 }' /sys/block/nullb0/stat)
run_pair
r1=$(awk '{ print $1 }' /sys/block/nullb0/stat)
note "block_rq_issue: hits $(hook_col $id 5), dropped $(hook_col $id 6); the disk completed $((r1 - r0)) reads"
[ $((r1 - r0)) -ge $((2 * N)) ] || fail "the disk saw $((r1 - r0)) reads, fewer than A's and B's $((2 * N))"
assert_eq "block_rq_issue hits: A's requests, none of B's" $N "$(hook_col $id 5)"
end_pair
[ -z "$sched" ] || echo "$sched" > /sys/block/nullb0/queue/scheduler
sched=
xprobectl audit > /tmp/audit.out 2>&1 || fail "audit: $(cat /tmp/audit.out)"

# (d)
K=/sys/kernel/livepatch/xp_klp
if [ -f /xp/xp_klp.ko ]; then
	N=$(scaled 3000)
	hooked_pair sched:sched_switch nanosleep
	h0=$(hook_col $id 5) a0=$(switches $A) m0=$(status_field text_writes_mirrored)
	kill -USR1 $A
	insmod /xp/xp_klp.ko || fail "insmod xp_klp"
	i=0; while [ "$(cat $K/transition 2>/dev/null)" != 0 ]; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "livepatch transition did not finish"; sleep 0.5
	done
	wait_for /tmp/a.out '^done' "A did not finish" 6000
	echo 0 > $K/enabled
	i=0; while [ -d $K ]; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "livepatch did not go away"; sleep 0.5
	done
	rmmod xp_klp || fail "rmmod xp_klp"
	h1=$(hook_col $id 5) a1=$(switches $A)
	note "livepatch in and out: hits $((h1 - h0)), A switched $((a1 - a0)) times; $(($(status_field text_writes_mirrored) - m0)) kernel writes mirrored into copies"
	assert_eq "across the livepatch, the hook counted A's switches" $((a1 - a0)) $((h1 - h0))
	assert_match "A's copy still jumps" '^(eb|e9)$' "$(peek_byte $A $site)"
	xprobectl audit > /tmp/audit.out 2>&1 || fail "audit after the livepatch: $(cat /tmp/audit.out)"
	assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"
	end_pair
else
	note "no livepatch test module: (d) not run"
fi

# (e)
N=$(scaled 1000)
sys_threads() { status_field syscall_tp_threads; }
assert_eq "before any raw_syscalls hook: no thread flagged" 0 "$(sys_threads)"
start_loop /tmp/a.out -e -t 3 -n $N getppid
A=$LOOP_PID
start_loop /tmp/b.out -e -n $N getppid
B=$LOOP_PID
xprobectl view add $A > /dev/null || fail "view add (e)"
id=$(xprobectl hook add $A tracepoint:raw_syscalls:sys_enter) || fail "hook add sys_enter: $id"
id2=$(xprobectl hook add $A tracepoint:raw_syscalls:sys_exit) || fail "hook add sys_exit: $id2"
assert_eq "sys_enter: private" private "$(is_global $id)"
assert_eq "sys_exit: private" private "$(is_global $id2)"
assert_eq "only A's one thread is flagged" 1 "$(sys_threads)"
site=$(hook_col $id 3)
assert_match "sys_enter: A's copy jumps at the site" '^(eb|e9)$' "$(peek_byte $A $site)"
assert_match "sys_enter: the shared text keeps the NOP" '^(66|0f)$' "$(peek_byte $$ $site)"
echo 1 > $T/events/raw_syscalls/sys_enter/enable
assert_eq "tracefs on sys_enter: the hook says global" global "$(is_global $id)"
assert_eq "sys_exit stays private" private "$(is_global $id2)"
st=$(xprobectl status --json)
assert_eq "tracefs on: every thread is flagged" "$(json_get "$st" threads)" \
	"$(json_get "$st" syscall_tp_threads)"
echo 0 > $T/events/raw_syscalls/sys_enter/enable
wait_eq private 100 0.05 "sys_enter did not go back to private" is_global $id
# (the list says private a moment before the flags are set again)
wait_eq 1 100 0.05 "tracefs off: A's thread is not alone flagged again" sys_threads
xprobectl hook prog $id $P/raw_sysenter || fail "hook prog raw_sysenter"
xprobectl hook prog $id2 $P/raw_sysexit || fail "hook prog raw_sysexit"
run_pair
note "sys_enter hits $(hook_col $id 5), sys_exit hits $(hook_col $id2 5); getppid entries $(count_at 6), other entries $(count_at 7), getppid returns $(count_at 8), other returns $(count_at 9)"
assert_eq "sys_enter: A's threads' getppid() calls, none of B's" $((3 * N)) "$(count_at 6)"
assert_eq "sys_exit: A's threads' getppid() returns, with the parent's pid" $((3 * N)) "$(count_at 8)"
assert_eq "A's threads are gone: its one thread is flagged" 1 "$(sys_threads)"
xprobectl hook del $id || fail "hook del sys_enter"
assert_eq "sys_exit alone: A's thread is still flagged" 1 "$(sys_threads)"
# the last hook goes while tracefs holds the tracepoint (shared)
echo 1 > $T/events/raw_syscalls/sys_exit/enable
assert_eq "tracefs on sys_exit: the hook says global" global "$(is_global $id2)"
xprobectl hook del $id2 || fail "hook del sys_exit"
st=$(xprobectl status --json)
assert_eq "hook del while global: every thread still flagged for tracefs" \
	"$(json_get "$st" threads)" "$(json_get "$st" syscall_tp_threads)"
echo 0 > $T/events/raw_syscalls/sys_exit/enable
assert_eq "tracefs off: the kernel's count is back to 0, no thread flagged" 0 "$(sys_threads)"
end_pair
xprobectl audit > /tmp/audit.out 2>&1 || fail "audit: $(cat /tmp/audit.out)"

# (f)
start_loop /tmp/a.out -e -n $N getppid
A=$LOOP_PID
start_loop /tmp/b.out -e -n $N getppid
B=$LOOP_PID
start_loop /tmp/c.out -e -n $N getppid
C=$LOOP_PID
xprobectl view add $A > /dev/null || fail "view add A (f)"
xprobectl view add $B > /dev/null || fail "view add B (f)"
ida=$(xprobectl hook add $A tracepoint:raw_syscalls:sys_enter) || fail "hook add A (f): $ida"
idb=$(xprobectl hook add $B tracepoint:raw_syscalls:sys_enter) || fail "hook add B (f): $idb"
xprobectl hook prog $ida $P/raw_sysenter || fail "hook prog A (f)"
xprobectl hook prog $idb $P/raw_sysenter || fail "hook prog B (f)"
assert_eq "two views hooking: A's and B's threads are flagged" 2 "$(sys_threads)"
c0=$(count_at 6)
kill -USR1 $A; kill -USR1 $B; kill -USR1 $C
wait_for /tmp/a.out '^done' "A did not finish (f)" 6000
wait_for /tmp/b.out '^done' "B did not finish (f)" 6000
wait_for /tmp/c.out '^done' "C did not finish (f)" 6000
note "two views: A's hook $(hook_col $ida 5) hits, B's $(hook_col $idb 5); getppid entries $(($(count_at 6) - c0))"
assert_eq "two views: A's and B's getppid() calls, none of C's" $((2 * N)) $(($(count_at 6) - c0))
end_loop $A /tmp/a.out
end_loop $B /tmp/b.out
end_loop $C /tmp/c.out
wait_eq 0 100 0.05 "views gone: threads still flagged" sys_threads
