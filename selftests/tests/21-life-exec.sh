# Exec: a traced process stays traced in its new address space with the same
# hooks, through a chain of three programs (execchain, execchain, sysloop);
# a child started with posix_spawn (vfork + exec) is followed too.
. /xp/selftests/tests/lib.sh
N=100
F=__x64_sys_getppid

rm -f /tmp/e.out	# not another test's (the wait below could read it first)
execchain -g -n $N -k 1 > /tmp/e.out &
E=$!
wait_for /tmp/e.out '^ready' "execchain did not start"
xprobectl view add $E > /dev/null || fail "view add"
id=$(xprobectl hook add $E $F) || fail "hook add"
go_loop $E /tmp/e.out
assert_eq "the last program is sysloop" sysloop "$(cat /proc/$E/comm)"
assert_eq "hits over 3 programs" $((3 * N)) "$(hook_col $id 5)"
o=$(entry_off $$ $F)
# placed as an int3, the hook may become a jump between the two reads below
wait_settled
assert_eq "the exec'd process still sees its hook" "$(armed_byte $id)" "$(peek_byte $E $F+$o)"
assert_eq "an untraced process does not" 53 "$(peek_byte $$ $F+$o)"
xprobectl view del $E
kill -USR1 $E; wait $E

execchain -g -n $N -k 0 -s > /tmp/s.out &
S=$!
wait_for /tmp/s.out '^ready' "execchain -s did not start"
xprobectl view add $S > /dev/null || fail "view add"
id=$(xprobectl hook add $S $F) || fail "hook add"
go_loop $S /tmp/s.out
assert_eq "hits of a process and its posix_spawn child" $((2 * N)) "$(hook_col $id 5)"
xprobectl view del $S
kill -USR1 $S; wait $S

# A long chain: 21 execs in one process. Between exec_mmap() dropping the old
# mm and the exec tracepoint, the old mm looks dead; the module's sweeper
# (every 200 ms) must not take the process out of its view then.
for r in 1 2 3; do
	execchain -g -n 10 -k 20 > /tmp/c.out &
	C=$!
	wait_for /tmp/c.out '^ready' "execchain did not start"
	xprobectl view add $C > /dev/null || fail "view add"
	id=$(xprobectl hook add $C $F) || fail "hook add"
	go_loop $C /tmp/c.out
	assert_eq "round $r: hits over 22 programs" 220 "$(hook_col $id 5)"
	xprobectl view del $C
	kill -USR1 $C; wait $C
done
# The same chain while its CPU keeps changing under it: exec_mmap() may load
# the new mm on one CPU and the exec tracepoint run on another. A CPU that ran
# the new mm before it joined keeps translations under its PCID, reused
# without a flush unless the mm's TLB generation moved (TCG has no PCID, so
# this is checked on the tables: every member's pgd entry is the view's and
# its generation moved when it joined; xprobectl audit --tables).
if [ "$(nproc)" -ge 2 ] && command -v taskset > /dev/null; then
	execchain -g -n 10 -k 20 > /tmp/m.out &
	M=$!
	wait_for /tmp/m.out '^ready' "execchain did not start"
	xprobectl view add $M > /dev/null || fail "view add"
	id=$(xprobectl hook add $M $F) || fail "hook add"
	( cpu=0; while kill -0 $M 2> /dev/null; do taskset -p $((1 << cpu)) $M > /dev/null 2>&1; cpu=$((1 - cpu)); done ) &
	FLIP=$!
	go_loop $M /tmp/m.out
	kill $FLIP 2> /dev/null; wait $FLIP 2> /dev/null
	assert_eq "migrating chain: hits over 22 programs" 220 "$(hook_col $id 5)"
	j=$(xprobectl audit --tables --json) || fail "audit --tables: $j"
	assert_eq "migrating chain: page-table violations" 0 "$(json_get "$j" violations)"
	[ "$(json_get "$j" members)" -ge 1 ] || fail "no member checked: $j"
	note "ok: the exec'd process's pgd entry and TLB generation checked ($j)"
	xprobectl view del $M
	kill -USR1 $M; wait $M
fi
assert_eq "no memory held" 0 "$(status_field memory_bytes)"
