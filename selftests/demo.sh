# make demo: runs inside the VM (as root, module loaded at boot).
F=__x64_sys_getppid
echo "== kernel $(uname -r), xprobes loaded:"
lsmod | grep '^xprobes '
xprobectl status
echo
echo "== process A (traced) and B (untraced) will both call getppid() 1000 times"
sysloop -g -e -n 1000 getppid > /tmp/a.out &
A=$!
while ! grep -q ready /tmp/a.out; do sleep 0.1; done
echo "\$ xprobectl view add $A"
xprobectl view add $A
echo "\$ xprobectl hook add $A $F"
xprobectl hook add $A $F
echo
echo "== the same kernel address, as A and as B see it:"
echo "\$ xprobectl peek $A $F 16     # A: int3 (cc) after ENDBR + fentry"
xprobectl peek $A $F 16
echo "\$ xprobectl peek $$ $F 16     # B: the original code"
xprobectl peek $$ $F 16
echo
kill -USR1 $A
while ! grep -q done /tmp/a.out; do sleep 0.1; done
sysloop -n 1000 getppid
echo "== after A's 1000 calls and B's 1000 calls:"
echo "\$ xprobectl hook list"
xprobectl hook list
echo "\$ xprobectl view list"
xprobectl view list
xprobectl view del $A
kill -USR1 $A
wait $A
echo "== the hook counted A only; B ran the shared, unmodified text."
echo
echo "== xprobectl trace: where does xw_request's time go? (workload: selftests/progs/workload.c)"
echo "   xw_request() = xw_prepare() (5 ms of CPU) + xw_delay() (20 ms of the scenario's kind)"
insmod /xp/kmod/configfs.ko 2>/dev/null
insmod /xp/kmod/null_blk.ko irqmode=2 completion_nsec=2000000 hw_queue_depth=1 \
	submit_queues=1 queue_mode=2 nr_devices=1 2>/dev/null
for sc in cpu lock io; do
	echo
	case $sc in
	cpu) echo "-- CPU contention: a busy process pinned to the same CPU" ;;
	lock) echo "-- lock contention: another thread holds the mutex (in xw_hold); -W: who woke us" ;;
	io) echo "-- I/O: O_DSYNC writes to a disk with 2 ms per request" ;;
	esac
	w=
	[ $sc = lock ] && w=" -W"
	echo "\$ xprobectl trace$w -f 'xw_*' -- workload $sc -n 10"
	xprobectl trace$w -f 'xw_*' -- workload $sc -n 10 -d /dev/nullb0 2>&1 | grep -v '^truth'
done
echo
echo "\$ xprobectl trace -W --folded -f 'xw_*' -- workload lock -n 10     # flamegraph.pl input, us"
xprobectl trace -W --folded -f 'xw_*' -- workload lock -n 10 2>/dev/null
echo
echo "== done."
