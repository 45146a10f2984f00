# Experiment 4: what user-space probes cost Redis, the original xprobes study.
# redis-server under redis-benchmark (GET, 4 clients), requests/s as a ratio
# to no tracing in the same round, rounds alternated:
#   none      no tracing
#   instaret  an xprobes user hook with records on siphash (every key
#             lookup hashes): a jump into a trampoline that appends a
#             record to a per-CPU buffer in Redis, which Redis's view hands
#             to a BPF program that returns at once when Redis leaves its
#             CPU: the floor of user-hook records
#   instaret-events  the same hook with events: a system call that only
#             Redis's view intercepts, a program on the event that
#             returns at once
#   instaret-uprobes  the same with a uprobe: the floor of a uprobe hit
#   trace1    xprobectl trace -f siphash: a user hook with records and
#             returns and the ON/OFF accounting, kernel hooks in Redis's view
#   trace1-events     the same with --events
#   trace1-uprobes    the same with --uprobes (uprobe + uretprobe)
#   trace0    xprobectl trace -f echoCommand, which GET never calls: the
#             scheduler side of trace alone (not in the default list)
#   instaret0 instaret on echoCommand: the hand-over hooks alone (idem)
#   traceall  xprobectl trace of every function in redis-server, user
#             hooks where the module allows, uprobes on the rest (how many
#             attach, and how long attaching takes, are recorded too)
#   traceall-events   the same with --events
#   traceall-uprobes  the same with --uprobes
# the traceall rows are so slow that their samples are 1/4 the requests
# of the others (RB_ALL), still over 0.4 s of guest time each: 1/20 was
# 85 ms, whose figure moved by up to 14% from round to round of one boot
# while the instructions per GET did not (docs/experiments.md, 2026-11-27).
. /xp/bench/lib.sh
ROUNDS=${ROUNDS:-5}
RB_N=${RB_N:-20000}
RB_ALL=${RB_ALL:-$((RB_N / 4))}
UBIN=$(command -v redis-server) || { echo "bench: redis-server missing in the VM (make bench installs it)"; exit 1; }
UBIN=$(readlink -f "$UBIN")
UFUNC=siphash
UFUNC0=echoCommand
CONFIGS=${CONFIGS:-"none instaret instaret-events instaret-uprobes trace1 trace1-events trace1-uprobes traceall traceall-events traceall-uprobes"}
ATTACH_WAIT=600

redis-server --port 6379 --save '' --appendonly no --daemonize no > /tmp/redis.log 2>&1 &
TARGET=$!
sleep 1
redis-benchmark -p 6379 -t set -n 10000 -c 4 -q > /dev/null 2>&1	# keys for GET to find

measure() {
	local n=$RB_N
	case $c in traceall*) n=$RB_ALL; cp /tmp/helper.out /tmp/$c.err ;; esac
	redis-benchmark -p 6379 -t get -n $n -c 4 -r 10000 --csv 2>/dev/null |
		awk -F'"' '$2 == "GET" { printf "%.0f\n", $4 }'
}

rounds redis-uprobes "$CONFIGS" $ROUNDS
nfuncs=$(xprobectl trace --list-functions $TARGET 2>/dev/null | wc -l)
attached=$(sed -n 's/^xprobectl: tracing \([0-9]*\) function.*/\1/p' /tmp/traceall.err 2>/dev/null)
uhooked=$(sed -n 's/^xprobectl: tracing .*, \([0-9]*\) through user hooks.*/\1/p' /tmp/traceall.err 2>/dev/null)
attach_up=$(awk '$2 == "traceall-uprobes" { print $3 }' "$OUT/redis-uprobes.attach" | median)
kill $TARGET
attach=$(awk '$2 == "traceall" { print $3 }' "$OUT/redis-uprobes.attach" | median)
attach1=$(awk '$2 == "trace1" { print $3 }' "$OUT/redis-uprobes.attach" | median)
echo "redis-server GET requests/s under user-space probes; $ROUNDS rounds, alternated"
echo "traceall: $attached of $nfuncs functions attached ($uhooked through user hooks), in $attach s (median; trace1: $attach1 s; traceall-uprobes: $attach_up s)"
ratio_json redis-uprobes "$CONFIGS" "\"workload\":\"redis GET\",\"rounds\":$ROUNDS,\"functions\":$nfuncs,\"attached\":${attached:-0},\"user_hooks\":${uhooked:-0},\"traceall_attach_s\":${attach:-0},\"traceall_uprobes_attach_s\":${attach_up:-0},\"trace1_attach_s\":${attach1:-0},"
