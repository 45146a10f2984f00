# Coherence with static keys: with A signalling itself hot through a hooked
# function, toggle 100 times (25 on the debug kernel) a tracepoint whose site is in A's private copy
# (signal_generate in __send_signal_locked). A's events appear while it is
# enabled (A's copy follows the kernel's patching), none after; the audit
# finds nothing to repair; no splat.
. /xp/selftests/tests/lib.sh
D0=$(status_field hooks_displaced)	# the counter is the module's, since it loaded
trap reset_tracing EXIT
F=__send_signal_locked
T=/sys/kernel/tracing
E=$T/events/signal/signal_generate/enable

sysloop -n 0 selfsig &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
ids=$(hook_all_pages $A $F) || fail "cannot hook $F"
jump_among $ids
[ -n "$ids" ] || fail "no hook in $F"
note "hooks on every page of $F: $(echo $ids)"
# Where the compiler did not inline the tracepoint's wrapper (the debug
# kernel), the static-key site is in that copy, outside A's pages: no write
# can be mirrored then. (Hooking the wrapper as well made 25 toggles run past
# 10 minutes on the debug kernel: under investigation, docs/debug.md.)
SITE_IN_VIEW=1
[ -n "$(ksym trace_signal_generate)" ] && SITE_IN_VIEW=
echo > $T/trace
R=$(scaled 100)
i=1
while [ $i -le $R ]; do
	echo 1 > $E
	if [ $((i % 25)) = 0 ]; then
		trace_shows "signal_generate: sig=12 .* pid=$A " "round $i: signal_generate events from A while enabled"
	fi
	echo 0 > $E
	i=$((i + 1))
done
echo > $T/trace
sleep 0.5
assert_eq "events from A after disabling" 0 "$(grep -c "pid=$A " $T/trace)"
for id in $ids; do
	[ "$(hook_col $id 5)" -gt 0 ] || [ "$(hook_col $id 6)" -ge 0 ] || fail "hook $id"
done
[ "$(hook_col $(echo $ids | cut -d' ' -f1) 5)" -gt 0 ] || fail "the first hook never hit"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"
assert_eq "hooks displaced" $((D0 + 0)) "$(status_field hooks_displaced)"
note "text writes mirrored: $(status_field text_writes_mirrored)"
if [ -n "$SITE_IN_VIEW" ]; then
	[ "$(status_field text_writes_mirrored)" -gt 0 ] || fail "no kernel text write was mirrored"
else
	note "the tracepoint's site is in an out-of-line wrapper, not in A's copy: mirroring not judged"
fi
xprobectl view del $A
kill $A; wait $A
