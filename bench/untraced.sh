# Experiment 1: what tracing process A costs an untraced workload B.
#   untraced.sh syscall | tp | sys | memcached | redis
# A, an idle process, is the tracing target, with hooks on kernel functions
# B passes on every request; B runs untraced. Configurations (lib.sh setup):
# none, view, in, pre, post, and fentry for the syscall loop. Alternated
# round by round, the order rotating; B's throughput as a ratio to 'none' in
# the same round, median and range over ROUNDS rounds.
#   syscall    B = callrate: getppid() for D seconds; hook __x64_sys_getppid
#   tp         B = callrate kill: kill(itself, an ignored signal) for D
#              seconds, each call passing signal:signal_generate; A's view
#              has that tracepoint hooked (tp-view), against the same
#              program on the global tracepoint with a PID test (tp-in)
#   sys        B = callrate: getppid() for D seconds; A's view has
#              raw_syscalls:sys_enter hooked (tp-view: A's threads alone take
#              the system call path that reaches it), against the same
#              program on the global tracepoint with a PID test (tp-in:
#              every thread takes it, as bpftrace -p does)
#   module     B = callrate pread /proc/xp_modfn: each read calls
#              xp_modfn_hit(), a function in module text (the test module
#              xp_modfn), which A's view hooks (a call hook in A's copy of
#              the module's page): what a view with a hook in module text
#              costs a process that runs the module's shared text
#   memcached  B = memcached -t 1 under memcslap (get, 4 threads); hooks on
#              the read, write, sendmsg and epoll_wait syscalls
#   redis      B = redis-server under redis-benchmark (GET, 4 clients);
#              the same hooks
# Run under QEMU -icount (make bench does): guest time is the number of
# emulated instructions, so a rate is an instruction-cost measure, repeatable
# and blind to host load; load generator and server share that time, so the
# ratio is requests per instruction of the whole guest. Each sample waits
# SETTLE guest seconds first (free under sleep=off), so deferred clean-up of
# the previous configuration does not land on the next one.
. /xp/bench/lib.sh
W=${1:-syscall}
ROUNDS=${ROUNDS:-7}
D=${D:-1}
NET_HOOKS="__x64_sys_read __x64_sys_write __x64_sys_sendmsg __x64_sys_epoll_wait"

start_ready /tmp/A.out sysloop -g -n 1 getppid
TARGET=$BG

case $W in
syscall)
	HOOKS=__x64_sys_getppid
	CONFIGS="${CONFIGS:-none view in pre post fentry}"
	measure() { callrate -d $D getppid; } ;;
tp|sys)
	TP=signal:signal_generate CALL=kill
	[ $W = sys ] && TP=raw_syscalls:sys_enter CALL=getppid
	HOOKS=tracepoint:$TP
	CONFIGS="${CONFIGS:-none tp-view tp-in}"
	export VIEW_BPF=hook
	measure() { callrate -d $D $CALL; } ;;
module)
	[ -f /proc/xp_modfn ] || insmod /xp/xp_modfn.ko ||
		{ echo "bench: no xp_modfn test module in the VM" >&2; exit 1; }
	HOOKS=xp_modfn:xp_modfn_hit
	CONFIGS="${CONFIGS:-none view}"
	measure() { callrate -d $D pread /proc/xp_modfn; } ;;
memcached)
	command -v memcached > /dev/null && command -v memcslap > /dev/null ||
		{ echo "bench: memcached/memcslap missing in the VM (make bench installs them)"; exit 1; }
	HOOKS=$NET_HOOKS
	CONFIGS="${CONFIGS:-none view in pre post}"
	memcached -u root -p 11211 -U 0 -t 1 -m 64 &
	SERVER=$!
	sleep 1
	memcslap --servers=127.0.0.1:11211 --test=set --concurrency=4 --execute-number=2000 > /dev/null 2>&1
	# "Time to get  N keys by  T threads:  S seconds." -> keys per second
	measure() {
		memcslap --servers=127.0.0.1:11211 --test=get --concurrency=4 --execute-number=${MC_N:-5000} 2>&1 |
			awk '/Time to get/ { for (i = 1; i <= NF; i++) { if ($i == "get") n = $(i + 1); if ($i == "seconds.") s = $(i - 1) } }
			     END { if (s > 0) printf "%.0f\n", n / s }'
	} ;;
redis)
	command -v redis-server > /dev/null && command -v redis-benchmark > /dev/null ||
		{ echo "bench: redis-server/redis-benchmark missing in the VM (make bench installs them)"; exit 1; }
	HOOKS=$NET_HOOKS
	CONFIGS="${CONFIGS:-none view in pre post}"
	redis-server --port 6379 --save '' --appendonly no --daemonize no > /tmp/redis.log 2>&1 &
	SERVER=$!
	sleep 1
	# --csv: "test","rps",...: the GET line's requests per second
	measure() {
		redis-benchmark -p 6379 -t get -n ${RB_N:-20000} -c 4 --csv 2>/dev/null |
			awk -F'"' '$2 == "GET" { printf "%.0f\n", $4 }'
	} ;;
*) echo "usage: untraced.sh syscall|tp|sys|module|memcached|redis" >&2; exit 2 ;;
esac

rounds untraced-$W "$CONFIGS" $ROUNDS
[ -n "${SERVER:-}" ] && kill $SERVER
kill $TARGET
echo "untraced $W (B) while idle A is traced; hooks: $HOOKS; $ROUNDS rounds, alternated"
ratio_json untraced-$W "$CONFIGS" "\"workload\":\"$W\",\"rounds\":$ROUNDS,\"hooks\":\"$HOOKS\","
