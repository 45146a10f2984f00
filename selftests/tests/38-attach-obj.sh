# xprobectl attach: a BPF object written for global attach (a kprobe and a
# ksyscall program, no pid filter of its own: selftests/bpf/attachdemo.bpf.c)
# runs for one process only. (a) Its pinned map counts exactly A's getppid
# calls while B, untraced, makes as many, and the hits attach prints at
# Ctrl-C are the map's; the view attach made for A follows no fork, and
# goes at the end while A lives. (b) The ksyscall program reads the syscall's own
# argument from the registers the hook hands over: C's close(-1) calls in
# one slot, none in the other, while B closes as often; attach adds to a
# view C had already and leaves it, without its hooks, at -d. (e) The same
# object's uprobe and uretprobe (their place in the section name) are bound
# to uhtarget P: its uh_add calls and returns counted, not those of Q, the
# same file, untraced, making as many. (c) An object with a program that
# cannot run per process is refused whole, each such program with its
# reason, and nothing is attached: hookcount.bpf.o (none fit) and
# attachmixed.bpf.o (a kprobe that fits, a kretprobe and a uretprobe with
# an offset that do not). (d) Bad input: one
# line, exit 1. (f) A tp_btf program written for signal:signal_generate
# (attachtp.bpf.o) runs on E's signals only, with their arguments, while
# F, untraced, sends itself as many: a tracepoint hook in E's view.
. /xp/selftests/tests/lib.sh
N=$(scaled 1000)
OBJ=/xp/tbpf/attachdemo.bpf.o
P1=/sys/fs/bpf/xp_test38a P2=/sys/fs/bpf/xp_test38b P3=/sys/fs/bpf/xp_test38c
P4=/sys/fs/bpf/xp_test38d
rm -rf $P1 $P2 $P3 $P4
trap 'rm -rf $P1 $P2 $P3 $P4' EXIT

# count_at PIN SLOT: the array map's value at SLOT, as bpftool formats it
# with the object's BTF (entries in key order)
count_at() {
	bpftool -j map dump pinned $1/counts > /tmp/at-map.json || fail "bpftool map dump $1/counts"
	[ "$(jsonq /tmp/at-map.json "[$2].formatted.key")" = $2 ] || fail "$1/counts: no entry $2 in place"
	jsonq /tmp/at-map.json "[$2].formatted.value"
}

# (a)
start_loop /tmp/a.out -e -n $N getppid
A=$LOOP_PID
xprobectl attach $A $OBJ --pin $P1 > /tmp/at.out 2> /tmp/at.err &
AT=$!
wait_for /tmp/at.out "^maps pinned" "attach did not start: $(cat /tmp/at.err)" 1200
note "$(tr '\n' ';' < /tmp/at.out)"
assert_eq "A's view has the two hooks, each running a program" 2 \
	"$(xprobectl hook list $A | awk 'NR > 1 && $10 != 0' | wc -l)"
assert_match "the kprobe program on its function" "__x64_sys_getppid\+0x" "$(xprobectl hook list $A)"
assert_match "the ksyscall program on the syscall's wrapper" "__x64_sys_close\+0x" "$(xprobectl hook list $A)"
assert_eq "the view attach made follows no fork" no-follow-fork \
	"$(xprobectl view list | awk -v a=$A '$1 == a { print $NF }')"
go_loop $A /tmp/a.out
sysloop -n $N getppid			# B, untraced
assert_eq "A's getppid calls, counted by the object's own map" $N "$(count_at $P1 0)"
kill -INT $AT
wait $AT || fail "attach ended with $? at Ctrl-C: $(cat /tmp/at.err)"
note "$(tr '\n' ';' < /tmp/at.out)"
assert_eq "hits attach printed for on_getppid" $N "$(awk '$1 == "on_getppid" && NF == 3 { print $2 }' /tmp/at.out)"
assert_eq "the map after the end" $N "$(count_at $P1 0)"
assert_eq "A's view is gone with attach, A lives" "" "$(xprobectl view list | awk -v a=$A '$1 == a')"
kill -0 $A || fail "A is gone"
end_loop $A /tmp/a.out

# (b)
start_loop /tmp/c.out -e -n $N close
C=$LOOP_PID
xprobectl view add $C > /dev/null || fail "view add C"
xprobectl attach $C $OBJ --pin $P2 -d 600 > /tmp/at2.out 2> /tmp/at2.err &
AT=$!
wait_for /tmp/at2.out "^maps pinned" "attach did not start: $(cat /tmp/at2.err)" 1200
go_loop $C /tmp/c.out
sysloop -n $N close			# B's close(-1), untraced
assert_eq "C's close(-1) calls, read from the syscall's own argument" $N "$(count_at $P2 1)"
assert_eq "C's other closes" 0 "$(count_at $P2 2)"
assert_eq "no getppid in C" 0 "$(count_at $P2 0)"
kill -INT $AT
wait $AT || fail "attach ended with $? at Ctrl-C: $(cat /tmp/at2.err)"
assert_eq "hits attach printed for on_close" $N "$(awk '$1 == "on_close" && NF == 3 { print $2 }' /tmp/at2.out)"
assert_eq "C's view stays: attach did not make it" 1 "$(xprobectl view list | awk -v c=$C '$1 == c' | wc -l)"
assert_eq "C's hooks are gone (the module's guard may stay)" "" \
	"$(xprobectl hook list $C | awk 'NR > 1 && !/the module.s/')"
xprobectl view del $C > /dev/null
end_loop $C /tmp/c.out

# (e)
uhtarget -t 1 -n $N -g > /tmp/p.out 2>&1 &
P=$!
uhtarget -t 1 -n $N -g > /tmp/q.out 2>&1 &
Q=$!
wait_for /tmp/p.out '^ready' "uhtarget P did not start"
wait_for /tmp/q.out '^ready' "uhtarget Q did not start"
xprobectl attach $P $OBJ --pin $P3 > /tmp/at3.out 2> /tmp/at3.err &
AT=$!
wait_for /tmp/at3.out "^maps pinned" "attach did not start: $(cat /tmp/at3.err)" 1200
assert_match "the uprobe, bound to P" "^on_uh_add \(uprobe/.*\): a uprobe bound to pid $P" "$(cat /tmp/at3.out)"
kill -HUP $P $Q
wait_for /tmp/p.out '^ok calls' "uhtarget P did not finish" 6000
wait_for /tmp/q.out '^ok calls' "uhtarget Q did not finish" 6000
assert_match "P's own count of its calls" "^ok calls=$N " "$(grep '^ok calls' /tmp/p.out)"
assert_eq "P's uh_add calls, in the object's map" $N "$(count_at $P3 3)"
assert_eq "P's uh_add returns" $N "$(count_at $P3 4)"
kill -TERM $P $Q
wait $AT || fail "attach ended with $? at P's exit: $(cat /tmp/at3.err)"
wait $P $Q

# (c) hookcount.bpf.o: a raw_tp, a kprobe program without a function, a
# sleepable uprobe (beside its two that would fit: xprobes_hook, sys_enter)
start_loop /tmp/d.out -e -n 10 getppid
D=$LOOP_PID
expect_rc "an object with programs that cannot run per process" 1 xprobectl attach $D /xp/bpf/hookcount.bpf.o
assert_match "the raw_tp without a tracepoint" "reads_past \(raw_tp\): refused: a kind of tracepoint program" "$OUT"
assert_match "the kprobe without a function" "count_regs \(kprobe\): refused: no function" "$OUT"
assert_match "the uprobe without a place" "sleepable \(uprobe.s\): refused: a user-space probe without a place" "$OUT"
assert_match "nothing attached" "nothing attached: 3 of the 5 programs" "$OUT"
assert_eq "no view made" "" "$(xprobectl view list | awk -v d=$D '$1 == d')"
expect_rc "an object with one program that fits and two that do not" 1 \
	xprobectl attach $D /xp/tbpf/attachmixed.bpf.o
assert_match "the kretprobe's reason" "kret \(kretprobe/__x64_sys_getppid\): refused: a return probe" "$OUT"
assert_match "the uretprobe's offset" "uret_off \(uretprobe/.*\): refused: .*a return probe takes no offset" "$OUT"
assert_match "nothing attached" "nothing attached: 2 of the 3 programs" "$OUT"
assert_eq "no view made" "" "$(xprobectl view list | awk -v d=$D '$1 == d')"
assert_eq "no hook made" "" "$(xprobectl hook list | sed 1d)"
end_loop $D /tmp/d.out

# (f)
start_loop /tmp/e.out -e -n $N selfsig
E=$LOOP_PID
start_loop /tmp/f.out -e -n $N selfsig
F=$LOOP_PID
xprobectl attach $E /xp/tbpf/attachtp.bpf.o --pin $P4 > /tmp/at4.out 2> /tmp/at4.err &
AT=$!
wait_for /tmp/at4.out "^maps pinned" "attach (tp_btf) did not start: $(cat /tmp/at4.err)" 1200
note "$(tr '\n' ';' < /tmp/at4.out)"
assert_eq "E's view has a tracepoint hook" tp "$(xprobectl hook list $E | awk 'NR == 2 { print $8 }')"
kill -USR1 $E; kill -USR1 $F
wait_for /tmp/e.out '^done' "E did not finish" 6000
wait_for /tmp/f.out '^done' "F did not finish" 6000
assert_eq "tp_btf: E's SIGUSR2s to itself, each with its arguments" $N "$(count_at $P4 0)"
assert_eq "tp_btf: nothing else (none of F's)" 0 "$(count_at $P4 1)"
kill -INT $AT
wait $AT || fail "attach (tp_btf) ended with $?: $(cat /tmp/at4.err)"
end_loop $E /tmp/e.out
end_loop $F /tmp/f.out

# (d)
expect_rc "a missing object" 1 xprobectl attach $$ /nonexistent.bpf.o
assert_eq "one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
expect_rc "not a BPF object" 1 xprobectl attach $$ /etc/passwd
assert_match "says what it wants" "BPF object" "$OUT"
assert_eq "one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
expect_rc "no such process" 1 xprobectl attach 999999 $OBJ
expect_rc "no object" 2 xprobectl attach $$
