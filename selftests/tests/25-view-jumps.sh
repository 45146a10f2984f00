# Jump hooks: a hook on a function's first instruction (a 1-byte push) becomes
# a 5-byte jump over several whole instructions into its own entry, once an
# RCU-tasks grace period after its int3 went in has passed. (a) Its
# process sees the jmp where everyone else sees the kernel's bytes; it counts
# exactly A's calls, and so does the BPF program behind it; an int3 (--trap)
# and a call hook in other views count the same calls of their own process.
# (b) A hook inside the bytes a jump covers is refused; a hook whose jump
# would cover another hook stays an int3. (c) $CYCLES add/del cycles of the
# hook while 4 threads call the function (most are deleted while their int3
# waits to become a jump), then $LIVE cycles of a live jump (add, wait for
# the jump, delete: each costs a grace period), then exact counts on a known
# loop. (d) rmmod with jump hooks live under 4 threads. (e) Other users'
# kprobes on the instructions a live jump covers, its first and the one
# after: registering one first makes the jump an int3 again, so the kprobe
# fires for the traced process, which keeps running, and the hook is
# displaced; a jump is not made where a kprobe is registered already.
. /xp/selftests/tests/lib.sh
trap reset_tracing EXIT
T=/sys/kernel/tracing
F=__x64_sys_getppid
N=$(scaled 1000)
CYCLES=${XP_CYCLES:-$(scaled 1000 10)}
LIVE=${XP_LIVE_CYCLES:-$(scaled 50 5)}

# add_json PID WHERE [FLAG]: add a hook, print its JSON (fails if refused)
add_json() { xprobectl hook add --json ${3:-} "$1" "$2"; }

rm -f /tmp/hc.out	# not another test's (the wait below could read it first)
hookcount > /tmp/hc.out &
HC=$!
wait_for /tmp/hc.out attached "hookcount did not attach"
start_loop /tmp/a.out -e -n $N -t 4 getppid
A=$LOOP_PID
start_loop /tmp/c.out -e -n $N getppid
C=$LOOP_PID
xprobectl view add $A > /dev/null || fail "view add A"
xprobectl view add $C > /dev/null || fail "view add C"
E=$(entry_off $$ $F)

# (a)
j=$(add_json $A $F) || fail "hook add at $F"
id=$(json_get "$j" id)
assert_eq "the first instruction's hook starts as an int3" int3 "$(json_get "$j" kind)"
assert_eq "that becomes a jump" jump "$(json_get "$j" pending)"
wait_jump $id
bytes=$(json_get "$j" bytes) insns=$(json_get "$j" instructions)
[ "$bytes" -ge 5 ] && [ "$insns" -ge 2 ] || fail "a jump over $bytes bytes, $insns instructions"
note "ok: $F+$E: a jump over $bytes bytes ($insns instructions): $(xprobectl peek $A $F+$E 5 | cut -d' ' -f2-)"
assert_eq "A executes a jmp there" e9 "$(peek_byte $A $F+$E)"
assert_eq "everyone else sees the kernel's bytes" "$(xprobectl peek $$ $F+$E 8)" \
	"$(xprobectl peek $C $F+$E 8)"
assert_eq "hook list kind" jump "$(hook_col $id 8)"
assert_eq "hook list bytes/instructions" "$bytes/$insns" "$(hook_col $id 9)"
j=$(add_json $C $F --trap) || fail "hook add --trap in C"
cid=$(json_get "$j" id)
assert_eq "--trap keeps an int3" int3 "$(json_get "$j" kind)"

# (b) In A's view: the instruction after the first lies under the jump.
case $(peek_byte $$ $F+$E) in
5[0-7]) second=$((E + 1)) ;;	# push %reg
41) second=$((E + 2)) ;;	# push %r8-15
*) fail "$F does not start with a push: $(xprobectl peek $$ $F+$E 8)" ;;
esac
out=$(xprobectl hook add $A $F+$second 2>&1) && fail "a hook inside the jump was placed: $out"
assert_match "the refusal names the covering hook" "hook $id's jump covers" "$out"
xprobectl hook del $id || fail "hook del"
# With a hook on the second instruction first, the first stays an int3.
j=$(add_json $A $F+$second) || fail "hook add at $F+$second"
sid=$(json_get "$j" id)
j=$(add_json $A $F) || fail "hook add at $F beside $F+$second"
assert_eq "a jump that would cover another hook stays an int3" int3 "$(json_get "$j" kind)"
assert_match "and says why" "another hook" "$(json_get "$j" why_int3)"
xprobectl hook del $(json_get "$j" id)
xprobectl hook del $sid
id=$(json_get "$(add_json $A $F)" id)
wait_jump $id

go_loop $A /tmp/a.out
go_loop $C /tmp/c.out
assert_eq "hits of the jump hook (4 threads)" $((4 * N)) "$(hook_col $id 5)"
assert_eq "dropped of the jump hook" 0 "$(hook_col $id 6)"
assert_eq "hits of C's int3 on the same instruction" $N "$(hook_col $cid 5)"
sysloop -n $N getppid
assert_eq "an untraced process adds nothing" $((4 * N)) "$(hook_col $id 5)"
kill -USR1 $HC
wait $HC
assert_eq "BPF count for A, jump hook" $((4 * N)) "$(awk -v id=$id -v a=$A '$1 == id && $2 == a { print $3 }' /tmp/hc.out)"
assert_eq "BPF count for C, int3 hook" $N "$(awk -v id=$cid -v a=$C '$1 == id && $2 == a { print $3 }' /tmp/hc.out)"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
end_loop $C /tmp/c.out
end_loop $A /tmp/a.out

# (c) Cycles under 4 hammering threads, then an exact count.
sysloop -n 0 -t 4 getppid &
H=$!
xprobectl view add $H > /dev/null || fail "view add H"
t0=$(date +%s)
expect_rc "$CYCLES jump hook add/del cycles under 4 threads" 0 xpcycle hook $H $F $CYCLES
note "ok: $CYCLES cycles in $(( $(date +%s) - t0 )) s"
t0=$(date +%s) i=0
while [ $i -lt $LIVE ]; do
	id=$(xprobectl hook add $H $F) || fail "live cycle $i: hook add"
	wait_jump $id
	xprobectl hook del $id || fail "live cycle $i: hook del"
	i=$((i + 1))
done
note "ok: $LIVE live jump cycles in $(( $(date +%s) - t0 )) s"
kill -0 $H || fail "the hammered process died"
kill $H
wait $H
start_loop /tmp/h.out -e -n $N -t 4 getppid
H=$!
xprobectl view add $H > /dev/null || fail "view add H2"
id=$(xprobectl hook add $H $F) || fail "hook add after the cycles"
wait_jump $id
go_loop $H /tmp/h.out
assert_eq "exact count after the cycles" $((4 * N)) "$(hook_col $id 5)"
xprobectl view del $H || fail "view del H2"
end_loop $H /tmp/h.out
assert_eq "hooks at the end" 0 "$(status_field hooks)"
assert_eq "memory at the end" 0 "$(status_field memory_bytes)"

# (d) rmmod with jump hooks live while 4 threads run through them.
sysloop -n 0 -t 4 getppid &
D=$!
xprobectl view add $D > /dev/null || fail "view add D"
for f in $F __x64_sys_getpid schedule; do
	xprobectl hook add $D $f > /dev/null || fail "hook add $f"
done
wait_settled
note "D's hooks: $(xprobectl hook list $D | awk 'NR > 1 { print $4, $8, $9 }' | tr '\n' ';')"
sleep 0.5
rmmod xprobes || fail "rmmod with live jump hooks"
kill -0 $D || fail "the process died with the module"
kill $D; wait $D
load_module
assert_eq "no views after reload" 0 "$(status_field views)"

# (e)
sysloop -n 0 getppid &
K=$!
xprobectl view add $K > /dev/null || fail "view add K"
for at in $E $second; do
	id=$(xprobectl hook add $K $F) || fail "hook add in K"
	wait_jump $id
	echo "p:xpjump $F+$at" > $T/kprobe_events || fail "a kprobe at $F+$at, under a live jump"
	assert_eq "K's hook is an int3 again" int3 "$(hook_col $id 8)"
	kprobe_fired xpjump $K "the kprobe at $F+$at"
	kill -0 $K || fail "K died"
	assert_match "the hook is displaced" "displaced" "$(xprobectl hook list $K)"
	echo 0 > $T/events/kprobes/xpjump/enable
	echo "-:xpjump" >> $T/kprobe_events
	assert_match "audit" "^0 private page" "$(xprobectl audit)"
	xprobectl hook del $id || fail "hook del"
	assert_eq "K sees the kernel's bytes again" "$(xprobectl peek $$ $F+$E 8)" "$(xprobectl peek $K $F+$E 8)"
done
echo "p:xpjump $F+$second" > $T/kprobe_events || fail "a kprobe at $F+$second"
j=$(add_json $K $F) || fail "hook add over a registered kprobe"
id=$(json_get "$j" id)
wait_settled
assert_eq "no jump over a registered kprobe" int3 "$(hook_col $id 8)"
assert_match "and it says why" "kprobe is registered" "$(xprobectl hook list --json $K)"
echo "-:xpjump" >> $T/kprobe_events
xprobectl view del $K || fail "view del K"
kill $K; wait $K
