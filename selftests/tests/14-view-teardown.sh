# Teardown leaves the views lock free. A view with a live jump hook waits,
# as it goes, for an RCU-tasks grace period (tasks preempted in the jump's
# entry or slot must have left it before it is unmapped), and one task kept
# off its CPU holds every such grace period up: under load that lasts
# seconds, even minutes. Here a SCHED_FIFO loop on CPU 1 keeps another one
# (a lower SCHED_FIFO loop, preempted there) off it while the view of P is
# deleted. (a) `view del` waits; meanwhile status, view list and hook
# list answer without P's view or hook, a hook for P is refused with a
# message, and another process Q gets a view and a hook. (b) Once the loop
# stops, the teardown ends: P's view, hook and memory are gone and P runs
# the kernel's bytes; Q's view works and goes.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
# There RCU's callbacks run in per-CPU SCHED_FIFO threads (rcuc), which the
# loop would starve: normal RCU would stall, not only RCU-tasks.
case $(uname -v) in *PREEMPT_RT*) skip "PREEMPT_RT: a SCHED_FIFO loop starves RCU's own threads" ;; esac

taskset -p 1 $$ > /dev/null || fail "taskset"	# the commands on CPU 0, the holdout on CPU 1
LOW= HIGH= P= Q= D=
cleanup() {
	kill $HIGH $LOW $P $Q 2> /dev/null
	wait $HIGH $LOW $D $P $Q 2> /dev/null
}
trap cleanup EXIT
# release: the FIFO loop stops, the holdout runs, the grace period ends.
release() {
	[ -n "$HIGH" ] && kill $HIGH 2> /dev/null && wait $HIGH 2> /dev/null
	HIGH=
}
# answers WHAT CMD...: CMD completes (within 30 s) while the teardown waits;
# its output in ANS. If not, the FIFO loop goes first: waiting for a lock
# the teardown holds, CMD could not even be killed. (On any failure the
# EXIT trap stops the loop, and the teardown ends.)
answers() {
	local what=$1 c i=0
	shift
	"$@" > /tmp/td.ans 2>&1 &
	c=$!
	while kill -0 $c 2> /dev/null; do
		i=$((i + 1))
		if [ $i -ge 300 ]; then
			echo w > /proc/sysrq-trigger; release
			wait $c
			fail "$what waited for another view's teardown"
		fi
		sleep 0.1
	done
	wait $c || fail "$what: $(cat /tmp/td.ans)"
	ANS=$(cat /tmp/td.ans)
}

sysloop -n 0 getppid > /dev/null &
P=$!
sysloop -n 0 getppid > /dev/null &
Q=$!
E=$(entry_off $$ $F)
orig=$(peek_byte $$ $F+$E)
xprobectl view add $P > /dev/null || fail "view add P"
id=$(json_get "$(xprobectl hook add --json $P $F)" id) || fail "hook add in P"
wait_jump $id
assert_eq "P executes the jump" e9 "$(peek_byte $P $F+$E)"

# The holdout: on CPU 1, preempted by a higher SCHED_FIFO loop that then
# keeps the CPU (RT throttling gives the rest to the fair class, not to it).
sysloop -n 0 -f 1 -c 1 spin > /dev/null &
LOW=$!
wait_eq R 100 0.05 "the low FIFO loop runs" sh -c "cut -d' ' -f3 /proc/$LOW/stat"
sleep 0.5
sysloop -n 0 -f 2 -c 1 spin > /dev/null &
HIGH=$!
sleep 0.5
note "CPU 1:$(on_cpu 1)"

# (a)
xprobectl view del $P > /tmp/td.del 2>&1 &
D=$!
i=0
while :; do
	answers "view list" xprobectl view list
	echo "$ANS" | awk -v p=$P '$1 == p { f = 1 } END { exit f }' && break
	kill -0 $D 2> /dev/null || break
	i=$((i + 1))
	[ $i -lt 100 ] || fail "P's view is still listed: $ANS"
	sleep 0.1
done
kill -0 $D 2> /dev/null ||
	fail "view del ended without waiting for the holdout: the scenario did not hold ($(cat /tmp/td.del))"
answers "status" xprobectl status --json
assert_eq "status still counts the view being torn down" 1 "$(json_get "$ANS" views)"
answers "hook list" xprobectl hook list
echo "$ANS" | awk -v id=$id '$1 == id { f = 1 } END { exit !f }' && fail "P's hook still listed: $ANS"
refused_with "a hook for P while its view goes" 1 "being torn down" xprobectl hook add $P $F
answers "view add Q" xprobectl view add $Q
answers "hook add Q" xprobectl hook add --trap --json $Q $F
qid=$(json_get "$ANS" id)
answers "hook list" xprobectl hook list
assert_eq "Q's hook is listed" int3 "$(echo "$ANS" | awk -v id=$qid '$1 == id { print $8 }')"
kill -0 $D 2> /dev/null || fail "view del ended while the holdout was held off its CPU"
note "ok: five commands answered while P's teardown waited"

# (b)
release
wait $D || fail "view del: $(cat /tmp/td.del)"
assert_eq "P runs the kernel's bytes" "$orig" "$(peek_byte $P $F+$E)"
assert_eq "Q's view is the one left" "$Q" "$(xprobectl view list | awk 'NR > 1 { print $1 }')"
xprobectl view del $Q > /dev/null || fail "view del Q"
assert_eq "views" 0 "$(status_field views)"
assert_eq "hooks" 0 "$(status_field hooks)"
assert_eq "memory" 0 "$(status_field memory_bytes)"
