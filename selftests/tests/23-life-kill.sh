# SIGKILL of the traced process while its view or hooks are being set up, at
# several points; SIGKILL of the controller that owns a view (which then goes,
# unless it was made persistent). Nothing is left behind, no splat.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid

for delay in 0 0.001 0.005 0.01 0.02 0.05 0.1; do
	for round in 1 2 3; do
		sysloop -n 0 getppid &
		A=$!
		( xprobectl view add $A && xprobectl hook add $A $F && xprobectl hook add $A $F+0xa ) \
			> /dev/null 2>&1 &
		C=$!
		sleep $delay
		kill -9 $A
		wait $C
		wait $A 2>/dev/null
	done
done
sleep 1		# the sweeper ends views of dead processes
assert_eq "views after target kills" 0 "$(status_field views)"
assert_eq "memory after target kills" 0 "$(status_field memory_bytes)"

# The controller owns its view: killing it ends the view (at several points).
sysloop -n 0 getppid &
A=$!
for delay in 0 0.002 0.01 0.05 0.2; do
	xpowner $A $F $F+0xa > /tmp/o.out &
	O=$!
	sleep $delay
	kill -9 $O
	wait $O 2>/dev/null
	assert_eq "views after killing the owner ($delay s)" 0 "$(status_field views)"
done
rm -f /tmp/o.out	# a "ready" left by the last run must not count
xpowner $A $F > /tmp/o.out &
O=$!
wait_for /tmp/o.out ready "xpowner did not start"
assert_eq "owned view exists" 1 "$(status_field views)"
kill -9 $O; wait $O 2>/dev/null
assert_eq "owned view gone with its owner" 0 "$(status_field views)"

# A persistent view survives its creator.
rm -f /tmp/o.out
xpowner -p $A $F > /tmp/o.out &
O=$!
wait_for /tmp/o.out ready "xpowner -p did not start"
kill -0 $O 2>/dev/null || fail "xpowner -p exited: $(cat /tmp/o.out)"
kill -9 $O; wait $O 2>/dev/null
assert_eq "persistent view after its creator died" 1 "$(status_field views)"
xprobectl view del $A
kill $A; wait $A
assert_eq "memory at the end" 0 "$(status_field memory_bytes)"
