# Seeded fuzzing of the generic netlink family: nlfuzz sends XP_FUZZ_N
# (default 100000) random and mutated requests, with three live sleepers it
# may give views and hooks. Whatever the kernel answers, it must survive: no
# splat (run-vm checks the log), no hang, well-framed replies, and afterwards
# the module still answers, holds no views and no hooks, and a well-formed
# view + hook cycle still works.
# Replay a failure with XP_SEED=S (printed first), XP_FUZZ_N=N.
. /xp/selftests/tests/lib.sh

SEED=${XP_SEED:-$(date +%s)}
N=${XP_FUZZ_N:-100000}
echo "XP_SEED=$SEED XP_FUZZ_N=$N"

module_loaded || fail "xprobes is not loaded"
command -v nlfuzz > /dev/null || fail "nlfuzz is missing from the guest"

sleep 1000 & P1=$!
sleep 1000 & P2=$!
sleep 1000 & P3=$!
cleanup_sleepers() { kill $P1 $P2 $P3 2>/dev/null; wait $P1 $P2 $P3 2>/dev/null; }

nlfuzz -s "$SEED" -n "$N" -p $P1 -p $P2 -p $P3
rc=$?
cleanup_sleepers
[ $rc = 0 ] || fail "nlfuzz exited $rc (replay: XP_SEED=$SEED XP_FUZZ_N=$N)"
note "ok: nlfuzz completed $N messages"

expect_rc "status still answers" 0 xprobectl status
assert_eq "no views left (XP_SEED=$SEED)" 0 "$(status_field views)"
assert_eq "no hooks left (XP_SEED=$SEED)" 0 "$(status_field hooks)"

# A well-formed request still works on a fresh process.
sleep 1000 & S=$!
expect_rc "view add" 0 xprobectl view add $S
id=$(xprobectl hook add $S __x64_sys_getppid) || { kill $S; fail "hook add __x64_sys_getppid: $id"; }
note "ok: hook add __x64_sys_getppid -> $id"
assert_eq "hooks in status (and the view's guard, if its hook is a jump over several instructions)" $((1 + $(guards))) "$(status_field hooks)"
expect_rc "hook del" 0 xprobectl hook del $id
expect_rc "view del" 0 xprobectl view del $S
kill $S
wait $S 2>/dev/null
assert_eq "no views at the end" 0 "$(status_field views)"
assert_eq "no hooks at the end" 0 "$(status_field hooks)"
