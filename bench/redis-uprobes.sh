# Experiment 4: what user-space probes cost Redis, the original xprobes study.
# redis-server under redis-benchmark (GET, 4 clients), requests/s as a ratio
# to no tracing in the same round, rounds alternated:
#   none      no tracing
#   instaret  an xprobes user hook on siphash (every key lookup hashes): a
#             jump into a trampoline whose system call only Redis's view
#             intercepts, and a BPF program on the event that returns at
#             once: the floor of a user-hook event
#   instaret-uprobes  the same with a uprobe: the floor of a uprobe hit
#   trace1    xprobectl trace -f siphash: uprobe + uretprobe and the ON/OFF
#             accounting, kernel hooks in Redis's view (trace does not use
#             user hooks yet: issue 19, step 2)
#   traceall  xprobectl trace of every function in redis-server (how many
#             attach, and how long attaching takes, are recorded too)
# traceall is so slow that its sample is 1/20 the requests of the others.
. /xp/bench/lib.sh
ROUNDS=${ROUNDS:-5}
RB_N=${RB_N:-20000}
UBIN=$(command -v redis-server) || { echo "bench: redis-server missing in the VM (make bench installs it)"; exit 1; }
UBIN=$(readlink -f "$UBIN")
UFUNC=siphash
CONFIGS="none instaret instaret-uprobes trace1 traceall"
ATTACH_WAIT=600

redis-server --port 6379 --save '' --appendonly no --daemonize no > /tmp/redis.log 2>&1 &
TARGET=$!
sleep 1
redis-benchmark -p 6379 -t set -n 10000 -c 4 -q > /dev/null 2>&1	# keys for GET to find

measure() {
	local n=$RB_N
	[ "$c" = traceall ] && { n=$((RB_N / 20)); cp /tmp/helper.out /tmp/traceall.err; }
	redis-benchmark -p 6379 -t get -n $n -c 4 -r 10000 --csv 2>/dev/null |
		awk -F'"' '$2 == "GET" { printf "%.0f\n", $4 }'
}

rounds redis-uprobes "$CONFIGS" $ROUNDS
nfuncs=$(xprobectl trace --list-functions $TARGET 2>/dev/null | wc -l)
attached=$(sed -n 's/^xprobectl: tracing \([0-9]*\) function.*/\1/p' /tmp/traceall.err)
kill $TARGET
attach=$(awk '$2 == "traceall" { print $3 }' "$OUT/redis-uprobes.attach" | median)
attach1=$(awk '$2 == "trace1" { print $3 }' "$OUT/redis-uprobes.attach" | median)
echo "redis-server GET requests/s under user-space probes; $ROUNDS rounds, alternated"
echo "traceall: $attached of $nfuncs functions attached, in $attach s (median; trace1: $attach1 s)"
ratio_json redis-uprobes "$CONFIGS" "\"workload\":\"redis GET\",\"rounds\":$ROUNDS,\"functions\":$nfuncs,\"attached\":${attached:-0},\"traceall_attach_s\":$attach,\"trace1_attach_s\":$attach1,"
