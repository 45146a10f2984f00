# Coherence with livepatch: a livepatch of getppid() (it returns 4242) is
# applied and removed while A calls getppid() through its private copy of
# that code. A sees the patched function while the patch is on, the original
# after, and the audit finds nothing to repair.
. /xp/selftests/tests/lib.sh
K=/sys/kernel/livepatch/xp_klp
[ -f /xp/xp_klp.ko ] || skip "no livepatch test module"

ppidcount -d 12 > /tmp/pc.out &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A __x64_sys_getppid) || fail "hook add"
jump_among $id
sleep 1
insmod /xp/xp_klp.ko || fail "insmod xp_klp"
i=0; while [ "$(cat $K/transition 2>/dev/null)" != 0 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "livepatch transition did not finish"; sleep 0.05
done
b=$(ppidcount -d 1)
note "untraced process while patched: $b"
sleep 2
echo 0 > $K/enabled
i=0; while [ -d $K ]; do
	i=$((i + 1)); [ $i -lt 400 ] || fail "livepatch did not go away"; sleep 0.05
done
rmmod xp_klp || fail "rmmod xp_klp"
wait $A || fail "A failed"
note "A: $(cat /tmp/pc.out)"
set -- $(cat /tmp/pc.out)
[ "$4" -gt 0 ] || fail "A never saw the livepatched getppid"
[ "$4" -lt "$2" ] || fail "A saw the patch all the time, even before and after"
after=$(ppidcount -d 1)
assert_match "getppid after the patch is gone" "value 0$" "$after"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"
