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
# A process on a view, held in its execve between exec_mmap() and the end
# (the new program's data page, which the exec zeroes past the data, read
# from a FUSE mount that holds page reads): its old mm is going and its new
# one has not joined. A hook added, or the view ended, by pid meanwhile
# waits for the exec (the module says "try again", -EAGAIN; xprobectl asks
# again for 2 s, and says so at the first wait with XPROBECTL_SAY_AGAIN)
# and then acts. Until 2026-12-04 the module said "no
# kernel view" at once: metrics --cgroup, whose poll made a restarted
# server's view as its shell exec'd it, gave the server up (53-cgroup lost
# its 206 responses in CI).
# fuse_mount DIR: fusehold -p on DIR (pid FH), answering
fuse_mount() {
	mkdir -p $1
	: > /tmp/fx.out
	fusehold -p $1 /xp/bin/sysloop > /tmp/fx.out 2>&1 &
	FH=$!
	wait_for /tmp/fx.out '^mounted' "fusehold -p did not mount $1"
}
# held_exec DIR: fuse_mount DIR, and X, a shell on a view of its own that
# execs sysloop from there, held in the exec.
held_exec() {
	fuse_mount $1
	rm -f /tmp/fxgo; mkfifo /tmp/fxgo
	: > /tmp/fxl.out
	sh -c "read x < /tmp/fxgo; exec $1/prog -g -e -n $N getppid" > /tmp/fxl.out 2>&1 &
	X=$!
	xprobectl view add $X > /dev/null || fail "view add (a shell about to exec)"
	echo go > /tmp/fxgo
	wait_for /tmp/fx.out '^page 1' "the exec did not read its page from the mount"
}
# hook_across_exec PID WHAT: a hook added by PID, held in its exec, waits
# for it (xprobectl says when the module first told it to try again: the
# request met the window, and the release comes after it); then it counts
# the N calls of the program PID became.
hook_across_exec() {
	: > /tmp/fxh.err
	XPROBECTL_SAY_AGAIN=1 xprobectl hook add $1 $F > /tmp/fxh.out 2> /tmp/fxh.err &
	XH=$!
	wait_for /tmp/fxh.err 'asking every 50 ms' "hook add in $2's exec did not wait: $(cat /tmp/fxh.err)"
	kill -USR2 $FH
	wait $XH || fail "hook add across $2's exec: $(cat /tmp/fxh.err)"
	id=$(cat /tmp/fxh.out)
	wait_for /tmp/fxl.out '^ready' "sysloop from the mount did not start ($2)"
	go_loop $1 /tmp/fxl.out
	assert_eq "hits of the hook added in $2's exec" $N "$(hook_col $id 5)"
}
grep -qw fuse /proc/filesystems || insmod /xp/kmod/fuse.ko 2> /dev/null
if [ -n "$DEBUG_KERNEL" ] && ! grep -qw fuse /proc/filesystems; then
	# (selftests/debug/debug.config has no FUSE; the main suites run it)
	note "the debug kernel has no FUSE: the exec-window part runs in make check's main suites"
else
	grep -qw fuse /proc/filesystems || fail "no FUSE in the guest (6.1: the initramfs carries fuse.ko)"
	held_exec /tmp/fx1
	hook_across_exec $X "the root"
	xprobectl view del $X || fail "view del"
	end_loop $X /tmp/fxl.out
	kill $FH; wait $FH
	held_exec /tmp/fx2
	: > /tmp/fxd.out
	XPROBECTL_SAY_AGAIN=1 xprobectl view del $X > /tmp/fxd.out 2>&1 &
	XD=$!
	wait_for /tmp/fxd.out 'asking every 50 ms' "view del in the exec did not wait: $(cat /tmp/fxd.out)"
	kill -USR2 $FH
	wait $XD || fail "view del across the exec: $(cat /tmp/fxd.out)"
	wait_for /tmp/fxl.out '^ready' "sysloop from the mount did not start (2)"
	xprobectl view list | awk -v p=$X 'NR > 1 && $1 == p { f = 1 } END { exit f }' ||
		fail "the view ended in the exec is still there: $(xprobectl view list)"
	end_loop $X /tmp/fxl.out
	kill $FH; wait $FH
	# A member that is not the view's root: a child its shell forked once
	# on the view, held in its exec (the module looked for the root alone
	# until the review of 2026-12-04).
	fuse_mount /tmp/fx3
	rm -f /tmp/fxgo /tmp/fxc.pid; mkfifo /tmp/fxgo
	: > /tmp/fxl.out
	sh -c "read x < /tmp/fxgo; sh -c 'read y < /tmp/fxgo; exec /tmp/fx3/prog -g -e -n $N getppid' \
		> /tmp/fxl.out 2>&1 & echo \$! > /tmp/fxc.pid; wait" &
	P3=$!
	xprobectl view add $P3 > /dev/null || fail "view add (3)"
	echo go > /tmp/fxgo
	wait_for /tmp/fxc.pid '[0-9]' "the member was not forked"
	C=$(cat /tmp/fxc.pid)
	echo go > /tmp/fxgo
	wait_for /tmp/fx.out '^page 1' "the member's exec did not read its page from the mount"
	hook_across_exec $C "a member"
	xprobectl view del $P3 || fail "view del (3)"
	kill -USR1 $C
	wait $P3
	kill $FH; wait $FH
	note "ok: a hook added and a view ended in an exec's window wait for it"
fi
assert_eq "no memory held" 0 "$(status_field memory_bytes)"
