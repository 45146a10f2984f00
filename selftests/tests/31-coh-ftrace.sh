# Coherence with ftrace: the function tracer on a function in A's private
# copy, switched on and off 100 times (25 on the debug kernel) while A runs through it; A shows up in
# the trace while it is on, not after; audit clean; no splat.
. /xp/selftests/tests/lib.sh
trap reset_tracing EXIT
F=__send_signal_locked
T=/sys/kernel/tracing

sysloop -n 0 selfsig &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
ids=$(hook_all_pages $A $F) || fail "cannot hook $F"
jump_among $ids
echo $F > $T/set_ftrace_filter || fail "set_ftrace_filter"
echo > $T/trace
R=$(scaled 100)
i=1
while [ $i -le $R ]; do
	echo function > $T/current_tracer
	if [ $((i % 25)) = 0 ]; then
		trace_shows "sysloop-$A .* $F" "round $i: calls of $F by A in the function trace"
	fi
	echo nop > $T/current_tracer
	i=$((i + 1))
done
echo > $T/trace
sleep 0.5
assert_eq "A in the trace after the tracer is off" 0 "$(grep -c "sysloop-$A " $T/trace)"
echo > $T/set_ftrace_filter
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"
xprobectl view del $A
kill $A; wait $A
