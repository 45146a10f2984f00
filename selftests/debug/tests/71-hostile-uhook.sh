# 47-uhook-fuzz with 500 rounds (XP_UFUZZ_N; check-debug in CI runs 200) on the debug kernel (KASAN, lockdep;
# kmemleak scans after the job): a hostile process against user hooks with
# records, events and returns. Replay with XP_SEED=S. (A round takes about
# 0.4 s here: 1000 rounds were 442 s of the stress guest, the longest of
# check-debug's two, on 2026-11-29; make check's 47 runs 300 rounds on each
# stock kernel, at about 0.1 s a round.)
XP_UFUZZ_N=${XP_UFUZZ_N:-500}
. /xp/selftests/tests/47-uhook-fuzz.sh
