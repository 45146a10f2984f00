# Fork: children follow their parent's view by default, grandchildren too,
# with the parent's hooks; a --no-follow-fork view keeps only its process.
# A tree of 50 processes, depth 3, each making N calls: the hook counts 50N.
. /xp/selftests/tests/lib.sh
N=100
F=__x64_sys_getppid

start_forktree() {	# start_forktree OUTFILE: sets TREE
	forktree -g -e -n $N > "$1" &
	TREE=$!
	wait_for "$1" '^ready' "forktree did not start"
}

start_forktree /tmp/t1.out
xprobectl view add $TREE > /dev/null || fail "view add"
id=$(xprobectl hook add $TREE $F) || fail "hook add"
go_loop $TREE /tmp/t1.out
assert_eq "processes in the tree" "done 50" "$(cat /tmp/t1.out | grep done)"
assert_eq "hits from 50 processes x $N" $((50 * N)) "$(hook_col $id 5)"
# The children have exited; the sweeper detaches their address spaces.
sleep 1
set -- $(xprobectl view list | awk -v p=$TREE '$1 == p')
assert_eq "members left (the root)" 1 "$2"
xprobectl view del $TREE
kill -USR1 $TREE; wait $TREE

start_forktree /tmp/t2.out
xprobectl view add --no-follow-fork $TREE > /dev/null || fail "view add --no-follow-fork"
id=$(xprobectl hook add $TREE $F) || fail "hook add"
go_loop $TREE /tmp/t2.out
assert_eq "hits with --no-follow-fork (the root only)" $N "$(hook_col $id 5)"
xprobectl view del $TREE
kill -USR1 $TREE; wait $TREE
assert_eq "no views left" 0 "$(status_field views)"
assert_eq "no memory held" 0 "$(status_field memory_bytes)"
