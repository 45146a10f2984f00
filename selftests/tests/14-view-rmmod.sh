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

# rmmod under 'xprobectl metrics': its hooks run its BPF program directly, so
# nothing holds the module; the unload goes through, the module's last
# announcement tells metrics its view ended, and metrics says so, prints its
# total and exits 1 instead of counting nothing on.
sysloop -n 0 -i 1000 getppid &
A=$!
xprobectl metrics --json -i 0.2 $A > /tmp/14m.out 2> /tmp/14m.err &
M=$!
wait_for /tmp/14m.err "views mode" "metrics did not start in views mode" 300
wait_for /tmp/14m.out interval "metrics printed no interval" 300
rmmod xprobes || fail "rmmod under metrics failed"
i=0
while kill -0 $M 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "metrics still runs 5 s after rmmod: $(cat /tmp/14m.err)"
	sleep 0.05
done
wait $M
assert_eq "metrics' status once the module is gone" 1 $?
assert_match "metrics says why it stopped" \
	"the kernel ended the view of pid $A: the xprobes module was unloaded" "$(cat /tmp/14m.err)"
assert_match "metrics printed its total" "total" "$(cat /tmp/14m.out)"
kill $A
wait $A
insmod $KO || fail "insmod"
