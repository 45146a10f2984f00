# Stress: rmmod under load. 64 views (XP_RMMOD_VIEWS): 63 processes with 4
# hooks each (the getppid system call, the system-call dispatcher
# x64_sys_call, do_nanosleep, kernel_clone), all made at once by xpowners,
# some persistent, the others owned by xpowners that stay alive; 2 processes
# loop on getppid flat out, 4 are shells that keep forking (sysloop,
# forktree: their children join the view), the rest loop paced (100 calls
# every 0.5 s); the 64th view is an 'xprobectl trace' session on the trace
# workload, whose hooks run its BPF programs directly (no program on the
# xprobes_hook tracepoint, so nothing holds the module): rmmod goes through
# under it at once, and the trace learns from the module's last announcement
# that its view ended, says so, prints what it counted and exits 1. Checks:
# every other process survives the unload and
# keeps running (it makes progress; the loops end normally on SIGTERM with
# status 0, the forking shells saw no child fail); killing the old owners
# after a fresh insmod does not touch the new module's views; a fresh view
# counts exactly; the module's memory is 0. XP_RMMOD_ROUNDS (default 1)
# rounds; the seed picks which processes fork and which views persist.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid
ROUNDS=${XP_RMMOD_ROUNDS:-1}
# 16 on the debug kernel, where 64 busy views take too long for CI;
# 24-life-rmmod64 still unloads under 64 views there.
VIEWS=${XP_RMMOD_VIEWS:-$(scaled 64)}
P=$((VIEWS - 1))	# processes with xpowner views; the last view is the trace's
. /xp/selftests/debug/tests/stress-lib.sh

# progress PID: context switches and CPU time of all its threads so far
# (grows while it runs)
progress() {
	local t k v n=0 a rest
	for t in /proc/$1/task/*; do
		while read k v; do
			case $k in *ctxt_switches:) n=$((n + v)) ;; esac
		done < $t/status
		read a rest < $t/schedstat && n=$((n + a))
	done 2>/dev/null
	echo $n
}

D=/tmp/63
rm -rf $D
mkdir -p $D
HOOKS="$F x64_sys_call do_nanosleep kernel_clone"

round=0
while [ $round -lt $ROUNDS ]; do
	round=$((round + 1))
	assert_eq "round $round: no views at the start" 0 "$(status_field views)"
	rm -f $D/*
	touch $D/run
	# P processes: 0-1 flat out, 4 forking shells at seeded places, the rest paced
	forkers=" "
	while [ $(echo $forkers | wc -w) -lt 4 ]; do
		rnd $((P - 2))
		case "$forkers" in *" $((R + 2)) "*) ;; *) forkers="$forkers$((R + 2)) " ;; esac
	done
	pids= shells= i=0
	while [ $i -lt $P ]; do
		if [ $i -lt 2 ]; then
			sysloop -n 0 getppid &
		else
			case "$forkers" in
			*" $i "*)
				sh -c "while [ -e $D/run ]; do
					sysloop -n 50 -i 1000 getppid || echo \"sysloop \$?\" >> $D/fail
					forktree -n 20 -f 2,2 || echo \"forktree \$?\" >> $D/fail
					sleep 0.2
				done" &
				shells="$shells $!" ;;
			*)	sysloop -n 0 -i 500000 getppid & ;;
			esac
		fi
		pids="$pids $!"
		i=$((i + 1))
	done
	# their views, all made at once: owned by xpowners that stay, or persistent
	owners= pers=
	for p in $pids; do
		: > $D/o.$p
		rnd 2
		if [ $R = 0 ]; then
			xpowner -p $p $HOOKS > $D/o.$p 2>&1 &
			pers="$pers $!"
		else
			xpowner $p $HOOKS > $D/o.$p 2>&1 &
			owners="$owners $!"
		fi
	done
	j=0
	while notready=$(grep -L ready $D/o.*) && [ -n "$notready" ]; do
		bad=$(grep -l error $D/o.*) && fail "xpowner: $(cat $bad)"
		j=$((j + 1)); [ $j -lt 300 ] || fail "xpowners not ready after 60 s: $notready"
		sleep 0.2
	done
	npers=$(echo $pers | wc -w)
	[ -z "$pers" ] || kill -9 $pers
	for o in $pers; do wait $o 2>/dev/null; done
	# the 64th: a trace session
	workload sleep -n 1000000 -t 10 -d /dev/null 2>/dev/null &
	W=$!
	j=0
	while c=$(cat /proc/$W/comm) && [ "$c" != workload ]; do
		j=$((j + 1)); [ $j -lt 100 ] || fail "workload did not start"
		sleep 0.05
	done
	# --uprobes: trace's programs on user hooks' events hang off the
	# module's tracepoints, which pins the module while trace runs (rmmod
	# answers EAGAIN: see docs/userhooks.md); its kernel hooks' programs
	# do not, and that is what this test unloads the module under.
	xprobectl trace --uprobes -f 'xw_*' $W > $D/trace.out 2> $D/trace.err &
	TR=$!
	j=0
	while ! grep -q "tracing .* mode" $D/trace.err; do
		j=$((j + 1))
		[ $j -lt 300 ] && [ "$(state $TR)" != Z ] || fail "trace did not start: $(cat $D/trace.err)"
		sleep 0.2
	done
	assert_match "round $round: trace" "views mode" "$(cat $D/trace.err)"
	assert_eq "round $round: views" $VIEWS "$(status_field views)"
	assert_eq "round $round: hooks ($P x 4 + trace's 3 + the views' guards)" \
		$((P * 4 + 3 + $(guards))) "$(status_field hooks)"
	note "round $round: $VIEWS views ($npers persistent, $((P - npers)) owned by live xpowners), forking:$forkers"

	# every view's getppid hook has counted (the paced loops call every 0.5 s)
	j=0
	while :; do
		idle=$(xprobectl hook list | awk -v f="$F+" 'index($4, f) == 1 && $5 == 0 { print $2 }')
		[ -n "$idle" ] || break
		j=$((j + 1))
		[ $j -lt 60 ] || fail "round $round: getppid hooks of these processes never hit: $idle"
		sleep 1
	done
	note "ok: round $round: all $P getppid hooks are hitting"

	# the trace's programs hang off its hooks, not the tracepoint: the
	# module is not in use, rmmod goes through under the live trace
	rmmod xprobes 2> $D/rmmod.err ||
		fail "round $round: rmmod refused under a trace with direct hook programs: $(cat $D/rmmod.err)"
	module_loaded && fail "xprobes is still loaded"
	j=0
	while [ "$(state $TR)" != Z ] && [ -n "$(state $TR)" ]; do
		j=$((j + 1)); [ $j -lt 100 ] || fail "round $round: the trace still runs 10 s after rmmod: $(cat $D/trace.err)"
		sleep 0.1
	done
	wait $TR
	assert_eq "round $round: trace's status once the module is gone" 1 $?
	assert_match "round $round: trace says why it stopped" \
		"the kernel ended the view of pid $W: the xprobes module was unloaded" "$(cat $D/trace.err)"
	assert_match "round $round: trace still reports what it counted" "xw_" "$(cat $D/trace.out)"
	note "ok: round $round: rmmod went through under the trace, which stopped and reported"

	# everybody is alive and keeps running
	for p in $pids $W; do
		s=$(state $p)
		[ -n "$s" ] && [ "$s" != Z ] || fail "round $round: process $p died at rmmod (state '$s')"
		eval "pr_$p=$(progress $p)"
	done
	sleep 2
	for p in $pids $W; do
		eval "was=\$pr_$p"
		now=$(progress $p)
		[ "$now" -gt "$was" ] || fail "round $round: process $p made no progress after rmmod ($was -> $now, state $(state $p))"
	done
	note "ok: round $round: all $VIEWS processes survived rmmod and keep running"

	# a fresh module; the old owners closing their sockets now must not matter
	insmod $KO || fail "insmod"
	assert_eq "round $round: fresh module has no views" 0 "$(status_field views)"
	start_loop $D/fresh.out -e -n 1000 getppid
	N=$LOOP_PID
	xpowner $N $F > $D/o.new 2>&1 &
	ON=$!
	wait_for $D/o.new ready "xpowner on the fresh module did not start"
	[ -z "$owners" ] || kill -9 $owners
	for o in $owners; do wait $o 2>/dev/null; done
	assert_eq "round $round: the new owned view survives the old owners' exit" 1 "$(status_field views)"
	# its hook on $F (the view may have its guard too, once the hook jumps)
	id=$(xprobectl hook list | awk -v n=$N -v f="$F+" '$2 == n && index($4, f) == 1 { print $1 }')
	go_loop $N $D/fresh.out
	assert_eq "round $round: hits on the fresh module's view" 1000 "$(hook_col $id 5)"
	assert_eq "round $round: the fresh view sees its hook" "$(armed_byte $id)" "$(peek_byte $N $(hook_col $id 4))"
	kill -9 $ON
	wait $ON 2>/dev/null
	assert_eq "round $round: the view went with its owner" 0 "$(status_field views)"
	end_loop $N $D/fresh.out

	# the loops end normally on SIGTERM; the shells stop after their child
	rm $D/run
	bad=
	for p in $pids; do
		case " $shells " in *" $p "*) continue ;; esac
		kill $p
		wait $p
		rc=$?
		[ $rc = 0 ] || bad="$bad $p:$rc"
	done
	[ -z "$bad" ] || fail "round $round: loops that did not end normally (pid:status):$bad"
	for p in $shells; do
		wait $p || bad="$bad $p:$?"
	done
	[ -z "$bad" ] || fail "round $round: forking shells that did not end normally:$bad"
	[ ! -s $D/fail ] || fail "round $round: children of the forking shells failed: $(cat $D/fail)"
	kill -9 $W
	wait $W 2>/dev/null
	note "ok: round $round: every process ended normally"
	assert_eq "round $round: module memory" 0 "$(status_field memory_bytes)"
done
kmemleak_check
