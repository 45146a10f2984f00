# The dispatcher acts only for the view's own tasks: interrupts that run on
# the traced CR3 execute the view's copy too, and are counted as dropped, not
# as hits. A spins in user space (no system calls) with a hook on
# update_process_times, which only the timer interrupt calls: while A runs,
# ticks land on A's CR3, so the hook traps (dropped > 0) but never hits.
. /xp/selftests/tests/lib.sh
F=update_process_times

sysloop -n 0 spin &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A $F) || fail "hook add $F: $id"
sleep 2
hits=$(hook_col $id 5)
dropped=$(hook_col $id 6)
note "after 2 s: hits $hits, dropped $dropped"
assert_eq "hits from interrupt context" 0 "$hits"
[ "$dropped" -gt 0 ] || fail "no timer tick was seen on A's CR3 (dropped = 0)"
note "ok: $dropped ticks on A's CR3 were dropped"
xprobectl view del $A
kill $A
wait $A
