#!/bin/sh
# Guest side of bench/tbprof/profile.sh: Redis GETs under each of CONFIGS
# (bench/lib.sh's configurations), the profile counting only the GETs.
# The share (/mnt/share) is the host's profile directory, HOSTDIR there.
S=/mnt/share
. /xp/bench/lib.sh
RB_N=${RB_N:-20000}
UBIN=$(readlink -f "$(command -v redis-server)")
UFUNC=siphash
UFUNC0=echoCommand
ATTACH_WAIT=600
echo 0 > /proc/sys/kernel/randomize_va_space	# redis-benchmark's code at one place
redis-server --port 6379 --save '' --appendonly no --daemonize no > /tmp/redis.log 2>&1 &
TARGET=$!
sleep 1
redis-benchmark -p 6379 -t set -n 10000 -c 4 -q > /dev/null 2>&1
SEQ=0
# tbprof CMD: the plugin does CMD ("reset", "dump FILE") and acknowledges it
tbprof() {
	SEQ=$((SEQ + 1))
	echo "$SEQ $1" > $S/ctl
	i=0
	while [ ! -e $S/ack.$SEQ ]; do
		sleep 0.1
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "tbprof: no answer to '$1'"; exit 1; }
	done
}
for c in $CONFIGS; do
	if [ "$WHAT" = attach ]; then
		# the set-up itself: one operation, from the command's start
		# to the line that says it traces
		echo 1 > $S/ops.$c
		tbprof reset
		setup $c || { echo "tbprof: cannot set up $c: $(tail -n 3 /tmp/helper.out)"; exit 1; }
		tbprof "dump $HOSTDIR/prof.$c"
		cat /proc/kallsyms > $S/kallsyms.$c	# the programs it loaded too
		# the user code that matters is the tracer's own: ASLR is
		# off, so its libraries sit where the target's would
		cat /proc/$HELPER/maps > $S/maps.$c
		echo "$c: attached in $ATTACH_S s"
		teardown $c
		sleep 1
		continue
	fi
	setup $c || { echo "tbprof: cannot set up $c: $(tail -n 3 /tmp/helper.out)"; exit 1; }
	sleep 2
	cat /proc/kallsyms > $S/kallsyms.$c
	cat /proc/$TARGET/maps > $S/maps.$c
	echo $RB_N > $S/ops.$c
	tbprof reset
	g=$(redis-benchmark -p 6379 -t get -n $RB_N -c 4 -r 10000 --csv 2>/dev/null |
		awk -F'"' '$2 == "GET" { printf "%.0f\n", $4 }')
	tbprof "dump $HOSTDIR/prof.$c"
	echo "$c: $g GET/s"
	teardown $c
	sleep 1
done
kill $TARGET
