#!/bin/sh
# trace --pprof read by the real reader: Debian's go tool pprof. One run of
# the lock scenario, in fallback mode on the host kernel (no module needed),
# with --json and --pprof together: per traced function, the profile's
# cumulative wall, on-CPU and lock time (pprof -top -sample_index=...) equals
# what --json reports (within 1% and 0.1 ms: the profile's stacks are folded
# from the same scheduler events, but at their own points); every sample
# type is there; lock waits carry their waker, the holder's xw_hold, as the
# woken_by label.
#   pprof-check.sh XPROBECTL WORKLOAD JSONQ DIR
set -eu
CTL=$1 WL=$2 JQ=$3 D=$4
mkdir -p "$D"
export HOME="$D"	# pprof keeps its state under $HOME/pprof
P=$D/lock.pb.gz
"$CTL" trace --no-views --json --pprof "$P" -W -f 'xw_*' -- "$WL" lock -n 6 -t 20 \
	> "$D/lock.json" 2> "$D/lock.err" || { cat "$D/lock.err"; exit 1; }
grep -q "wrote $P" "$D/lock.err" || { echo "trace did not say it wrote $P"; exit 1; }

# go tool pprof -top with values in ns: "flat flat% sum% cum cum% name"
cum() {	# cum SAMPLE_INDEX FUNCTION
	go tool pprof -top -nodefraction=0 -unit=ns -sample_index="$1" "$P" 2>/dev/null |
		awk -v f="$2" '$6 == f { sub(/ns$/, "", $4); print $4; found = 1 } END { if (!found) print 0 }'
}
fails=0
CAUSES="runq wakeup throttled lock mem io net sleep other"	# trace's, in its order
check() {	# check WHAT PPROF JSON
	d=$(($2 - $3))
	[ $d -lt 0 ] && d=$((-d))
	if [ $d -gt $(($3 / 100 + 100000)) ]; then
		echo "FAIL: $1: pprof $2 ns, trace --json $3 ns"
		fails=$((fails + 1))
	else
		echo "ok: $1: pprof $2 = json $3"
	fi
}
n=0
for f in xw_request xw_prepare xw_delay xw_hold; do
	F="functions.[name=$f]"
	check "$f wall" "$(cum wall $f)" "$("$JQ" "$D/lock.json" $F.wall_ns)"
	check "$f on_cpu" "$(cum on_cpu $f)" "$("$JQ" "$D/lock.json" $F.on_cpu_ns)"
	check "$f lock" "$(cum off_cpu_lock $f)" "$("$JQ" "$D/lock.json" $F.off_cpu_ns_by_cause.lock)"
	# trace --json's own books: each call's wall time is its ON plus its
	# OFF-CPU time by cause, also across a switch-in the tracer missed
	off=0
	for c in $CAUSES; do
		off=$((off + $("$JQ" "$D/lock.json" $F.off_cpu_ns_by_cause.$c)))
	done
	w=$("$JQ" "$D/lock.json" $F.wall_ns) on=$("$JQ" "$D/lock.json" $F.on_cpu_ns)
	[ "$w" = $((on + off)) ] ||
		{ echo "FAIL: $f: wall $w ns is not on $on + off-CPU $off"; fails=$((fails + 1)); }
	n=$((n + 1))
done
types=$(go tool pprof -raw "$P" 2>/dev/null | sed -n '/^Samples:/{n;p;q}')
for t in wall on_cpu off_cpu $CAUSES; do
	case $t in wall|on_cpu|off_cpu) want=$t ;; *) want=off_cpu_$t ;; esac
	echo "$types" | grep -q "\(^\| \)$want/nanoseconds" ||
		{ echo "FAIL: no sample type $want in: $types"; fails=$((fails + 1)); }
done
tags=$(go tool pprof -tags "$P" 2>/dev/null)
echo "$tags" | grep -q 'xw_hold (tid' ||
	{ echo "FAIL: no woken_by label naming xw_hold: $tags"; fails=$((fails + 1)); }
[ $fails = 0 ] || { echo "counters: $("$JQ" "$D/lock.json" counters)"; exit 1; }
echo "pprof reads the profile of $n functions: wall, on-CPU and lock equal trace --json's; 12 sample types; woken_by labels"
