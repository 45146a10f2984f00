# Fork: children follow their parent's view by default, grandchildren too,
# with the parent's hooks; a --no-follow-fork view keeps only its process.
# A tree of 50 processes, depth 3, each making N calls: the hook counts 50N.
# Then a storm: one process forks 150 children back to back, more than the
# members the fork tracepoint has at hand (module/views/mpool.c), at
# SCHED_FIFO on CPU 0, where no worker of normal priority can refill them
# in between, and every child must still be followed. STATUS counts every
# fork followed and every one missed.
. /xp/selftests/tests/lib.sh
N=100
F=__x64_sys_getppid

# counts ID: what a miss would be told by: the hook's hits, dropped and
# nested hits, and the forks the module followed and failed to follow.
counts() {
	note "hook $1: $(xprobectl hook list | awk -v id="$1" '$1 == id { print "hits " $5 ", dropped " $6 ", nested " $7 ", " $8 }');" \
		"forks followed $(status_field forks_followed), failed $(status_field follows_failed)"
}

# traced_tree OUTFILE VIEW-OPTION FORKTREE-ARGS...: forktree in a view
# (VIEW-OPTION "" for the default) with the hook on F, through its loop;
# sets TREE and id.
traced_tree() {
	local out=$1 vopt=$2
	shift 2
	forktree -g -e "$@" > "$out" &
	TREE=$!
	wait_for "$out" '^ready' "forktree $* did not start"
	xprobectl view add $vopt $TREE > /dev/null || fail "view add $vopt (forktree $*)"
	id=$(xprobectl hook add $TREE $F) || fail "hook add (forktree $*)"
	go_loop $TREE "$out"
}

forks0=$(status_field forks_followed)
failed0=$(status_field follows_failed)
traced_tree /tmp/t1.out "" -n $N
counts $id
assert_eq "processes in the tree" "done 50" "$(cat /tmp/t1.out | grep done)"
assert_eq "forks not followed" 0 $(($(status_field follows_failed) - failed0))
assert_eq "forks followed" 49 $(($(status_field forks_followed) - forks0))
assert_eq "hits from 50 processes x $N" $((50 * N)) "$(hook_col $id 5)"
# The children have exited; the sweeper detaches their address spaces.
sleep 1
set -- $(xprobectl view list | awk -v p=$TREE '$1 == p')
assert_eq "members left (the root)" 1 "$2"
xprobectl view del $TREE
kill -USR1 $TREE; wait $TREE

traced_tree /tmp/t2.out --no-follow-fork -n $N
assert_eq "hits with --no-follow-fork (the root only)" $N "$(hook_col $id 5)"
xprobectl view del $TREE
kill -USR1 $TREE; wait $TREE

# The storm: 150 children forked back to back, each making 20 calls.
forks0=$(status_field forks_followed)
traced_tree /tmp/t3.out "" -n 20 -f 150 -r 10
counts $id
assert_eq "processes in the storm" "done 151" "$(grep done /tmp/t3.out)"
assert_eq "storm forks not followed" 0 $(($(status_field follows_failed) - failed0))
assert_eq "storm forks followed" 150 $(($(status_field forks_followed) - forks0))
assert_eq "hits from 151 processes x 20" 3020 "$(hook_col $id 5)"
xprobectl view del $TREE
kill -USR1 $TREE; wait $TREE
assert_eq "no views left" 0 "$(status_field views)"
assert_eq "no memory held" 0 "$(status_field memory_bytes)"
