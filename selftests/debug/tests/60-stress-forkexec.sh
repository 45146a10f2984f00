# Stress: fork/exec/exit storm in one traced family for XP_STRESS_SECS
# (default 20). The root, a shell on a view, keeps starting seeded batches of
# children that fork (forktree), exec chains of programs (execchain, plain and
# through posix_spawn), run threads (sysloop -t) and exit; all of them follow
# its view. Hooks on __x64_sys_getppid (every child makes a known number of
# calls), kernel_clone, begin_new_exec and do_exit. Checks: the getppid hook
# counts exactly the family's calls, the others at least one per fork, exec
# and exit; the view held more than its root at times; when the root exits,
# the view ends by itself and the module's memory returns to its baseline.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid
SECS=${XP_STRESS_SECS:-20}
. /xp/selftests/debug/tests/stress-lib.sh
note "duration ${SECS} s"

D=/tmp/60
rm -rf $D
mkdir -p $D
mkfifo $D/go $D/end

# The family's root. Only shell builtins run in it (ash calls getppid() once,
# at startup, before the view exists); every program it starts makes a known
# number of getppid() calls. args: DIR SEED SECS
cat > $D/root.sh <<'EOF'
D=$1 XS=$2
rnd() { XS=$(( (XS * 1103515245 + 12345) % 2147483648 )); R=$(( (XS >> 8) % $1 )); }
# release PID FILE: a program that waits for SIGUSR1 after printing "done".
release() {
	local i=0 l
	while :; do
		l=
		read l 2>/dev/null < $2
		case $l in done*) break ;; esac
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			echo "release: $1 never printed done" >> $D/err
			kill -9 $1
			return
		fi
		sleep 0.05
	done
	kill -USR1 $1
}
calls=0 procs=0 execs=0 rounds=0
echo ready > $D/ready
read go < $D/go
end=$(( ${EPOCHREALTIME%.*} + $3 ))
while [ ${EPOCHREALTIME%.*} -lt $end ]; do
	rounds=$((rounds + 1))
	pend=
	rnd 4
	b=$((R + 1))
	while [ $b -gt 0 ]; do
		b=$((b - 1))
		rnd 6
		n=$(( (R + 1) * 50 ))
		rnd 5
		case $R in
		0)	sysloop -n $n getppid &
			calls=$((calls + n)) procs=$((procs + 1)) execs=$((execs + 1)) ;;
		1)	rnd 3
			t=$((R + 2))
			sysloop -n $n -t $t getppid &
			calls=$((calls + n * t)) procs=$((procs + 1)) execs=$((execs + 1)) ;;
		2)	rnd 3
			case $R in 0) f=2 p=3 ;; 1) f=2,2 p=7 ;; *) f=3,2 p=10 ;; esac
			forktree -n $n -f $f &
			calls=$((calls + n * p)) procs=$((procs + p)) execs=$((execs + 1)) ;;
		3)	rnd 3
			k=$R
			execchain -n $n -k $k > $D/ec.$rounds.$b &
			pend="$pend $!:$D/ec.$rounds.$b"
			calls=$((calls + n * (k + 2))) procs=$((procs + 1)) execs=$((execs + k + 2)) ;;
		*)	rnd 2
			k=$R
			execchain -n $n -k $k -s > $D/ec.$rounds.$b &
			pend="$pend $!:$D/ec.$rounds.$b"
			calls=$((calls + n * (k + 2))) procs=$((procs + 2)) execs=$((execs + k + 2)) ;;
		esac
	done
	for p in $pend; do
		release ${p%%:*} ${p#*:}
	done
	wait
done
echo "calls $calls procs $procs execs $execs rounds $rounds" > $D/tally
read x < $D/end
EOF

sh $D/root.sh $D $XS $SECS &
ROOT=$!
i=0
while [ ! -s $D/ready ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the root did not start"
	sleep 0.05
done
xprobectl view add $ROOT > /dev/null || fail "view add"
idF=$(xprobectl hook add $ROOT $F) || fail "hook add $F: $idF"
idC=$(xprobectl hook add $ROOT kernel_clone) || fail "hook add kernel_clone: $idC"
idE=$(xprobectl hook add $ROOT begin_new_exec) || fail "hook add begin_new_exec: $idE"
idX=$(xprobectl hook add $ROOT do_exit) || fail "hook add do_exit: $idX"
echo go > $D/go

# While it runs: how many processes the view holds, and the audit.
maxp=1
deadline=$(( ${EPOCHREALTIME%.*} + SECS + 120 ))
while [ ! -s $D/tally ]; do
	[ ${EPOCHREALTIME%.*} -lt $deadline ] || fail "the storm did not end in $((SECS + 120)) s"
	p=$(xprobectl view list | awk -v r=$ROOT '$1 == r { print $2 }')
	[ -n "$p" ] || fail "the root's view vanished while it runs"
	[ "$p" -gt $maxp ] && maxp=$p
	sleep 1
done
set -- $(cat $D/tally)
calls=$2 procs=$4 execs=$6 rounds=$8
[ ! -s $D/err ] || fail "storm: $(cat $D/err)"
note "storm: $rounds rounds, $procs processes, $execs execs, $calls getppid calls; up to $maxp processes on the view"
[ $maxp -gt 1 ] || fail "the view never held a child (fork following)"

hF=$(hook_col $idF 5) hC=$(hook_col $idC 5) hE=$(hook_col $idE 5) hX=$(hook_col $idX 5)
note "hits: getppid $hF, kernel_clone $hC, begin_new_exec $hE, do_exit $hX"
# Exact, but checked last: the other checks still run when calls were lost.
lost=
if [ "$hF" = "$calls" ]; then
	note "ok: getppid hits = the family's calls ($calls)"
else
	lost="getppid hits: expected the family's $calls calls, got $hF ($((calls - hF)) not counted)"
	note "MISMATCH: $lost"
fi
assert_eq "getppid dropped" 0 "$(hook_col $idF 6)"
assert_ge "kernel_clone hits >= processes started ($procs)" "$hC" $procs
assert_ge "begin_new_exec hits >= execs ($execs)" "$hE" $execs
assert_ge "do_exit hits >= processes ended ($procs)" "$hX" $procs
note "ok: fork, exec and exit hooks counted at least every process"
assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"

# The root exits: the view ends by itself (sweeper, every 200 ms).
echo end > $D/end
wait $ROOT || fail "the root exited $?"
view_gone_checks
[ -z "$lost" ] || fail "$lost"
