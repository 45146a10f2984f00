# 47-uhook-fuzz with a thousand rounds on the debug kernel (KASAN,
# lockdep; kmemleak scans after the job): a hostile process against user
# hooks with records, events and returns. Replay with XP_SEED=S.
XP_UFUZZ_N=${XP_UFUZZ_N:-1000}
. /xp/selftests/tests/47-uhook-fuzz.sh
