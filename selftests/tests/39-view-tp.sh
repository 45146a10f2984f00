# Per-process tracepoints (hooks/tracepoint.c): hook add PID
# tracepoint:signal:signal_generate turns the kernel's own tracepoint on in
# A's view only. (a) The hook lists as KIND tp, private; A's copy of each
# call site is a jump, the shared text (what the shell runs) keeps the NOP.
# (b) A and B each send themselves N signals at once: the hook counts A's N,
# exactly. (c) A raw_tp and a tp_btf program written for the tracepoint,
# pinned by bpftool, run unchanged on A's hits and read the right arguments
# (the signal, the target task). (d) Refusals with their reasons (one, on
# 6.12: notifier_run, whose site the trap handler runs before it could
# answer our int3 there). (e)
# Another tool (tracefs) turns the tracepoint on everywhere: the hook goes
# global, tracefs sees A's and B's events, the hook still only A's; the
# same program with a PID test (pidfilter's) on the hook and on the global
# raw tracepoint counts A's N both, the global one runs for B's too; off
# again, it goes back to private, A's copy jumps again. (f) 40 rounds of
# that toggling while A signals itself: no splat, the audit finds nothing.
# (g) hook del and view del give the shell's bytes back to A; rmmod with a
# live hook, then tracefs still works for everyone.
. /xp/selftests/tests/lib.sh
N=$(scaled 1000)
T=/sys/kernel/tracing
E=$T/events/signal/signal_generate/enable
P=/sys/fs/bpf/xp_test39p M=/sys/fs/bpf/xp_test39m PF=/sys/fs/bpf/xp_test39pf
rm -rf $P $M $PF
trap 'reset_tracing; rm -rf $P $M $PF' EXIT

count_at() {
	bpftool -j map dump pinned $M/counts > /tmp/tp-map.json || fail "bpftool map dump"
	jsonq /tmp/tp-map.json "[$1].formatted.value"
}
tp_json() { xprobectl hook list --json | tr '{' '\n' | grep "\"id\":$1,"; }
is_global() { tp_json $1 | grep -q '"global":true' && echo global || echo private; }
# hooked_pair WHAT: A and B ready to send themselves N signals, the
# tracepoint hooked in A's view (hook id in id)
hooked_pair() {
	start_loop /tmp/a.out -e -n $N selfsig
	A=$LOOP_PID
	start_loop /tmp/b.out -e -n $N selfsig
	B=$LOOP_PID
	xprobectl view add $A > /dev/null || fail "view add ($1)"
	id=$(xprobectl hook add $A tracepoint:signal:signal_generate) || fail "hook add ($1): $id"
}

# (a)
hooked_pair a
assert_eq "the hook's kind" tp "$(hook_col $id 8)"
sites=$(json_get "$(tp_json $id)" sites)
[ "$sites" -ge 1 ] 2>/dev/null || fail "no call site listed: '$sites'"
assert_eq "nobody else has it on" private "$(is_global $id)"
site=$(hook_col $id 3)
note "hook $id: $sites call site(s), the first at $site ($(hook_col $id 4))"
a0=$(peek_byte $A $site) s0=$(peek_byte $$ $site)
assert_match "A's copy jumps at the site" '^(eb|e9)$' "$a0"
assert_match "the shared text keeps the NOP" '^(66|0f)$' "$s0"

# (b)
kill -USR1 $A; kill -USR1 $B
wait_for /tmp/a.out '^done' "A did not finish" 6000
wait_for /tmp/b.out '^done' "B did not finish" 6000
assert_eq "hits: A's signals, none of B's" $N "$(hook_col $id 5)"
note "dropped $(hook_col $id 6), nested $(hook_col $id 7)"
end_loop $A /tmp/a.out
end_loop $B /tmp/b.out

# (c)
# with_prog PROG SPELLING: a new A, hooked, running PROG on its N signals
with_prog() {
	start_loop /tmp/a.out -e -n $N selfsig
	A=$LOOP_PID
	xprobectl view add $A > /dev/null || fail "view add ($1)"
	id=$(xprobectl hook add $A $2:signal:signal_generate) || fail "hook add ($2:): $id"
	xprobectl hook prog $id $P/$1 || fail "hook prog $1"
	go_loop $A /tmp/a.out
}
bpftool prog loadall /xp/tbpf/tpcount.bpf.o $P pinmaps $M || fail "bpftool loadall"
with_prog raw_sig tp
assert_eq "raw_tp: SIGUSR2 to itself, each time" $N "$(count_at 0)"
assert_eq "raw_tp: anything else" 0 "$(count_at 1)"
prog=$(json_get "$(tp_json $id)" prog)
assert_eq "the list shows the program" "$(bpftool prog show pinned $P/raw_sig | sed -n 's/^\([0-9]*\):.*/\1/p')" "$prog"
end_loop $A /tmp/a.out
with_prog btf_sig tracepoint
assert_eq "tp_btf: SIGUSR2 to itself, each time" $N "$(count_at 2)"
assert_eq "tp_btf: anything else" 0 "$(count_at 3)"

# (d)
refused_with "a program reading a sixth argument" 1 "reads 48 bytes of context" \
	xprobectl hook prog $id $P/raw_past
refused_with "a tp_btf program for another tracepoint" 1 "not a tp_btf one for 'signal_generate'" \
	xprobectl hook prog $id $P/btf_switch
refused_with "a sleepable program" 1 "not a raw_tp or tp_btf BPF program" \
	xprobectl hook prog $id $P/sleepy
refused_with "the same tracepoint twice" 1 "already has hook $id" \
	xprobectl hook add $A tracepoint:signal:signal_generate
refused_with "the wrong category" 1 "is in category 'signal', not 'sched'" \
	xprobectl hook add $A tracepoint:sched:signal_generate
refused_with "no such tracepoint" 1 "no tracepoint 'no_such_tp'" \
	xprobectl hook add $A tracepoint:signal:no_such_tp
refused_with "a tracepoint with a function of its own" 1 "runs a function of its own" \
	xprobectl hook add $A tracepoint:exceptions:page_fault_user
if [ -d $T/events/notifier/notifier_run ]; then	# 6.2 on
	refused_with "a tracepoint our trap handler runs" 1 "on the path our trap handler runs" \
		xprobectl hook add $A tracepoint:notifier:notifier_run
else
	note "no notifier:notifier_run on this kernel (6.2 on)"
fi
refused_with "no category" 2 "tracepoint:CATEGORY:NAME" xprobectl hook add $A tracepoint:signal
refused_with "--trap" 2 "takes no --return, --trap" \
	xprobectl hook add --trap $A tracepoint:signal:signal_generate
xprobectl hook prog $id --detach || fail "hook prog --detach"

# (e)
end_loop $A /tmp/a.out
hooked_pair e
y0=$(status_field tp_yields)
echo > $T/trace
echo 1 > $E
assert_eq "tracefs on: the hook says global" global "$(is_global $id)"
assert_match "A's copy holds the kernel's jump" '^(eb|e9)$' "$(peek_byte $A $site)"
assert_match "so does the shared text" '^(eb|e9)$' "$(peek_byte $$ $site)"
# The same program (a PID test, two adds) on the hook and, as bpftrace -p
# attaches it, on the global raw tracepoint.
pidfilter_both $A $id signal:signal_generate $PF
kill -USR1 $A; kill -USR1 $B
wait_for /tmp/a.out '^done' "A did not finish" 6000
wait_for /tmp/b.out '^done' "B did not finish" 6000
pidfilter_both_end $id
echo 0 > $E
note "pidfilter on the hook: $(cat /tmp/pf-view.out | tail -n 1); on the global tracepoint: $(tail -n 1 /tmp/pf-global.out)"
assert_eq "the program on A's hook counted A's signals" "hits $N seen $N" "$(tail -n 1 /tmp/pf-view.out)"
assert_eq "the program on the global tracepoint, PID-tested, counted as many" "hits $N" \
	"$(tail -n 1 /tmp/pf-global.out | cut -d' ' -f1,2)"
seen=$(tail -n 1 /tmp/pf-global.out | cut -d' ' -f4)
[ "$seen" -ge $((2 * N)) ] 2>/dev/null || fail "the global program ran for $seen events, fewer than A's and B's $((2 * N))"
assert_eq "while global, the hook counted A's signals only" $N "$(hook_col $id 5)"
na=$(grep -c "signal_generate: sig=12 .* pid=$A " $T/trace)
nb=$(grep -c "signal_generate: sig=12 .* pid=$B " $T/trace)
note "tracefs saw $na of A's and $nb of B's signals"
assert_eq "tracefs saw A's signals" $N "$na"
assert_eq "tracefs saw B's signals" $N "$nb"
assert_eq "the hook gave A's copy the shared bytes back once" $((y0 + 1)) "$(status_field tp_yields)"
wait_eq private 100 0.05 "the hook did not go back to private" is_global $id
assert_match "private again: A's copy jumps" '^(eb|e9)$' "$(peek_byte $A $site)"
assert_match "the shared text is a NOP again" '^(66|0f)$' "$(peek_byte $$ $site)"
end_loop $A /tmp/a.out
end_loop $B /tmp/b.out

# (f)
start_loop /tmp/a.out -n 0 selfsig
A=$LOOP_PID
kill -USR1 $A
xprobectl view add $A > /dev/null || fail "view add A (f)"
id=$(xprobectl hook add $A tracepoint:signal:signal_generate) || fail "hook add (f): $id"
R=$(scaled 40)
toggling_shell $R $E
touch /tmp/go
wait $S
wait_eq private 100 0.05 "the hook did not go back to private after the toggles" is_global $id
h1=$(hook_col $id 5)
sleep 0.5
[ "$(hook_col $id 5)" -gt "$h1" ] || fail "after $R toggles, A's signals are no longer counted"
note "after $R toggles: $(status_field tp_yields) yields, $(status_field tp_settles) settles"
xprobectl audit > /tmp/audit.out 2>&1 || fail "audit: $(cat /tmp/audit.out)"

# (g)
xprobectl hook del $id || fail "hook del"
assert_eq "hook del: A runs the shared bytes" "$s0" "$(peek_byte $A $site)"
id=$(xprobectl hook add $A tracepoint:signal:signal_generate) || fail "hook add (g): $id"
xprobectl view del $A || fail "view del"
xprobectl view add $A > /dev/null || fail "view add (g)"
id=$(xprobectl hook add $A tracepoint:signal:signal_generate) || fail "hook add (g2): $id"
unload_module
echo > $T/trace
echo 1 > $E
trace_shows "signal_generate: sig=12 .* pid=$A " "after rmmod, tracefs sees A's signals"
echo 0 > $E
kill $A
wait $A 2> /dev/null
load_module
