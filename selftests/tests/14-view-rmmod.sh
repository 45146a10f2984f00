# (e) rmmod while A hammers the hooked path (a jump hook and the hook after
# it) on both CPUs: the unload is clean,
# A keeps running (and exits normally when told), no splat. Five rounds.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid

round=1
while [ $round -le ${XP_RMMOD_ROUNDS:-$(scaled 5 2)} ]; do
	sysloop -n 0 -t 2 getppid &
	A=$!
	xprobectl view add $A > /dev/null || fail "view add"
	id=$(xprobectl hook add $A $F) || fail "hook add"
	# and on the instruction after the bytes its jump covers
	cover=$(hook_col $id 9)
	xprobectl hook add $A $F+$(($(entry_off $A $F) + ${cover%/*})) > /dev/null ||
		fail "hook add (second)"
	wait_settled			# rmmod with the jump live
	sleep 0.5
	hits=$(hook_col $id 5)
	[ "$hits" -gt 0 ] || fail "round $round: no hits before rmmod"
	rmmod xprobes || fail "round $round: rmmod failed"
	sleep 0.3
	kill -0 $A 2>/dev/null || fail "round $round: A died"
	kill $A
	wait $A
	rc=$?
	[ $rc = 0 ] || fail "round $round: A exited $rc, expected 0 (it ends its loop on SIGTERM)"
	insmod $KO || fail "insmod"
	assert_eq "round $round: fresh module has no views" 0 "$(status_field views)"
	note "ok: round $round ($hits hits before rmmod)"
	round=$((round + 1))
done
