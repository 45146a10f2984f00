# The traced process patches the kernel itself: a traced shell enables and
# disables a tracepoint whose site is in its own private copy, 100 times, and
# signals itself in between. The kernel verifies its writes through the
# shell's page tables (the copy): no BUG, its events appear, audit clean.
. /xp/selftests/tests/lib.sh
trap reset_tracing EXIT
F=__send_signal_locked
T=/sys/kernel/tracing
E=$T/events/signal/signal_generate/enable

toggling_shell 100 $E
xprobectl view add $S > /dev/null || fail "view add"
ids=$(hook_all_pages $S $F) || fail "cannot hook $F"
echo > $T/trace
touch /tmp/go
wait $S || fail "the traced shell failed"
n=$(grep -c "signal_generate: sig=12 .* pid=$S " $T/trace)
note "events from the traced shell: $n"
[ "$n" -ge 100 ] || fail "expected 100 events from the shell, got $n"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"
