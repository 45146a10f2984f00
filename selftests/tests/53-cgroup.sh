# metrics and latency --cgroup: every process of a cgroup v2 is measured,
# one that joins mid-run and a server restarted into a new cgroup of the
# same name (what systemd does) included; a process outside is not. Views
# mode: each process of the cgroup gets a view of its own (checked in the
# view list). Ground truth: loadgen's responses on redis (metrics), a
# known number of getppid calls from sysloop (latency's histogram).
. /xp/selftests/tests/lib.sh
. /xp/selftests/servers.sh
command -v redis-server > /dev/null || fail "redis-server is not in the VM image"
[ -f /sys/fs/cgroup/cgroup.procs ] || fail "no cgroup2 hierarchy on /sys/fs/cgroup"
load_module
CG=/sys/fs/cgroup/xpsvc
SECS=1
[ -n "$DEBUG_KERNEL" ] && SECS=2

has_view() { xprobectl view list | awk -v p="$1" 'NR > 1 && $1 == p { f = 1 } END { exit !f }'; }
# wait_view PID: until PID has a view (the command's poll adopted it).
wait_view() {
	local i=0
	until has_view "$1"; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "pid $1 got no view: $(xprobectl view list)"
		sleep 0.1
	done
}
# into_cgroup PID: move a running process into the cgroup (it "joins").
into_cgroup() { echo "$1" > $CG/cgroup.procs || fail "cannot move $1 into $CG"; }
# born_in_cgroup PORT: a redis started the way a supervisor does, moved into
# the cgroup before it execs; its pid in SRV_PID.
born_in_cgroup() {
	sh -c "echo \$\$ > $CG/cgroup.procs && exec redis-server --port $1 --save '' \
		--appendonly no --daemonize no" > /tmp/srv-$1.log 2>&1 &
	SRV_PID=$!
	local i=0
	until loadgen -p redis -P "$1" -r 20 -c 1 -d 0.3 > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 10 ] || fail "redis on $1 did not answer: $(tail -n 3 /tmp/srv-$1.log)"
	done
}
# load PORT RATE: loadgen for SECS, its responses printed
load() {
	loadgen -p redis -P "$1" -r "$2" -c 4 -d $SECS | sed -n 's/.* done \([0-9]*\) .*/\1/p'
}

# metrics_run MODE-OPTION: the whole story under one 'xprobectl metrics'
metrics_run() {
	local xp a b c a2 other done_b expect got mode
	rmdir $CG 2> /dev/null; mkdir $CG || fail "cannot make $CG"
	server_start redis 6392 || fail "redis"
	a=$SRV_PID
	into_cgroup $a
	server_start redis 6393 || fail "redis outside"
	other=$SRV_PID
	server_start redis 6394 || fail "redis to join"
	c=$SRV_PID
	: > /tmp/cg.err		# here: the job's own redirection may come after wait_for's first look
	xprobectl metrics --json --cgroup /xpsvc $1 > /tmp/cg.json 2> /tmp/cg.err &
	xp=$!
	wait_for /tmp/cg.err 'metrics of cgroup' "metrics did not start"
	mode=views
	[ -n "$1" ] && mode=fallback
	assert_match "mode" "$mode mode" "$(cat /tmp/cg.err)"
	[ $mode = views ] && wait_view $a
	# the untraced server is loaded all along
	loadgen -p redis -P 6393 -r 200 -c 2 -d $((3 * SECS + 2)) > /tmp/cg.other &
	done_b=$!
	expect=$(load 6392 200)
	into_cgroup $c
	[ $mode = views ] && wait_view $c
	expect=$((expect + $(load 6394 200)))
	# a restart: the server goes, its cgroup is removed and made again
	# (a new id), a new server is born into it
	kill $a; wait $a 2> /dev/null
	kill $c; wait $c 2> /dev/null
	rmdir $CG || fail "cannot remove $CG: $(cat $CG/cgroup.procs)"
	mkdir $CG
	sleep 0.3	# fallback mode looks the new id up every 100 ms
	born_in_cgroup 6392
	a2=$SRV_PID
	[ $mode = views ] && wait_view $a2
	expect=$((expect + $(load 6392 200)))
	wait $done_b
	kill -INT $xp
	wait $xp || fail "$mode: metrics exited $?: $(cat /tmp/cg.err)"
	# the responses the readiness probes of born_in_cgroup got are counted too
	got=$(awk '/"type":"total"/ { match($0, /"responses_per_s":[0-9.e+]*/); r = substr($0, RSTART + 18, RLENGTH - 18)
		match($0, /"seconds":[0-9.e+]*/); s = substr($0, RSTART + 10, RLENGTH - 10); printf "%.0f", r * s }' /tmp/cg.json)
	note "$mode: responses loadgen got from the cgroup's servers $expect, counted $got" \
		"(the outside server: $(sed -n 's/.* done \([0-9]*\) .*/\1/p' /tmp/cg.other))"
	awk -v e=$expect -v g=$got 'BEGIN { exit !(g >= e && g <= e + 40) }' ||
		fail "$mode: counted $got responses, loadgen got $expect from the cgroup; metrics said: $(cat /tmp/cg.err)"
	note "ok: $mode: the cgroup's three servers counted, the outside one not"
	kill $a2 $other; wait $a2 $other 2> /dev/null
}

metrics_run ""
metrics_run --no-views

# latency: sysloops in the cgroup and below it, one forked before latency
# started by a process there (so on no view when its parent gets one),
# two that join, one outside; the histogram counts exactly their getppid
# calls. Five views in all: more than the hook map once held.
N=3000
rmdir $CG/sub $CG 2> /dev/null; mkdir -p $CG/sub
start_loop /tmp/l1.out -e -n $N getppid; L1=$LOOP_PID
start_loop /tmp/l2.out -e -n $N getppid; L2=$LOOP_PID
start_loop /tmp/l3.out -e -n $N getppid; L3=$LOOP_PID
start_loop /tmp/l5.out -e -n $N getppid; L5=$LOOP_PID
echo $L1 > $CG/sub/cgroup.procs || fail "cannot move $L1 into $CG/sub"
rm -f /tmp/l4.out /tmp/l4.pid
sh -c "echo \$\$ > $CG/cgroup.procs || exit 1
sysloop -g -e -n $N getppid > /tmp/l4.out & echo \$! > /tmp/l4.pid; wait" &
SH4=$!
wait_for /tmp/l4.out '^ready' "the pre-forked sysloop did not start"
L4=$(cat /tmp/l4.pid)
grep -qx "$L4" $CG/cgroup.procs || fail "the pre-forked sysloop $L4 is not in the cgroup"
rm -rf /tmp/cgtext; mkdir /tmp/cgtext
: > /tmp/cl.err
xprobectl latency --cgroup $CG --textfile /tmp/cgtext -q > /tmp/cl.out 2> /tmp/cl.err &
xp=$!
wait_for /tmp/cl.err 'syscall latency of cgroup' "latency did not start"
assert_match "latency mode" "views mode" "$(cat /tmp/cl.err)"
wait_view $L1
wait_view $L4
go_loop $L1 /tmp/l1.out
go_loop $L4 /tmp/l4.out
into_cgroup $L2
wait_view $L2
go_loop $L2 /tmp/l2.out
into_cgroup $L5
wait_view $L5
go_loop $L5 /tmp/l5.out
go_loop $L3 /tmp/l3.out
sleep 1.5	# one more textfile
has_view $L3 && fail "the process outside the cgroup got a view"
kill -INT $xp
wait $xp || fail "latency exited $?: $(cat /tmp/cl.err)"
[ -s /tmp/cl.out ] && fail "latency -q printed: $(head -n 3 /tmp/cl.out)"
f=/tmp/cgtext/xprobes_latency_xpsvc.prom
[ -f $f ] || fail "no textfile: $(ls /tmp/cgtext)"
sel='syscall="getppid",cgroup="\/xpsvc",mode="views"'
cnt=$(sed -n "s/^xprobes_syscall_duration_seconds_count{$sel} //p" $f)
inf=$(sed -n "s/^xprobes_syscall_duration_seconds_bucket{$sel,le=\"+Inf\"} //p" $f)
note "latency: getppid calls in the cgroup's histogram: $cnt (+Inf bucket $inf), made there: $((4 * N))"
assert_eq "getppid calls counted" "$((4 * N))" "$cnt"
assert_eq "the +Inf bucket is the count" "$cnt" "$inf"
# cumulative buckets never fall, and getppid (a microsecond or so, tens
# on the emulator) is mostly below 1 ms
sed -n "s/^xprobes_syscall_duration_seconds_bucket{$sel,le=\"\([0-9.e+-]*\)\"} //p" $f |
	awk -v n=$cnt 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' ||
	fail "buckets fall: $(grep "duration_seconds_bucket{$sel" $f | head -n 30)"
ms=$(sed -n "s/^xprobes_syscall_duration_seconds_bucket{$sel,le=\"0.001048576\"} //p" $f)
awk -v m="$ms" -v n=$cnt 'BEGIN { exit !(m * 2 > n) }' || fail "getppid: only $ms of $cnt calls below 1 ms"
grep -q '^# TYPE xprobes_syscall_duration_seconds histogram' $f || fail "no histogram TYPE line"
for l in $L1 $L2 $L3 $L4 $L5; do kill -USR1 $l; done
wait $L1 $L2 $L3 $L5 $SH4
note "ok: latency --cgroup counts the cgroup's calls (below it, forked before, joiners) in a Prometheus histogram"

# trace --cgroup: the first process's program, every process of the
# cgroup: one there from the start (the target), one that joins (and then
# execs the program), one born into it after the target exited (a
# restart); one outside is not traced.
# joined PID: trace has taken PID in (its calls before that are not seen):
# its view in views mode, and its uprobes, which trace -v says it attached.
# (A fixed second after the view was not always enough: 6.1's fallback
# mode, one probe per function, lost 3 of the joiner's 6 calls in make
# check on 2026-11-29, their entries seen and not their returns.)
joined() {
	[ $mode = views ] && wait_view $1
	wait_for /tmp/tc.err "pid $1 (.*): probes attached" "trace did not attach to pid $1" 1200
}
trace_cgroup() {
	local xp w1 w2 w3 w4 p n=0 mode=views
	[ -n "$1" ] && mode=fallback
	rmdir $CG/sub $CG 2> /dev/null; mkdir $CG
	# the target makes its calls once trace has started
	: > /tmp/tw1.err
	workload sleep -n 6 -t 20 -g -c $CG 2> /tmp/tw1.err &
	w1=$!
	wait_for /tmp/tw1.err '^ready' "the target did not start"
	: > /tmp/tc.err
	xprobectl trace $1 -v --json -f 'xw_*' --cgroup $CG -d 120 > /tmp/tc.json 2> /tmp/tc.err &
	xp=$!
	wait_for /tmp/tc.err 'tracing' "trace --cgroup did not start" 1200
	kill -USR1 $w1
	assert_match "trace mode" "$mode mode" "$(cat /tmp/tc.err)"
	workload sleep -n 6 -t 20 -s 600 2> /tmp/tw4.err &
	w4=$!
	# the joiner joins as a shell, then execs the program (as a service's
	# start script does): its view and uprobes follow the exec
	: > /tmp/tw3.err
	rm -f /tmp/go3; mkfifo /tmp/go3
	sh -c "read x < /tmp/go3; exec workload sleep -n 6 -t 20 -g" 2> /tmp/tw3.err &
	w3=$!
	into_cgroup $w3
	joined $w3
	echo go > /tmp/go3
	wait_for /tmp/tw3.err '^ready' "the joiner did not exec"
	kill -USR1 $w3
	wait $w1
	: > /tmp/tw2.err
	workload sleep -n 6 -t 20 -g -c $CG 2> /tmp/tw2.err &
	w2=$!
	wait_for /tmp/tw2.err '^ready' "the restarted one did not start"
	joined $w2
	kill -USR1 $w2
	wait $w2 $w3 $w4
	sleep 0.3	# the last switches
	kill -INT $xp
	wait $xp || fail "trace --cgroup exited $?: $(cat /tmp/tc.err)"
	jsonq /tmp/tc.json . > /dev/null || fail "invalid JSON: $(head -c 300 /tmp/tc.json)"
	for p in $w1 $w2 $w3; do
		n=$(jsonq /tmp/tc.json "processes.[pid=$p].functions.[name=xw_delay].calls" 2>/dev/null)
		[ "$n" = 6 ] && continue
		note "trace's stderr: $(grep -v '^libbpf' /tmp/tc.err)"
		note "its processes: $(grep -o '"processes":.*' /tmp/tc.json | grep -o '"pid":[0-9]*,"parent":[0-9]*,"comm":"[^"]*"' | tr '\n' ' ')"
		note "target $w1, joiner $w3, restarted $w2, outside $w4; counters: $(grep -o '"counters":{[^}]*}' /tmp/tc.json)"
		fail "$mode: pid $p's xw_delay calls: '$n', not 6"
	done
	jsonq /tmp/tc.json "processes.[pid=$w4]" > /dev/null 2>&1 && fail "the process outside was traced"
	assert_eq "$mode: combined xw_delay calls" 18 "$(jsonq /tmp/tc.json 'functions.[name=xw_delay].calls')"
	note "ok: trace --cgroup ($mode): the target, one born in the cgroup, one that joined; not the one outside"
}
trace_cgroup ""
trace_cgroup --no-views
rmdir $CG
