# Coherence with other users' kprobes (tracefs kprobe events) in A's private
# copy: one elsewhere in a hooked function fires for A while enabled; one
# exactly on a hooked instruction displaces the hook (the kernel's write
# wins) instead of breaking anything. 50 enable/disable rounds each.
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
R=$(scaled 50 2)
i=1
while [ $i -le $R ]; do
	echo 1 > $T/events/kprobes/xpother/enable
	if [ $((i % 25)) = 0 ]; then
		sleep 0.3
		n=$(grep -c "sysloop-$A .*xpother" $T/trace)
		[ "$n" -gt 0 ] || fail "round $i: A did not hit the other kprobe"
		note "ok: round $i: the other kprobe fired $n times for A"
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
