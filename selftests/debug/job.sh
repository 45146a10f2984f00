#!/bin/sh
# Guest job for make check-debug: PARTS in order, then a kmemleak scan.
#   kunit      the module's KUnit suites (kunit.sh)
#   selftests  the whole selftest suite (selftests/tests); selftests=A,B
#              only the tests whose names contain A or B (run.sh filters)
#   stress     the stress and fuzz tests (debug/tests); stress=A,B filters too
# Leaks from before the job (boot) are not the module's: clear them first.
# kmemleak's own scans every 10 minutes are turned off: each takes about 8 s
# of a vCPU here (more as the tests allocate), and kmemleak.sh's two scans
# after rmmod are the ones that report; a leaked object stays unreferenced
# until then.
echo clear > /sys/kernel/debug/kmemleak 2>/dev/null
echo scan=off > /sys/kernel/debug/kmemleak 2>/dev/null
for part in "$@"; do
	case $part in
	kunit) sh /xp/selftests/debug/kunit.sh ;;
	selftests) sh /xp/selftests/run.sh ;;
	selftests=*) sh /xp/selftests/run.sh $(echo "${part#selftests=}" | tr , ' ') ;;
	stress|stress=*) XP_TEST_TIMEOUT=1800 XP_TEST_DIR=/xp/selftests/debug/tests \
		sh /xp/selftests/run.sh $(echo "${part#stress}" | tr =, '  ') ;;
	*) echo "not ok 0 job.$part # unknown part" ;;
	esac
done
sh /xp/selftests/debug/kmemleak.sh
