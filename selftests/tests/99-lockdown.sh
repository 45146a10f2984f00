# Kernel lockdown at the confidentiality level keeps kernel memory from root
# (/proc/kcore, kprobes' tracefs, BPF reads): peek (kernel text bytes) and
# walk (page-table entries, physical addresses: the KASLR layout) are refused
# then, with a message; views, hooks and status still work. Lockdown cannot be
# lifted until reboot, so this test runs last in its VM.
. /xp/selftests/tests/lib.sh
L=/sys/kernel/security/lockdown
[ -e $L ] || mount -t securityfs securityfs /sys/kernel/security 2> /dev/null
[ -e $L ] || skip "no lockdown LSM"
grep -q '\[none\]' $L || skip "already locked down: $(cat $L)"
F=__x64_sys_getppid

start_loop /tmp/a.out -e -n 10 getppid
A=$LOOP_PID
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A $F) || fail "hook add"
expect_rc "peek before lockdown" 0 xprobectl peek $A $F 4
expect_rc "walk before lockdown" 0 xprobectl walk $A $F

echo confidentiality > $L || skip "cannot lock the kernel down"
note "lockdown: $(cat $L)"
expect_rc "peek under lockdown" 1 xprobectl peek $A $F 4
assert_match "peek: message" "locked down \(confidentiality\)" "$OUT"
expect_rc "walk under lockdown" 1 xprobectl walk $A $F
assert_match "walk: message" "locked down \(confidentiality\)" "$OUT"
expect_rc "status under lockdown" 0 xprobectl status
go_loop $A /tmp/a.out
assert_eq "the hook still counts" 10 "$(hook_col $id 5)"
xprobectl view del $A
end_loop $A /tmp/a.out
