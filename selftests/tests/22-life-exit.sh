# Exit: when the traced process exits its view ends by itself, everything is
# freed, and listeners of the events group are told. A new process that gets
# the same pid inherits nothing.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid

rm -f /tmp/ev.out	# another test's copy could satisfy the wait before the shell truncates it
xpevents -n 1 -t 20 > /tmp/ev.out &
EV=$!
wait_for /tmp/ev.out listening "xpevents did not start"
start_loop /tmp/a.out -e -n 10 getppid
A=$LOOP_PID
xprobectl view add $A > /dev/null || fail "view add"
xprobectl hook add $A $F > /dev/null || fail "hook add"
end_loop $A /tmp/a.out
wait $EV || fail "no event: $(cat /tmp/ev.out)"
assert_eq "event" "ended $A exit" "$(grep ended /tmp/ev.out)"
assert_eq "views after exit" 0 "$(status_field views)"
assert_eq "hooks after exit" 0 "$(status_field hooks)"
assert_eq "memory after exit" 0 "$(status_field memory_bytes)"

# PID reuse: make the next pid be A's again.
echo $((A - 1)) > /proc/sys/kernel/ns_last_pid || skip "cannot set ns_last_pid"
sysloop -g -e -n 10 getppid > /tmp/b.out &
B=$!
assert_eq "the new process got the old pid" $A $B
wait_for /tmp/b.out '^ready' "sysloop did not start"
assert_eq "no view for the recycled pid" "" "$(xprobectl view list | awk -v p=$B '$1 == p')"
assert_eq "the recycled pid sees the original code" 53 "$(peek_byte $B $F+$(entry_off $$ $F))"
expect_rc "the recycled pid has no view" 1 xprobectl hook add $B $F
end_loop $B /tmp/b.out
