# kprobes switched off under live views. Views follow kernel text patching
# through a kprobe on __text_poke: with kprobes disarmed
# (debugfs kprobes/enabled = 0), the next patch made through a traced CR3
# would read back a stale copy and hit __text_poke's BUG_ON(memcmp). While
# views exist the disarm is refused (EBUSY) and every view ends with a reason;
# then the traced shell toggles a tracepoint whose site is in its (former)
# copy: no BUG. Tried again, the disarm goes through, and views are refused
# until kprobes are armed again.
. /xp/selftests/tests/lib.sh
K=/sys/kernel/debug/kprobes/enabled
T=/sys/kernel/tracing
E=$T/events/signal/signal_generate/enable
F=__send_signal_locked
trap 'echo 1 > $K; reset_tracing' EXIT
[ -w $K ] || skip "no $K"

toggling_shell 20 $E
xprobectl view add $S > /dev/null || fail "view add"
hook_all_pages $S $F > /dev/null || fail "cannot hook $F"
# A view with jump hooks ends after RCU-tasks grace periods (view.c): the
# wait is long, and how long it took is noted.
rm -f /tmp/ev.out	# another test's copy could satisfy the wait before the shell truncates it
xpevents -n 1 -t 60 > /tmp/ev.out &
EV=$!
wait_for /tmp/ev.out listening "xpevents did not subscribe"
t0=${EPOCHREALTIME:-0}

if echo 0 > $K 2> /tmp/k.err; then
	fail "kprobes were disarmed under a live view"
fi
note "ok: disarm refused while a view exists: $(cat /tmp/k.err)"
wait $EV
note "the view ended $(awk -v a=$t0 -v b=${EPOCHREALTIME:-0} 'BEGIN { printf "%.1f", b - a }') s after the refused disarm"
assert_match "the view ended, with the reason" "^ended $S .*kprobes were being disarmed" "$(cat /tmp/ev.out)"
assert_eq "views left" 0 "$(status_field views)"
assert_eq "kprobes still armed" 1 "$(cat $K)"

# The traced shell patches text now: its view is gone, nothing to trip on.
touch /tmp/go
wait $S || fail "the traced shell failed"

# Again: no view, so the disarm goes through; views are refused meanwhile.
echo 0 > $K || fail "disarm refused with no view"
assert_eq "kprobes disarmed" 0 "$(cat $K)"
sleep 100 &
P=$!
expect_rc "view add with kprobes disarmed" 1 xprobectl view add $P
assert_match "the reason" "kprobes are disarmed" "$OUT"
echo 1 > $K || fail "arm"
xprobectl view add $P > /dev/null || fail "view add after kprobes were armed again"
echo 1 > $K || fail "an arming write is let through under a view"
xprobectl view del $P
kill $P
