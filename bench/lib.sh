# Helpers for the guest-side experiments (sourced).
OUT=${BENCH_OUT:-/mnt/share}
[ -d "$OUT" ] && [ -w "$OUT" ] || OUT=/tmp/bench
mkdir -p "$OUT"

# median of numbers on stdin
# median, minimum, maximum of one number per line; nothing for no input
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) exit; if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -g | head -n 1; }
maximum() { sort -g | tail -n 1; }

# wait_line FILE PATTERN [SECONDS]: until FILE has a line matching PATTERN.
# Empty FILE before starting the writer: the shell truncates it only in the
# child, after the fork, so an old line could satisfy the wait at once.
wait_line() {
	local i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt $((${3:-10} * 20)) ] || { echo "bench: timed out waiting for '$2' in $1" >&2; return 1; }
		sleep 0.05
	done
}

# start_ready FILE CMD...: run CMD in the background, its output in FILE
# (emptied first, see wait_line), until it prints "ready"; its pid in BG.
start_ready() {
	local f=$1
	shift
	: > "$f"
	"$@" > "$f" &
	BG=$!
	wait_line "$f" ready
}

# The tracing configurations the experiments compare, on process $TARGET and
# kernel functions $HOOKS (setup CONFIG / teardown CONFIG):
#   none    no tracing at all
#   view    an xprobes view of TARGET with hooks on HOOKS, and a BPF program
#           counting the hooks' hits (raw tracepoint xprobes_hook); each hook
#           at the function's first instruction, whatever kind it becomes
#   view-call  the same, each hook on the function's first instruction that
#           becomes a call hook (5 bytes or more)
#   view-int3  the same instruction as view-call, kept an int3 (--trap)
#   view-bare  as view, with no BPF program attached (the tracepoint is off):
#           what the hook mechanism itself costs
#   view-hc the same as view, with the hookcount program whatever VIEW_BPF says
#   view-kp the same as view, each hook running pidfilter's kprobe program (the
#           same body as the in configuration's, on the hook's registers)
#   view-tp as view, the program attached to the xprobes_hook tracepoint
#           instead of run by each hook directly (xprobectl hook prog), as
#           xprobectl's own commands do
# The view configurations count hits with VIEW_BPF: hookcount (per hook and
# process, the default) or hook (pidfilter -m hook: the same program body as
# the in and fentry configurations, PID test included).
#   in      global kprobes on HOOKS, PID test inside BPF (bpftrace -p, bcc)
#   tp-view a tracepoint hook on $TP (CATEGORY:NAME) in TARGET's view, running
#           the pinned program of VIEW_BPF=hook (PID test and two adds)
#   tp-in   the same program on $TP, global (a raw tracepoint), PID test
#           inside BPF: what bpftrace -p does with tracepoint:CATEGORY:NAME
#   fentry  global fentry on __do_sys_getppid, PID test inside BPF
#   post    global kprobes sending every event to user space, which filters
#   pre     per-task kprobe perf events on TARGET, no BPF (perf stat -p)
# and user functions $UFUNC of binary $UBIN in TARGET:
#   instaret  an xprobes user hook with records on UFUNC (a view of TARGET
#             with the three hooks that hand records over), a raw
#             tracepoint program on the records that returns at once
#   instaret-events  the same hook with events, the program on its events
#   instaret-uprobes  a uprobe on UFUNC whose BPF program returns at once
# and callrate's cr_fn in TARGET (binary $BIN), ucall-cost.sh:
#   uhook, uhook-ret, urec, urec-ret, uhook-bare, uprobe, uprobe-ret (see there)
#   trace1    xprobectl trace -f UFUNC (a user hook with records and returns
#             where the module allows, kernel hooks)
#   traceall  xprobectl trace of every function of the main binary
#   trace1-nosums, traceall-nosums  the same, every call handed over to
#             trace's BPF program (XPROBECTL_NO_SUMS=1: the process sums none)
#   trace1-events, traceall-events  the same with --events
#   trace1-uprobes, traceall-uprobes  the same with --uprobes
# and syscall metrics of TARGET:
#   metrics     xprobectl metrics through a view of TARGET
#   metrics-fb  xprobectl metrics --no-views (the global syscall tracepoints)
# setup leaves how long attaching took (guest seconds) in ATTACH_S.
PIN=/sys/fs/bpf/xp_bench_prog
uptime_cs() { tr -d . < /proc/uptime | cut -d' ' -f1; }
# call_site FUNC: FUNC+OFF of FUNC's first instruction that becomes a call
# hook, found once by trying them in the view of an idle process (cached).
call_site() {
	local off=9 j id p
	if [ ! -s /tmp/call_site.$1 ]; then
		sleep 600 &
		p=$!
		xprobectl view add $p > /dev/null || { kill $p; return 1; }
		while [ $off -lt 128 ]; do
			if j=$(xprobectl hook add --json $p $1+$off 2>>/tmp/helper.out); then
				id=$(echo "$j" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
				xprobectl hook del $id
				case $j in *'"kind":"call"'*) echo "$1+$off" > /tmp/call_site.$1; break ;; esac
			fi
			off=$((off + 1))
		done
		kill $p
		wait $p 2>/dev/null
	fi
	cat /tmp/call_site.$1
}
# records_hooks: TARGET's view gets the three hooks that hand records over.
records_hooks() {
	local fts=finish_task_switch.isra.0
	grep -q " $fts\$" /proc/kallsyms || fts=finish_task_switch
	xprobectl hook add --records $TARGET switch_mm_irqs_off > /dev/null &&
		xprobectl hook add --records $TARGET $fts > /dev/null &&
		xprobectl hook add --records $TARGET do_exit > /dev/null
}
setup() {
	local f t0 i hooks
	t0=$(uptime_cs)
	: > /tmp/helper.out
	case $1 in
	none) return 0 ;;
	view|view-call|view-int3|view-bare|view-hc|view-kp|view-tp|tp-view)
		xprobectl view add $TARGET > /dev/null || return 1
		hooks=$HOOKS
		[ $1 = tp-view ] && hooks=tracepoint:$TP
		for f in $hooks; do
			case $1 in
			view-call) xprobectl hook add $TARGET $(call_site $f) > /dev/null ;;
			view-int3) xprobectl hook add --trap $TARGET $(call_site $f) > /dev/null ;;
			*) xprobectl hook add $TARGET $f > /dev/null ;;
			esac || return 1
		done
		# jump hooks go live after an RCU-tasks grace period
		i=0
		while xprobectl hook list | grep -q "jump once" && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		case $1:${VIEW_BPF:-hookcount} in
		view-bare:*) { echo attached; exec sleep 1000000; } > /tmp/helper.out & ;;
		tp-view:*) pidfilter -p $TARGET -m hook -P $PIN > /tmp/helper.out & ;;
		view-tp:hook) pidfilter -p $TARGET -m hook > /tmp/helper.out & ;;
		view-tp:*) hookcount > /tmp/helper.out & ;;
		view-kp:*) pidfilter -p $TARGET -m kprobe -P $PIN > /tmp/helper.out & ;;
		view-hc:*|*:hookcount) hookcount -P $PIN > /tmp/helper.out & ;;
		*:hook) pidfilter -p $TARGET -m hook -P $PIN > /tmp/helper.out & ;;
		esac ;;
	tp-in) pidfilter -p $TARGET -m tp -f $TP > /tmp/helper.out & ;;
	in) pidfilter -p $TARGET -m kprobe $(for f in $HOOKS; do echo "-f $f"; done) > /tmp/helper.out & ;;
	instaret|instaret0)	# instaret0: on UFUNC0, which the workload never calls
		f=$UFUNC
		[ $1 = instaret ] || f=$UFUNC0
		xprobectl view add $TARGET > /dev/null && records_hooks || return 1
		xprobectl uhook add --records $TARGET $f > /dev/null 2>> /tmp/helper.out || return 1
		instaret -R > /tmp/helper.out & ;;
	instaret-events)
		xprobectl view add $TARGET > /dev/null || return 1
		xprobectl uhook add $TARGET $UFUNC > /dev/null 2>> /tmp/helper.out || return 1
		instaret -U > /tmp/helper.out & ;;
	instaret-uprobes) instaret -p $TARGET -b $UBIN -f $UFUNC > /tmp/helper.out & ;;
	uhook|uhook-ret|uhook-bare|urec|urec-ret)	# ucall-cost: cr_fn of callrate
		xprobectl view add $TARGET > /dev/null || return 1
		case $1 in urec*) records_hooks || return 1 ;; esac
		case $1 in
		uhook) xprobectl uhook add $TARGET cr_fn ;;
		uhook-ret) xprobectl uhook add --returns $TARGET cr_fn ;;
		urec) xprobectl uhook add --records $TARGET cr_fn ;;
		urec-ret) xprobectl uhook add --records --returns $TARGET cr_fn ;;
		uhook-bare) xprobectl uhook add --no-events $TARGET cr_fn ;;
		esac > /dev/null 2>> /tmp/helper.out || return 1
		case $1 in
		uhook) instaret -U > /tmp/helper.out & ;;
		uhook-ret) instaret -U -r > /tmp/helper.out & ;;
		urec*) instaret -R > /tmp/helper.out & ;;
		uhook-bare) { echo attached; exec sleep 1000000; } > /tmp/helper.out & ;;
		esac ;;
	uprobe) instaret -p $TARGET -b $BIN -f cr_fn > /tmp/helper.out & ;;
	uprobe-ret) instaret -r -p $TARGET -b $BIN -f cr_fn > /tmp/helper.out & ;;
	trace1) xprobectl trace -f "$UFUNC" $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	trace0) xprobectl trace -f "$UFUNC0" $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	traceall) xprobectl trace $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	traceall-nosums) XPROBECTL_NO_SUMS=1 xprobectl trace $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	trace1-nosums) XPROBECTL_NO_SUMS=1 xprobectl trace -f "$UFUNC" $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	trace2) xprobectl trace -f 'cr_*' $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	trace2-nosums) XPROBECTL_NO_SUMS=1 xprobectl trace -f 'cr_*' $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	trace1-events) xprobectl trace --events -f "$UFUNC" $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	traceall-events) xprobectl trace --events $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	trace1-uprobes) xprobectl trace --uprobes -f "$UFUNC" $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	traceall-uprobes) xprobectl trace --uprobes $TARGET > /tmp/trace.out 2> /tmp/helper.out & ;;
	metrics) xprobectl metrics $TARGET > /dev/null 2> /tmp/helper.out & ;;
	metrics-fb) xprobectl metrics --no-views $TARGET > /dev/null 2> /tmp/helper.out & ;;
	*) pidfilter -p $TARGET -m $1 $(for f in $HOOKS; do echo "-f $f"; done) > /tmp/helper.out & ;;
	esac
	HELPER=$!
	wait_line /tmp/helper.out '^attached\|xprobectl: tracing\|metrics of pid' ${ATTACH_WAIT:-10} || return 1
	# the program pinned for the hooks to run directly
	case $1 in view|view-call|view-int3|view-hc|view-kp|tp-view)
		# not the module's own hooks (a view's guard): they run no BPF
		for i in $(xprobectl hook list $TARGET | awk "NR > 1 && !/the module's/ { print \$1 }"); do
			xprobectl hook prog $i $PIN || return 1
		done ;;
	esac
	ATTACH_S=$(( $(uptime_cs) - t0 ))
	ATTACH_S=$((ATTACH_S / 100)).$(printf %02d $((ATTACH_S % 100)))
}

teardown() {
	[ "$1" = none ] && return 0
	kill $HELPER
	wait $HELPER
	# (a target that has exited took its view with it)
	case $1 in view*|tp-view|instaret|instaret0|instaret-events|uhook*|urec*) kill -0 $TARGET 2>/dev/null && xprobectl view del $TARGET ;; esac
	return 0
}

# rounds NAME "CONFIGS" ROUNDS: run 'measure' (which prints one number,
# higher is better) under each configuration, ROUNDS times, the order
# rotating each round, SETTLE seconds before and after each setup; with
# PREPARE set, that command runs before each setup (to start a fresh
# target). Writes $OUT/NAME.raw: "round config value", and $OUT/NAME.attach:
# "round config seconds-to-attach". 'measure' sees the configuration in $c.
rounds() {
	local name=$1 configs=$2 n=$3 r=1 order c v
	RAW=$OUT/$name.raw
	: > "$RAW"
	: > "$OUT/$name.attach"
	while [ $r -le $n ]; do
		order=$(echo $configs | awk -v r=$r '{ for (i = 0; i < NF; i++) printf "%s ", $(((i + r) % NF) + 1) }')
		for c in $order; do
			sleep ${SETTLE:-3}
			[ -z "${PREPARE:-}" ] || $PREPARE
			ATTACH_S=0
			setup $c || { echo "bench: cannot set up $c: $(tail -n 3 /tmp/helper.out)" >&2; exit 1; }
			echo "$r $c $ATTACH_S" >> "$OUT/$name.attach"
			sleep ${SETTLE:-3}
			v=$(measure)
			teardown $c
			[ -n "$v" ] || { echo "bench: $name: no measurement under $c" >&2; exit 1; }
			echo "$r $c $v" >> "$RAW"
		done
		r=$((r + 1))
	done
}

# round_ratios CONFIG RAW: per round of RAW ("round config value"), CONFIG's value
# over none's, one per line
round_ratios() {
	awk -v c=$1 '{ v[$1 "," $2] = $3 } END { for (k in v) { split(k, p, ","); if (p[2] == c) print v[k] / v[p[1] ",none"] } }' "$2"
}

# ratio_json NAME "CONFIGS" EXTRA-JSON: from $OUT/NAME.raw, per configuration
# the median value and the median, min and max of its ratio to 'none' in the
# same round; writes $OUT/NAME.json and prints a table.
ratio_json() {
	local name=$1 configs=$2 extra=$3 c vals ratios first=1
	{
		printf '{"experiment":"%s",%s"results":[' "$name" "$extra"
		for c in $configs; do
			vals=$(awk -v c=$c '$2 == c { print $3 }' "$OUT/$name.raw")
			ratios=$(round_ratios $c "$OUT/$name.raw")
			[ $first = 1 ] || printf ','
			first=0
			printf '{"config":"%s","median":%s,"ratio_median":%s,"ratio_min":%s,"ratio_max":%s}' \
				$c "$(echo "$vals" | median)" "$(echo "$ratios" | median)" \
				"$(echo "$ratios" | minimum)" "$(echo "$ratios" | maximum)"
		done
		echo "]}"
	} > "$OUT/$name.json"
	printf '%-8s %14s %10s %18s\n' config "median" "ratio" "ratio range"
	sed 's/},{/}\n{/g' "$OUT/$name.json" |
		sed -n 's/.*"config":"\([^"]*\)","median":\([^,]*\),"ratio_median":\([^,]*\),"ratio_min":\([^,]*\),"ratio_max":\([^}]*\)}.*/\1 \2 \3 \4 \5/p' |
		while read -r c v med lo hi; do
			printf '%-8s %14.0f %10.4f %8.4f - %.4f\n' $c $v $med $lo $hi
		done
	echo "results: $OUT/$name.json"
}
