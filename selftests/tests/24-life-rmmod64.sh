# rmmod with views on 64 processes: 2 of them run through their hooks,
# 62 wait (64 busy loops would starve everything on 2 vCPUs).
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid

# The two busy loops wait until every view and hook is in place, then run:
# with them running, the 128 commands got a third of the two vCPUs (70 s
# of the suite's time on 6.12, 97 s on the -rt kernels). At rmmod, as
# before, two processes run through their hooks and 62 wait.
pids="" busy=""
i=0
while [ $i -lt 64 ]; do
	if [ $i -lt 2 ]; then
		start_loop /tmp/busy$i.out -n 0 getppid
		busy="$busy $LOOP_PID"
		pids="$pids $LOOP_PID"
	else
		sysloop -g -n 1 getppid > /dev/null &
		pids="$pids $!"
	fi
	i=$((i + 1))
done
hit_yet() { [ "$(hook_col $1 5)" -gt 0 ] && echo yes; }
ids=""
for p in $pids; do
	xprobectl view add $p > /dev/null || fail "view add $p"
	j=$(xprobectl hook add --json $p $F) || fail "hook add $p"
	case " $busy " in *" $p "*) ids="$ids $(json_get "$j" id)" ;; esac
done
kill -USR1 $busy
for id in $ids; do
	wait_eq yes 100 0.05 "hook $id of a busy loop never hit" hit_yet $id
done
assert_eq "views" 64 "$(status_field views)"
rmmod xprobes || fail "rmmod with 64 views"
for p in $pids; do
	kill -0 $p 2>/dev/null || fail "process $p died"
done
kill -9 $pids
for p in $pids; do wait $p 2>/dev/null; done
insmod $KO || fail "insmod"
note "ok: 64 views, rmmod, every process kept running"
