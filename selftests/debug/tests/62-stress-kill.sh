# Stress: SIGKILL of the traced process and of its controller at seeded random
# points, for XP_STRESS_SECS (default 20). Each round starts a target (a busy
# getppid loop, a threaded one, a shell that keeps forking, or the trace
# workload) and a controller (xprobectl trace -d 5 on the workload, or
# xpowner: a view owned by its netlink socket, or a persistent one, with
# hooks on getppid, the system-call dispatcher and do_exit), then after
# 0-1.5 s kills the target, the controller, or both in either order (0-50 ms
# apart). Checks: a view ends as soon as the socket that owns it is gone; a
# persistent view outlives its creator; a dead target's view ends within a
# few sweeps even while its controller lives; a trace whose target died ends
# by itself; no process is left stuck (every kill is reaped within 20 s); no
# view, hook or module memory is left at the end. (Kernel memory is not
# compared: the trace sessions' BPF programs are freed lazily.)
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid
SECS=${XP_STRESS_SECS:-20}
. /xp/selftests/debug/tests/stress-lib.sh
note "duration ${SECS} s"

# msleep MS
msleep() {
	local f=$(($1 % 1000 + 1000))
	sleep $(($1 / 1000)).${f#1}
}
# reap PID WHAT SECS: PID must end (be a zombie) within SECS seconds: reaps it,
# RC is its wait status.
reap() {
	local i=0 s
	while s=$(state $1) && [ -n "$s" ] && [ "$s" != Z ]; do
		i=$((i + 1))
		if [ $i -gt $(($3 * 10)) ]; then
			note "stack of $1 ($2, state $s):"
			cat /proc/$1/stack 2>/dev/null
			fail "round $round: $2 $1 is stuck (state $s) $3 s after it should have ended"
		fi
		sleep 0.1
	done
	wait $1
	RC=$?
}
# view_of PID: PID's row in 'xprobectl view list'
view_of() { xprobectl view list | awk -v p=$1 '$1 == p'; }
# wait_no_view WHAT: every view is gone within 5 s (the sweeper runs every 200 ms)
wait_no_view() {
	local i=0
	while [ "$(status_field views)" != 0 ]; do
		i=$((i + 1))
		[ $i -lt 25 ] || fail "round $round: $1: views left: $(xprobectl view list)"
		sleep 0.2
	done
}

D=/tmp/62
rm -rf $D
mkdir -p $D
round=0
n_tgt=0 n_ctl=0 n_both=0 n_trace=0 n_own=0 n_pers=0 n_ready=0
end=$(( ${EPOCHREALTIME%.*} + SECS ))
while [ ${EPOCHREALTIME%.*} -lt $end ]; do
	round=$((round + 1))
	rnd 3; ctl=$R			# 0 trace, 1 owned view, 2 persistent view
	rnd 3; kind=$R			# target: 0 busy, 1 threads, 2 forking shell
	[ $ctl = 0 ] && kind=3		# trace needs the workload's functions
	rnd 1501; delay=$R
	rnd 4; act=$R			# 0 target, 1 controller, 2 target+controller, 3 controller+target
	rnd 51; gap=$R
	case $kind in
	0) sysloop -n 0 getppid & ;;
	1) sysloop -n 0 -t 2 -i 1000 getppid & ;;
	2) sh -c 'while :; do sysloop -n 100 getppid; forktree -n 20 -f 2; done' & ;;
	3) workload sleep -n 100000 -t 10 -d /dev/null 2>/dev/null & ;;
	esac
	T=$!
	if [ $kind = 3 ]; then		# trace reads /proc/PID/exe: past the exec
		i=0
		while c=$(cat /proc/$T/comm) && [ "$c" != workload ]; do
			i=$((i + 1)); [ $i -lt 100 ] || fail "workload did not start"
			sleep 0.05
		done
	fi
	case $ctl in
	0) xprobectl trace -d 5 -f 'xw_*' $T > $D/c.out 2>&1 & n_trace=$((n_trace + 1)) ;;
	1) xpowner $T $F x64_sys_call do_exit > $D/c.out 2>&1 & n_own=$((n_own + 1)) ;;
	2) xpowner -p $T $F x64_sys_call do_exit > $D/c.out 2>&1 & n_pers=$((n_pers + 1)) ;;
	esac
	C=$!
	note "round $round: target $kind $T, controller $ctl $C, kill $act after $delay ms (gap $gap ms)"
	msleep $delay
	grep -q "ready\|tracing .* mode" $D/c.out && n_ready=$((n_ready + 1))
	case $act in
	0)	n_tgt=$((n_tgt + 1))
		kill -9 $T
		reap $T target 20
		# The controller lives on; the view of the dead target must end.
		i=0
		while [ -n "$(view_of $T)" ]; do
			i=$((i + 1))
			[ $i -lt 25 ] || fail "round $round: the view of dead $T outlived it: $(view_of $T)"
			sleep 0.2
		done
		if [ $ctl = 0 ]; then
			# trace ends by itself when its target is gone (or fails to start)
			reap $C trace 30
			[ $RC -le 1 ] || fail "round $round: trace exited $RC after its target died: $(cat $D/c.out)"
		else
			kill -9 $C 2>/dev/null
			reap $C controller 20
		fi ;;
	1)	n_ctl=$((n_ctl + 1))
		kill -9 $C 2>/dev/null		# xpowner may have failed already
		reap $C controller 20
		if [ $ctl != 2 ]; then
			[ -z "$(view_of $T)" ] || fail "round $round: the view outlived its owner: $(view_of $T)"
		elif grep -q ready $D/c.out; then
			[ -n "$(view_of $T)" ] || fail "round $round: a persistent view died with its creator"
		fi
		[ "$(state $T)" != Z ] || fail "round $round: the target died with its controller"
		kill -9 $T
		reap $T target 20 ;;
	*)	n_both=$((n_both + 1))
		if [ $act = 2 ]; then a=$T b=$C; else a=$C b=$T; fi
		kill -9 $a
		msleep $gap
		kill -9 $b 2>/dev/null
		reap $T target 20
		reap $C controller 20 ;;
	esac
	wait_no_view "after round $round"
done
note "$round rounds: target killed $n_tgt, controller $n_ctl, both $n_both; controllers: trace $n_trace, owned $n_own, persistent $n_pers (in $n_ready rounds the controller had set everything up when the kills began)"

# Orphans of the forking shells end by themselves; nothing else is left.
i=0
while left=$(pidof sysloop forktree workload xpowner xprobectl) && [ -n "$left" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "processes left running: $left"
	sleep 0.1
done
wait_no_view "at the end"
note "ok: no process left, no view left"
assert_eq "hooks at the end" 0 "$(status_field hooks)"
assert_eq "module memory back to the baseline" "$MEM0" "$(status_field memory_bytes)"
kmemleak_check
