# rmmod with views on 64 processes: 2 of them run through their hooks the
# whole time, 62 wait (64 busy loops would starve everything on 2 vCPUs).
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid

pids=""
i=0
while [ $i -lt 64 ]; do
	if [ $i -lt 2 ]; then
		sysloop -n 0 getppid &
	else
		sysloop -g -n 1 getppid > /dev/null &
	fi
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do
	xprobectl view add $p > /dev/null || fail "view add $p"
	xprobectl hook add $p $F > /dev/null || fail "hook add $p"
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
