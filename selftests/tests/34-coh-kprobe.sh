# Coherence with other users' kprobes (tracefs kprobe events) in A's private
# copy: one elsewhere in a hooked function fires for A while enabled; one
# exactly on a hooked instruction displaces the hook (the kernel's write
# wins) instead of breaking anything. 50 enable/disable rounds each. (c) One
# up to 4 bytes before a jump over several instructions never meets it live.
. /xp/selftests/tests/lib.sh
trap reset_tracing EXIT
F=__x64_sys_getppid
T=/sys/kernel/tracing
D0=$(status_field hooks_displaced)	# the counter is the module's, since it loaded

sysloop -n 0 getppid &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
# Our hook, and the other kprobe at least 5 bytes before it: even optimized
# (a 5-byte jump), that one never covers the hooked instruction.
other=$(insn_at $A $F $(($(entry_off $A $F) + 1))) || fail "no second instruction in $F"
hooked=$(insn_at $A $F $((other + 5))) || fail "no instruction 5 bytes after $F+$other"
id=$(xprobectl hook add $A $F+$hooked) || fail "hook add"

echo "p:xpother $F+$other" > $T/kprobe_events || fail "kprobe_events"
R=$(scaled 50 5)
i=1
while [ $i -le $R ]; do
	echo 1 > $T/events/kprobes/xpother/enable
	if [ $((i % 25)) = 0 ] || [ $i = $R ]; then
		trace_shows "sysloop-$A .*xpother" "round $i: the other kprobe fired for A"
	fi
	echo 0 > $T/events/kprobes/xpother/enable
	i=$((i + 1))
done
before=$(hook_col $id 5)
sleep 0.3
[ "$(hook_col $id 5)" -gt "$before" ] || fail "our hook stopped counting"
assert_eq "hooks displaced so far" $((D0 + 0)) "$(status_field hooks_displaced)"

echo > $T/trace
echo "-:xpother" >> $T/kprobe_events
echo "p:xpsame $F+$hooked" >> $T/kprobe_events || fail "kprobe on the hooked instruction"
kprobe_fired xpsame $A "the kprobe on the hooked instruction"
assert_eq "hooks displaced" $((D0 + 1)) "$(status_field hooks_displaced)"
assert_match "hook list says so" "displaced" "$(xprobectl hook list)"
echo 0 > $T/events/kprobes/xpsame/enable
echo "-:xpsame" >> $T/kprobe_events
assert_match "audit" "^0 private page" "$(xprobectl audit)"
xprobectl hook del $id || fail "hook del of a displaced hook"
assert_eq "A sees the kernel's bytes again" "$(xprobectl peek $$ $F+$hooked 4)" "$(xprobectl peek $A $F+$hooked 4)"
xprobectl view del $A
kill $A; wait $A

# (c) A kprobe up to 4 bytes before a jump over several instructions (issue
# 35). kprobes marks a probe optimized as soon as it queues it, and from then
# on a hit there runs the instructions that start in its first 5 bytes from
# a detour buffer and comes back behind the last of them: inside our jump's
# bytes, in the copy. Registered once the jump is live, the kprobe takes it
# apart first; registered before, it keeps the jump from going live. B
# sleeps every 100 calls, so it runs finish_task_switch() through both all
# the time.
G=finish_task_switch.isra.0
[ -n "$(ksym $G)" ] || G=finish_task_switch
sysloop -n 0 -i 100 getppid > /dev/null &
B=$!
xprobectl view add $B > /dev/null || fail "view add B"
# The instruction boundaries of G's first bytes; then p, a short
# instruction, and h right behind it, whose jump covers several
# instructions and ends past where the detour of an optimized kprobe at p
# would come back (the first boundary 5 bytes or more after p).
bs= o=$(entry_off $B $G)
while [ $o -lt 48 ] && o=$(insn_at $B $G $o); do
	bs="$bs $o"
	o=$((o + 1))
done
hid= last=
for h in $bs; do
	p=$last last=$h
	[ -n "$p" ] && [ $((h - p)) -lt 5 ] || continue
	back=
	for b in $bs; do
		[ -z "$back" ] && [ $b -ge $((p + 5)) ] && back=$b
	done
	[ -n "$back" ] || continue
	j=$(xprobectl hook add --json $B $G+$h) || fail "hook add $G+$h"
	if [ "$(json_get "$j" instructions)" -gt 1 ] && [ $back -lt $((h + $(json_get "$j" bytes))) ]; then
		hid=$(json_get "$j" id)
		break
	fi
	xprobectl hook del $(json_get "$j" id)
done
[ -n "$hid" ] || fail "no jump over several instructions right behind a short one in $G (boundaries:$bs)"
wait_jump $hid
note "a jump at $G+$h ($(hook_col $hid 9) bytes/instructions), a kprobe at $G+$p, whose detour would come back at $G+$back"
echo "p:xpnear $G+$p" > $T/kprobe_events || fail "kprobe at $G+$p"
echo 1 > $T/events/kprobes/xpnear/enable
why=$(json_get "$(xprobectl hook list --json | tr '{' '\n' | grep "\"id\":$hid,")" why_int3)
assert_eq "the jump went back to an int3 before the kprobe was prepared" int3 "$(hook_col $hid 8)"
assert_match "and says why" "kprobe was registered where it would run into the jump" "$why"
i=0 paddr=$(printf '%x' $((0x$(ksym $G) + p)))
until grep -q "^$paddr .*OPTIMIZED" /sys/kernel/debug/kprobes/list 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 50 ] || break
	sleep 0.1
done
note "kprobe at $G+$p: $(grep "^$paddr" /sys/kernel/debug/kprobes/list)"
sleep 0.5
kill -0 $B || fail "B died running through the kprobe before the jump"
echo 0 > $T/events/kprobes/xpnear/enable
echo "-:xpnear" >> $T/kprobe_events
xprobectl hook del $hid || fail "hook del"
# The kprobe while the hook waits to become a jump (an int3 until an
# RCU-tasks grace period has passed): the optimizer finds it and leaves the
# hook an int3 (or, if the jump went live first, it is taken apart).
hid=$(xprobectl hook add $B $G+$h) || fail "hook add $G+$h again"
echo "p:xpnear $G+$p" > $T/kprobe_events || fail "kprobe at $G+$p again"
echo 1 > $T/events/kprobes/xpnear/enable
wait_settled
assert_eq "a jump behind a kprobe stays an int3" int3 "$(hook_col $hid 8)"
why=$(json_get "$(xprobectl hook list --json | tr '{' '\n' | grep "\"id\":$hid,")" why_int3)
assert_match "and says why" "kprobe (is|was) registered" "$why"
sleep 0.5
kill -0 $B || fail "B died"
xprobectl hook del $hid || fail "hook del"
# The kprobe first: behind it (or inside its jump, once kprobes optimized
# it) no jump goes live.
if hid=$(xprobectl hook add $B $G+$h 2> /tmp/near.err); then
	wait_settled
	assert_eq "a jump behind a kprobe stays an int3" int3 "$(hook_col $hid 8)"
else
	assert_match "refused inside the kprobe's jump" "another kprobe's int3 or jump" "$(cat /tmp/near.err)"
fi
echo 0 > $T/events/kprobes/xpnear/enable
echo "-:xpnear" >> $T/kprobe_events
assert_match "audit" "^0 private page" "$(xprobectl audit)"
xprobectl view del $B
kill $B; wait $B
