# Shared helpers for the guest selftests (sourced by each test).
# A test prints what it checks, exits 0 on pass, 1 on failure, 4 to skip.

KO=/xp/xprobes.ko

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 4; }
note() { echo "$*"; }

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	note "ok: $1 = '$3'"
}

# assert_match WHAT PATTERN TEXT   (grep -E pattern)
assert_match() {
	printf '%s\n' "$3" | grep -Eq -- "$2" || fail "$1: '$3' does not match /$2/"
	note "ok: $1 matches /$2/"
}

# expect_rc WHAT EXPECTED_RC CMD...   runs CMD, output in $OUT, checks the exit code
expect_rc() {
	local what=$1 want_rc=$2 rc
	shift 2
	OUT=$("$@" 2>&1)
	rc=$?
	[ "$rc" = "$want_rc" ] || fail "$what: '$*' exited $rc, expected $want_rc; output: $OUT"
	note "ok: $what (exit $rc)"
}

# refused_with WHAT RC PATTERN CMD...: CMD exits RC and says why in one
# line matching PATTERN (grep -E)
refused_with() {
	local what=$1 rc=$2 pat=$3
	shift 3
	expect_rc "$what" "$rc" "$@"
	assert_match "$what: message" "$pat" "$OUT"
	assert_eq "$what: one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
}

module_loaded() { lsmod | grep -q '^xprobes '; }
load_module() { module_loaded || insmod $KO || fail "insmod failed"; }
unload_module() { ! module_loaded || rmmod xprobes || fail "rmmod failed"; }

# meminfo FIELD -> value in kB
meminfo() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }

# Kernel memory that a leak in the module would grow: slab, vmalloc, per-cpu.
kmem_kb() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	echo $(( $(meminfo Slab) + $(meminfo VmallocUsed) + $(meminfo Percpu) ))
}

# The debug kernel (KASAN, lockdep, kmemleak; make check-debug) runs about ten
# times slower under TCG. There, loops run fewer rounds: what matters is that
# every path runs under the checkers, not how many times.
DEBUG_KERNEL=
[ -e /sys/kernel/debug/kmemleak ] && DEBUG_KERNEL=1
# scaled N [DIV]: N, or N/DIV (default 4, at least 2) on the debug kernel
scaled() {
	if [ -n "$DEBUG_KERNEL" ]; then
		_n=$(($1 / ${2:-4}))
		[ $_n -ge 2 ] || _n=2
		echo $_n
	else
		echo $1
	fi
}

# assert_no_growth WHAT GROWTH_KB LIMIT_KB: kernel memory did not grow. On the
# debug kernel KASAN's quarantine holds freed objects back (up to 1/32 of RAM),
# so growth says nothing there; kmemleak's scan at the end of that boot
# (debug/kmemleak.sh) judges leaks instead.
assert_no_growth() {
	if [ -n "$DEBUG_KERNEL" ]; then
		note "($1: ${2} kB; not judged here: KASAN quarantine, kmemleak scans at the end)"
		return 0
	fi
	[ "$2" -lt "$3" ] || fail "$1: kernel memory grew by ${2} kB (limit ${3} kB)"
	note "ok: $1: kernel memory grew by ${2} kB (limit ${3} kB)"
}

# json_get JSON KEY -> scalar value of the first "KEY": in JSON (no nesting awareness)
json_get() {
	printf '%s' "$1" | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|[^,}]*\).*/\1/p" | tr -d '"'
}

# Command and attribute numbers from the uapi header (CMD_PEEK, A_PID, ...).
. /xp/selftests/ids.sh

# wait_for FILE REGEX WHAT [TRIES]: wait until a line of FILE matches REGEX
# (a helper's "ready", say), polling every 50 ms, at most TRIES times (200:
# 10 s); fail with WHAT and the file's contents if it never does.
wait_for() {
	local i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt "${4:-200}" ] || fail "$3: $(cat "$1" 2>/dev/null | tail -n 3)"
		sleep 0.05
	done
}

# wait_exec PID PROG: until PID (a shell's child started with &) runs PROG,
# so that a lookup of its functions by /proc/PID/exe finds them
wait_exec() {
	local i=0
	while [ "$(readlink /proc/$1/exe 2>/dev/null)" != "$2" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "pid $1 does not run $2: $(readlink /proc/$1/exe 2>&1)"
		sleep 0.05
	done
}

# cued_start NAME CMD: a process (pid in CUED_PID) that runs the shell
# command CMD once per cue, in a child (which joins its view, if it has
# one); cued_go NAME cues it; cued_wait NAME WHAT waits until that round is
# over and fails with WHAT unless CMD succeeded.
cued_start() {
	rm -f /tmp/cued-$1.*
	sh -c 'k=1
		while :; do
			while [ ! -f /tmp/cued-'"$1"'.go.$k ]; do sleep 0.05; done
			sh -c "$0"
			echo $? > /tmp/cued-'"$1"'.done.$k
			k=$((k + 1))
		done' "$2" &
	CUED_PID=$!
	eval "cued_k_$1=0"
}
cued_go() {
	eval "cued_k_$1=\$((cued_k_$1 + 1))"
	touch /tmp/cued-$1.go.$(eval echo \$cued_k_$1)
}
cued_wait() {
	local k
	k=$(eval echo \$cued_k_$1)
	wait_for /tmp/cued-$1.done.$k . "$2: round $k did not end" 600
	[ "$(cat /tmp/cued-$1.done.$k)" = 0 ] || fail "$2: round $k failed"
}

# wait_eq WANT TRIES SECS WHAT CMD...: until CMD prints WANT, polling every
# SECS seconds at most TRIES times; fail with WHAT and what it printed last.
wait_eq() {
	local want=$1 tries=$2 secs=$3 what=$4 i=0 got
	shift 4
	while got=$("$@"); [ "$got" != "$want" ]; do
		i=$((i + 1))
		[ $i -lt "$tries" ] || fail "$what: $got"
		sleep "$secs"
	done
}

# wait_gone PID TRIES SECS WHAT: until PID is gone, polling every SECS
# seconds at most TRIES times; fail with WHAT if it is still there.
wait_gone() {
	local i=0
	while kill -0 $1 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt $2 ] || fail "$4"
		sleep $3
	done
}

# wait_text PID ADDR LEN BYTES WHAT: PID's memory at ADDR (uhtarget -r, LEN
# bytes) reads BYTES within 5 s, or fail with WHAT and what it reads.
wait_text() { wait_eq "$4" 100 0.05 "$5" uhtarget -r "$1" "$2" "$3"; }

# start_loop OUTFILE SYSLOOP-ARGS...: start sysloop -g in the background and
# wait until it is ready; sets LOOP_PID.
start_loop() {
	local out=$1
	shift
	# emptied first: a "ready" left by an earlier loop in the same file
	# would let the caller cue this one before it blocks SIGUSR1, which
	# would kill it
	: > "$out"
	sysloop -g "$@" > "$out" &
	LOOP_PID=$!
	wait_for "$out" '^ready' "sysloop did not start"
}

# go_loop PID OUTFILE: let a sysloop -g -e run its loop and wait until it is done.
go_loop() {
	kill -USR1 "$1"
	wait_for "$2" '^done' "sysloop did not finish" 6000
}

# end_loop PID OUTFILE: let a sysloop -g -e finish (running its loop first if
# it was never started), and reap it.
end_loop() {
	grep -q '^done' "$2" 2>/dev/null || go_loop "$1" "$2"
	kill -USR1 "$1"
	wait "$1"
}

# toggling_shell N ENABLE-FILE: start a shell in the background (its pid in
# S) that waits for /tmp/go, then N times enables the tracepoint ENABLE-FILE,
# signals itself (SIGUSR2, ignored) and disables it again: a process that
# patches kernel text itself (jump labels).
toggling_shell() {
	rm -f /tmp/go
	sh -c 'trap "" USR2
		while [ ! -f /tmp/go ]; do sleep 0.05; done
		i=0
		while [ $i -lt '"$1"' ]; do
			echo 1 > '"$2"'
			kill -USR2 $$
			echo 0 > '"$2"'
			i=$((i + 1))
		done' &
	S=$!
}

# hook_col ID COLUMN: a column of 'xprobectl hook list' for live hook ID
# (2 pid, 3 address, 4 location, 5 hits, 6 dropped, 7 nested, 8 kind); the
# rows of hooks that ended with their module are left out.
hook_col() { xprobectl hook list | awk -v id="$1" -v c="$2" '$1 == id && !/[(]ended: / { print $c }'; }

# guard_of PID: the id of the guard of PID's view, if it has one: the
# module's own hook on enter_lazy_tlb, placed with the view's first jump
# over several instructions, which keeps tasks without an mm off its page
# tables (module/views/guard.c). It counts among the hooks and its page among the
# private ones.
guard_of() {
	xprobectl hook list --json | tr '{' '\n' | grep "\"pid\":$1," | grep '"guard":true' |
		sed -n 's/.*"id":\([0-9]*\).*/\1/p'
}

# guards: how many views have a guard now (each one hook more in status).
guards() { xprobectl hook list --json | tr '{' '\n' | grep -c '"guard":true'; }

# status_field NAME: a field of 'xprobectl status --json'.
status_field() { json_get "$(xprobectl status --json)" "$1"; }

# assert_none_late: no change of module space was followed late (status),
# since the module's load; a failure carries the module's own lines on why
# (views/modspace.c: a probe's misses, or the entries a view lacked).
assert_none_late() {
	local late
	late=$(status_field module_space_late)
	[ "$late" = 0 ] || fail "module space: $late change(s) followed late: $(dmesg |
		grep 'module space followed late' | tail -n 8 | tr '\n' ';')"
	note "ok: no change of module space was followed late"
}

# Address of a kernel symbol.
ksym() { awk -v s="$1" '$3 == s && NF == 3 { print $1; exit }' /proc/kallsyms; }

# The first byte of 'xprobectl peek PID SYMBOL[+OFF]'.
peek_byte() { xprobectl peek "$1" "$2" 1 | awk '{ print $2 }'; }
# wait_jump ID: wait until hook ID is a live jump (placed as an int3, it
# becomes one once preempted tasks are out: an RCU-tasks grace period).
wait_jump() {
	local i=0
	while [ "$(hook_col $1 8)" != jump ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "hook $1 did not become a jump: $(xprobectl hook list | awk -v id=$1 '$1 == id')"
		sleep 0.1
	done
}
# wait_settled: until no hook waits to become a jump.
wait_settled() {
	local i=0
	while xprobectl hook list | grep -q "jump once"; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "hooks still pending: $(xprobectl hook list)"
		sleep 0.1
	done
}
# wait_views N: until N views are left. A view whose process exited ends in
# the background, and with call or jump hooks that takes an RCU-tasks grace
# period; until then its hooks still count in the coherence figures.
wait_views() { wait_eq "$1" 300 0.1 "views left, not $1" status_field views; }
# armed_byte ID: the first byte hook ID puts in its copy: cc for an int3, e9
# for a call or jump hook (a jmp to its entry). After wait_settled: a hook
# waiting to become a jump reads int3 here and may be a jump a moment later.
armed_byte() { case $(hook_col $1 8) in int3) echo cc ;; *) echo e9 ;; esac; }

# entry_off PID SYMBOL: a function's first instruction after its ENDBR (6.12
# builds with IBT, 6.1 does not) and its fentry call site, in decimal: where a
# hook goes by default.
entry_off() {
	case $(xprobectl peek "$1" "$2" 4 | awk '{ print $2 $3 $4 $5 }') in
	f30f1efa) echo 9 ;;
	*) echo 5 ;;
	esac
}

# insn_at PID SYMBOL FROM: the first offset at or after FROM (decimal) where
# PID's view takes a hook, i.e. an instruction boundary xprobes accepts; the
# trial hook is removed again. The kernels' code differs, the tests' needs
# ("another instruction, 5 bytes further") do not.
insn_at() {
	local off=$3 id
	while [ $off -lt $(($3 + 32)) ]; do
		if id=$(xprobectl hook add "$1" "$2+$off" 2>/dev/null); then
			xprobectl hook del "$id" > /dev/null
			echo $off
			return 0
		fi
		off=$((off + 1))
	done
	return 1
}

# thunk_return SYMBOL: the function returns by a jump into the range between
# __indirect_thunk_start and _end, where 6.1 links its return thunks, so the
# kprobe optimizer of 6.1 takes the jump for an indirect one and optimizes
# no probe in the function (arch/x86/kernel/kprobes/opt.c,
# insn_is_indirect_jump). The jumps stay only on CPUs that need a return
# thunk (the Haswell model); elsewhere they are patched to ret.
thunk_return() {
	local s e f
	s=$(ksym __indirect_thunk_start) e=$(ksym __indirect_thunk_end) f=$(ksym $1)
	[ -n "$s" ] && [ -n "$e" ] && [ -n "$f" ] || return 1
	xprobectl peek $$ $1 64 | cut -d: -f2 | tr ' ' '\n' | grep . |
	awk -v lo=$((0x$s - 0x$f)) -v hi=$((0x$e - 0x$f)) '
		function h(x) { return index("0123456789abcdef", substr(x, 1, 1)) * 16 - 17 + index("0123456789abcdef", substr(x, 2, 1)) }
		{ b[n++] = $1 }
		END {
			for (i = 0; i + 4 < n; i++) {
				if (b[i] != "e9") continue
				r = h(b[i+1]) + h(b[i+2]) * 256 + h(b[i+3]) * 65536 + h(b[i+4]) * 16777216
				if (r >= 2147483648) r -= 4294967296
				if (i + 5 + r >= lo && i + 5 + r < hi) exit 0
			}
			exit 1
		}'
}

# fsize PID SYMBOL: size of a kernel function (from xprobes' own refusal).
fsize() {
	xprobectl hook add "$1" "$2+0xfffff" 2>&1 | sed -n 's/.*(size \(0x[0-9a-f]*\)).*/\1/p'
}

# hook_all_pages PID SYMBOL: hook the first hookable instruction in every
# page SYMBOL spans, so that all of it runs from PID's private copies.
# Prints the hook ids.
hook_all_pages() {
	local pid=$1 sym=$2 start size page last off end id
	start=$((0x$(ksym "$sym")))
	size=$(fsize "$pid" "$sym")
	[ -n "$size" ] || return 1
	page=$((start & ~0xfff))
	last=$(((start + size - 1) & ~0xfff))
	while [ $page -le $last ]; do
		off=$((page - start))
		[ $off -lt 9 ] && off=9
		end=$((off + 96))
		while [ $off -lt $end ] && [ $off -lt $((size)) ]; do
			if id=$(xprobectl hook add "$pid" "$sym+$off" 2>/dev/null); then
				echo "$id"
				break
			fi
			off=$((off + 1))
		done
		page=$((page + 4096))
	done
}

# jump_among IDS...: wait until no hook waits to become a jump, note the
# kinds of hooks IDS, and fail unless one of them is a jump (a coherence test
# then also runs the kernel's patching past a live jump hook).
jump_among() {
	local id kinds=
	wait_settled
	for id in "$@"; do
		kinds="$kinds $id:$(hook_col $id 8)/$(hook_col $id 9)"
	done
	note "hook kinds:$kinds"
	case "$kinds" in *:jump/*) ;; *) fail "no jump hook among$kinds" ;; esac
}

# trace_seen PATTERN: how many lines of the trace buffer match PATTERN,
# counting up to 100. The tests that look for a process's events have it
# call a traced function flat out, which fills the buffer (megabytes per CPU):
# reading all of it made the kernel format every event and grep match each
# line, and took most of 18-view-calls' three minutes in the emulator
# (2026-11-29). Whether the process is there needs the first lines only;
# that none is there still reads the whole buffer.
trace_seen() {
	grep -m 100 -c "$1" /sys/kernel/tracing/trace
}

# trace_shows PATTERN WHAT: after 0.3 s of tracing, the trace buffer has a
# line matching PATTERN (WHAT says what it is); fail if none.
trace_shows() {
	local n
	sleep 0.3
	n=$(trace_seen "$1")
	[ "$n" -gt 0 ] || fail "not in the trace: $2"
	note "ok: in the trace: $2 ($n lines counted, up to 100)"
}

# kprobe_fired EVENT PID WHAT: the kprobe event EVENT (tracefs), enabled for
# 0.3 s, recorded hits of sysloop process PID; fail with WHAT if none.
kprobe_fired() {
	echo 1 > /sys/kernel/tracing/events/kprobes/$1/enable
	trace_shows "sysloop-$2 .*$1" "$3 fired for $2"
}

# task_stat /proc/PID/task/TID: TS = its stat fields after the comm (for
# set --: the state is $1, the flags $7, the last CPU $37).
task_stat() { TS=$(cat $1/stat 2>/dev/null) && TS=${TS##*) }; }
PF_KTHREAD=0x200000

# on_cpu CPU: "tid:comm:state" of the user tasks that ran last on CPU.
on_cpu() {
	local d c=$1
	for d in /proc/[0-9]*/task/[0-9]*; do
		task_stat $d || continue
		set -- $TS
		[ $(($7 & PF_KTHREAD)) = 0 ] && [ "${37}" = "$c" ] || continue
		echo -n " ${d##*/}:$(cat $d/comm 2>/dev/null):$1"
	done
}

# cpu1_only PID: every other user task (thread) off CPU 1, its affinity
# saved for cpu1_restore. Kernel threads stay.
cpu1_only() {
	local d t m keep=$1
	CPU1_SAVED=
	for d in /proc/[0-9]*/task/[0-9]*; do
		t=${d##*/}
		[ "$t" = "$keep" ] && continue
		task_stat $d || continue
		set -- $TS
		[ $(($7 & PF_KTHREAD)) = 0 ] || continue
		m=$(taskset -p $t 2>/dev/null | awk '{ print $NF }')
		[ -n "$m" ] && taskset -p 1 $t > /dev/null 2>&1 && CPU1_SAVED="$CPU1_SAVED $t:$m"
	done
}
cpu1_restore() {
	local e
	for e in $CPU1_SAVED; do
		taskset -p ${e#*:} ${e%:*} > /dev/null 2>&1
	done
	CPU1_SAVED=
}

# Leave tracefs as a test found it: no tracer, no filter, no event.
reset_tracing() {
	local T=/sys/kernel/tracing
	echo nop > $T/current_tracer 2>/dev/null
	echo > $T/set_ftrace_filter 2>/dev/null
	echo 0 > $T/events/enable 2>/dev/null
	# a test that failed midway leaves its kprobe events registered: a
	# registered kprobe keeps later tests' hooks from becoming jumps
	echo > $T/kprobe_events 2>/dev/null
	echo > $T/trace 2>/dev/null
	echo 1 > $T/tracing_on 2>/dev/null
}

# pidfilter_both PID HOOK TP PIN: pidfilter's program (a PID test, two adds)
# run by tracepoint hook HOOK (pinned at PIN) and, as bpftrace -p attaches
# it, on the global raw tracepoint TP; their reports in /tmp/pf-view.out and
# /tmp/pf-global.out once pidfilter_both_end HOOK has stopped them.
pidfilter_both() {
	: > /tmp/pf-view.out; : > /tmp/pf-global.out
	pidfilter -p $1 -m hook -P $4 > /tmp/pf-view.out &
	PF_VIEW=$!
	wait_for /tmp/pf-view.out '^attached' "pidfilter (pinned) did not start"
	xprobectl hook prog $2 $4 || fail "hook prog pidfilter's program"
	pidfilter -p $1 -m tp -f $3 > /tmp/pf-global.out &
	PF_GLOBAL=$!
	wait_for /tmp/pf-global.out '^attached' "pidfilter (global) did not start"
}
pidfilter_both_end() {
	kill -INT $PF_GLOBAL
	wait $PF_GLOBAL
	xprobectl hook prog $1 --detach || fail "hook prog --detach"
	kill -INT $PF_VIEW
	wait $PF_VIEW
}

# --- xprobectl trace ----------------------------------------------------------
# A disk whose every request takes $1 ms (null_blk, timer completions, one
# request at a time): a known I/O delay. /dev/nullb0.
nullblk_setup() {
	[ -b /dev/nullb0 ] && return 0
	if [ -f /xp/kmod/null_blk.ko ]; then
		insmod /xp/kmod/configfs.ko 2>/dev/null
		insmod /xp/kmod/null_blk.ko irqmode=2 completion_nsec=$(($1 * 1000000)) \
			hw_queue_depth=1 submit_queues=1 queue_mode=2 nr_devices=1 ||
			skip "SKIP null_blk is not available"
	else
		# Built in (the debug kernel, booted with null_blk.nr_devices=0):
		# the same disk made through configfs.
		mount -t configfs configfs /sys/kernel/config 2>/dev/null
		_nb=/sys/kernel/config/nullb/nullb0
		[ -d ${_nb%/*} ] || skip "SKIP null_blk is not available"
		mkdir $_nb && echo 2 > $_nb/queue_mode && echo 2 > $_nb/irqmode &&
			echo $(($1 * 1000000)) > $_nb/completion_nsec &&
			echo 1 > $_nb/hw_queue_depth && echo 1 > $_nb/submit_queues &&
			echo 1 > $_nb/power || fail "cannot make a null_blk disk through configfs"
	fi
	[ -b /dev/nullb0 ] || fail "null_blk loaded but /dev/nullb0 is missing"
}

# trace_scenario OUT SCENARIO [trace options]: trace the workload's xw_*
# functions with --json into OUT.json; the workload's "truth" line and
# xprobectl's stderr go to OUT.err.
trace_scenario() {
	_out=$1 _sc=$2
	shift 2
	case " $* " in *" --children "*|*" -C "*) wait_detachers ;; esac
	rm -f /tmp/xw.go
	xprobectl trace --json -f 'xw_*' "$@" -- workload $_sc -n ${XW_N:-6} -t ${XW_MS:-20} \
		-d /dev/nullb0 ${XW_CG:+-c $XW_CG} ${XW_GO:+-w /tmp/xw.go} > $_out.json 2> $_out.err &
	_tp=$!
	# A scenario takes seconds (a minute on the debug kernel): one that
	# hangs says where its threads are before the test is killed.
	# XW_GO=N (fork, with -v): the workers start their calls once xprobectl
	# has said that N processes have their probes.
	_s=0
	while kill -0 $_tp 2>/dev/null; do
		[ -z "${XW_GO:-}" ] || [ -e /tmp/xw.go ] ||
			[ "$(grep -c ': probes attached ' $_out.err)" -lt $XW_GO ] || touch /tmp/xw.go
		[ $_s -lt 2400 ] || { task_dump xprobectl workload; kill -9 $_tp; fail "trace $_sc hung"; }
		sleep 0.1
		_s=$((_s + 1))
	done
	wait $_tp || fail "trace $_sc: $(cat $_out.err)"
	jsonq $_out.json . > /dev/null || fail "trace $_sc: invalid JSON: $(head -c 300 $_out.json)"
	DETACHERS="$DETACHERS $(sed -n 's/.*in the background (pid \([0-9]*\)).*/\1/p' $_out.err)"
}

# wait_detachers: until the uprobes of the scenarios so far are gone. On a
# kernel without uprobe_multi (6.1) a session's probes go one by one in the
# background after it ends, each a grace period under the kernel's
# event_mutex (tens of seconds in the VM); a uprobe attached meanwhile, by
# anyone, waits behind them. A --children session attaches each child's
# probes when it sees the fork: behind such a queue, the child has run its
# calls, or exited, before they are in (6.1-rt, 2026-11-29).
wait_detachers() {
	local p
	for p in $DETACHERS; do
		wait_gone $p 1800 0.1 "the probes of an earlier session still detach after 180 s (pid $p)"
	done
	DETACHERS=
}

# task_dump COMM...: state, wait channel and kernel stack of every thread of
# the processes named COMM (a hang's evidence), and blocked tasks to the log.
task_dump() {
	local c p t
	for c in "$@"; do
		for p in $(pidof $c); do
			for t in /proc/$p/task/*; do
				note "$c $p thread ${t##*/}: $(grep -E '^State' $t/status) wchan $(cat $t/wchan 2>/dev/null)"
				sed 's/^/#   /' $t/stack 2>/dev/null
			done
		done
	done
	echo w > /proc/sysrq-trigger 2>/dev/null
}

# fn FILE FUNC PATH: a value of function FUNC in a trace report
fn() { jsonq "$1" "functions.[name=$2].$3"; }
# check_lost_returns JSON ERR FUNC MADE MIN TAG: of the MADE calls of FUNC,
# trace (--json in JSON, its stderr in ERR) counted each as a call or as a
# lost return (no return thunk for it), some lost and at least MIN
# counted; the session's counters hold them, no call lost; and trace said
# so on stderr.
check_lost_returns() {
	_c=$(fn $1 $3 calls) _l=$(fn $1 $3 returns_lost)
	note "$6 $3: $_c calls counted, $_l returns lost, abandoned $(jsonq $1 counters.abandoned)"
	assert_eq "$6 $3: calls counted + returns lost = calls made" $4 $((_c + _l))
	assert_ge "$6 $3: returns lost past the thunks" "$_l" 1
	assert_ge "$6 $3: calls counted through the thunks" "$_c" $5
	assert_eq "$6 counters: returns_lost is $3's, no call lost" "$_l 0" \
		"$(jsonq $1 counters.returns_lost) $(jsonq $1 counters.calls_lost)"
	grep -q "^xprobectl: 0 calls and $_l returns of traced functions went uncounted" $2 ||
		fail "$6 trace did not say what went uncounted: $(grep -v '^#' $2 | tail -n 3)"
}
# hist_total JSON FUNC: the calls in FUNC's wall histogram (trace -H --json)
hist_total() {
	_n=$(fn $1 $2 'histograms.wall.#') _t=0 _i=0
	while [ $_i -lt "${_n:-0}" ]; do
		_t=$((_t + $(fn $1 $2 "histograms.wall.[$_i].count")))
		_i=$((_i + 1))
	done
	echo $_t
}
# (the space before the name: delay_wall_ns is also the end of
# delay_rundelay_wall_ns)
truth() { sed -n "s/.*truth.* $2=\([0-9]*\).*/\1/p" "$1"; }

# assert_within WHAT PCT ACTUAL EXPECTED: |ACTUAL - EXPECTED| <= PCT% of EXPECTED
assert_within() {
	_d=$(($3 - $4))
	[ $_d -lt 0 ] && _d=$((-_d))
	[ $((_d * 100)) -le $(($2 * $4)) ] ||
		fail "$1: $3 is not within $2% of $4"
}
# assert_ge WHAT A B
assert_ge() { [ "$2" -ge "$3" ] || fail "$1: $2 < $3"; }
assert_le() { [ "$2" -le "$3" ] || fail "$1: $2 > $3"; }

# check_balance FILE FUNC: ON + OFF within 10% of wall
check_balance() {
	_w=$(fn $1 $2 wall_ns) || fail "$2 missing from $1"
	assert_within "$2 ON+OFF vs wall" 10 $(($(fn $1 $2 on_cpu_ns) + $(fn $1 $2 off_cpu_ns))) $_w
}

# check_wall FILE FUNC TRUTHFILE: FUNC's traced wall time lies between the
# workload's clock inside the function and its clock around the calls (the
# probes fire between the two; 100 us of slack for the two clock readers).
# Below the inner clock means a call was lost; the distance to the outer one
# is probe cost, which a debug kernel under TCG makes about 1 ms a call.
check_wall() {
	_w=$(fn $1 $2 wall_ns) _in=$(truth $3 delay_in_ns) _out=$(truth $3 delay_wall_ns)
	note "$2 wall: inside $_in <= traced $_w <= around $_out"
	assert_ge "$2 wall: traced vs inside the function (a call missed?)" $_w $((_in - 100000))
	assert_ge "$2 wall: around the calls vs traced" $((_out + 100000)) $_w
}

# check_request_self FILE TRUTHFILE [WHY]: xw_request's self time is no
# more than the workload's own measure of it (request_self_in_ns: its
# calls' walls less those of the calls it makes, measured inside them),
# with 4 ms for the two clocks' disagreement. A callee the tracer lost
# leaves its time there; time the host takes from the guest lands in both.
check_request_self() {
	_s=$(fn $1 xw_request self.wall_ns) _t=$(truth $2 request_self_in_ns)
	note "xw_request self $_s ns, by the workload's clocks $_t ns (around its calls $(truth $2 request_self_ns) ns); wall $(fn $1 xw_request wall_ns) ns, by the workload's clocks $(truth $2 request_wall_ns) ns"
	[ $_s -le $((_t + 4000000)) ] ||
		fail "xw_request self $_s ns is over the workload's own measure $_t ns by more than 4 ms${3:+: $3}"
}

# check_spin FILE FUNC: FUNC only computes, so its time is ON-CPU or waiting
# to run (preempted: a debug kernel's own threads take a CPU now and then),
# at least 90% of its wall between them.
check_spin() {
	_on=$(fn $1 $2 on_cpu_ns) _rq=$(fn $1 $2 off_cpu_ns_by_cause.runq) _w=$(fn $1 $2 wall_ns)
	note "$2: wall $_w on $_on runq $_rq off $(fn $1 $2 off_cpu_ns)"
	assert_ge "$2 ON-CPU + runq >= 90% of wall" $(((_on + _rq) * 10)) $((_w * 9))
}

# check_cause FILE FUNC CAUSE TRUTHFILE [PCT [INJECTED_NS]]: the off-CPU time the workload
# injected into FUNC (its wall by its own clock inside FUNC minus what we saw
# on CPU) is in CAUSE. Waking up is not running: on a busy machine the thread
# then waits for a CPU, and that part is rightly wakeup (or runq when it was
# preempted). So: CAUSE is at least PCT% (80 unless given; issue 20's
# scenarios ask 90) of the off-CPU time we saw outside those two and at
# least half of it outside the run delay the kernel itself counted around
# the calls (schedstat; a CPU-starved guest once kept a woken thread off the
# CPU longer than its lock wait: lock 20 ms, runq+wakeup 35 ms), and CAUSE +
# runq + wakeup at least 80% of the injected time. INJECTED_NS, for a
# function xw_delay calls (libc's nanosleep): what the workload asked of it
# (its calls times MS of sleep). xw_delay's wall less the callee's ON-CPU
# time would also count what xw_delay itself spent off the CPU outside the
# callee: preempted after the callee returned on a busy guest (2026-12-06,
# a run delay of 49.6 ms in nanosleep's six calls: 57 ms more in xw_delay
# than in nanosleep, which failed the check).
check_cause() {
	_c=$(fn $1 $2 off_cpu_ns_by_cause.$3) _pct=${5:-80}
	_off=$(fn $1 $2 off_cpu_ns)
	_rq=0
	[ $3 = runq ] || _rq=$(fn $1 $2 off_cpu_ns_by_cause.runq)
	[ $3 = wakeup ] || _rq=$((_rq + $(fn $1 $2 off_cpu_ns_by_cause.wakeup)))
	_inj=${6:-$(($(truth $4 delay_in_ns) - $(fn $1 $2 on_cpu_ns)))}
	_rd=0
	[ $3 = runq ] || [ $3 = wakeup ] || _rd=$(truth $4 delay_rundelay_wall_ns)
	[ -n "$_rd" ] || fail "$2: the workload did not say its run delay: $(cat $4)"
	note "$2: $3=$_c runq+wakeup=$_rq off=$_off injected~$_inj kernel's run delay $_rd"
	assert_ge "$2 $3 vs $_pct% of off-CPU outside runq and wakeup" $((_c * 100)) $(((_off - _rq) * _pct))
	assert_ge "$2 $3 vs half of off-CPU outside the kernel's run delay" $((_c * 2)) $((_off - _rd))
	assert_ge "$2 $3 + runq + wakeup vs 80% of injected" $(((_c + _rq) * 10)) $((_inj * 8))
}

# check_waker FILE FUNC KIND WFUNC TRUTHFILE (a report made with -W): at
# least 90% of FUNC's waits (the time its wakers were charged) were ended
# by a waker of KIND: "thread" in the traced function WFUNC on the thread
# the workload names (waker_tid), "task" that process, or "outside",
# "timer"... The wakers' total is at least 90% of FUNC's own off-CPU time
# outside runq and wakeup (a wait with no waker row would be lost).
check_waker() {
	_n=$(fn $1 $2 'wakers.#') || fail "$2: no wakers in $1 (-W)"
	_all=0 _hit=0 _i=0 _rows=
	while [ $_i -lt $_n ]; do
		_ns=$(fn $1 $2 "wakers.[$_i].off_cpu_ns")
		_k=$(fn $1 $2 "wakers.[$_i].kind") _wf=$(fn $1 $2 "wakers.[$_i].function" 2>/dev/null)
		_wt=$(fn $1 $2 "wakers.[$_i].tid" 2>/dev/null)
		_rows="$_rows $_k:${_wf:-}:${_wt:-}=$_ns"
		_all=$((_all + _ns))
		if [ "$_k" = $3 ]; then
			case $3 in
			thread) [ "$_wf" = "$4" ] && [ "$_wt" = "$(truth $5 waker_tid)" ] && _hit=$((_hit + _ns)) ;;
			task) [ "$_wt" = "$(truth $5 waker_tid)" ] && _hit=$((_hit + _ns)) ;;
			*) _hit=$((_hit + _ns)) ;;
			esac
		fi
		_i=$((_i + 1))
	done
	_so=$(($(fn $1 $2 self.off_cpu_ns) - $(fn $1 $2 self.off_cpu_ns_by_cause.runq) - \
		$(fn $1 $2 self.off_cpu_ns_by_cause.wakeup)))
	note "$2 wakers (want $3 $4 tid $(truth $5 waker_tid)):$_rows; own waits $_so"
	assert_ge "$2: woken by $3 $4, 90% of its waits" $((_hit * 10)) $((_all * 9))
	assert_ge "$2: waits with a waker, 90% of its own off-CPU outside runq and wakeup" \
		$((_all * 10)) $((_so * 9))
}

# check_children JSON ERR: trace --children on the fork scenario. The
# target and its 2 workers each a process of the per-process report, each
# held to its own truth line as check_wall and check_cause hold a single
# process (xw_delay's calls, its wall between the clocks inside and around
# the calls, sleep 90% of its waits); the combined table sums them.
check_children() {
	local p n=0 pre t w in out sl off rq
	assert_eq "forks followed" 2 "$(jsonq $1 counters.forks)"
	for p in $(sed -n 's/.*truth pid=\([0-9]*\) .*/\1/p' $2); do
		pre="processes.[pid=$p].functions.[name=xw_delay]"
		jsonq $1 "$pre" > /dev/null || fail "pid $p is not in the per-process report"
		[ $p = "$(jsonq $1 pid)" ] ||
			note "pid $p: its uprobes in $(jsonq $1 "processes.[pid=$p].probes_after_ms") ms after its fork"
		assert_eq "pid $p: xw_delay calls" ${XW_N:-6} "$(jsonq $1 "$pre.calls")"
		t=$(grep "truth pid=$p " $2)
		in=$(echo "$t" | sed -n 's/.* delay_in_ns=\([0-9]*\).*/\1/p')
		out=$(echo "$t" | sed -n 's/.* delay_wall_ns=\([0-9]*\).*/\1/p')
		w=$(jsonq $1 "$pre.wall_ns")
		sl=$(jsonq $1 "$pre.off_cpu_ns_by_cause.sleep")
		off=$(jsonq $1 "$pre.off_cpu_ns")
		rq=$(($(jsonq $1 "$pre.off_cpu_ns_by_cause.runq") + $(jsonq $1 "$pre.off_cpu_ns_by_cause.wakeup")))
		note "pid $p xw_delay: inside $in <= traced $w <= around $out; sleep $sl, runq+wakeup $rq, off $off"
		assert_ge "pid $p: traced wall vs inside" $w $((in - 100000))
		assert_ge "pid $p: around vs traced wall" $((out + 100000)) $w
		assert_ge "pid $p: sleep vs 90% of off-CPU outside runq and wakeup" $((sl * 10)) $(((off - rq) * 9))
		n=$((n + 1))
	done
	assert_eq "processes with a truth line" 3 $n
	assert_eq "processes in the report" 3 "$(jsonq $1 'processes.#')"
	assert_eq "combined xw_delay calls" $((3 * ${XW_N:-6})) "$(fn $1 xw_delay calls)"
}

# quota_setup DIR QUOTA_US PERIOD_US: a cgroup v2 CPU cgroup with cpu.max
quota_setup() {
	cgroup_setup $1 cpu
	echo "$2 $3" > $1/cpu.max || fail "cpu.max"
}

# cgroup_setup DIR CONTROLLER: cgroup v2 mounted, CONTROLLER enabled below
# the root, DIR made
cgroup_setup() {
	grep -q "^[^ ]* /sys/fs/cgroup cgroup2 " /proc/mounts ||
		mount -t cgroup2 none /sys/fs/cgroup || fail "mount cgroup2"
	echo +$2 > /sys/fs/cgroup/cgroup.subtree_control || fail "enable the $2 controller"
	mkdir -p $1 || fail "mkdir $1"
}

# check_throttled FILE FUNC TRUTHFILE (the quota scenario): FUNC only
# computes, in a cgroup out of quota most of the time. At least 90% of its
# off-CPU time is throttled, and that is at least 90% of the time the
# cgroup says it was throttled inside the calls (delay_throttled_ns), at
# most 10% and 2 ms a call more than it says around them
# (delay_throttled_wall_ns: a throttle between the entry probe and the
# function's own first reading counts there only; after the unthrottle the
# thread still has to be picked).
check_throttled() {
	_th=$(fn $1 $2 off_cpu_ns_by_cause.throttled) _off=$(fn $1 $2 off_cpu_ns)
	_tt=$(truth $3 delay_throttled_ns) _tw=$(truth $3 delay_throttled_wall_ns)
	note "$2: throttled=$_th off=$_off runq=$(fn $1 $2 off_cpu_ns_by_cause.runq) cgroup's throttled_usec grew $_tt ns inside the calls, $_tw around them"
	assert_ge "quota: the cgroup was throttled" $_tt $(($(truth $3 calls) * $(truth $3 ms) * 500000))
	assert_ge "$2 throttled vs 90% of its off-CPU" $((_th * 10)) $((_off * 9))
	assert_ge "$2 throttled vs 90% of the cgroup's" $((_th * 10)) $((_tt * 9))
	assert_ge "$2 throttled vs 110% of the cgroup's around the calls + 2 ms a call" \
		$((_tw * 11 / 10 + $(truth $3 calls) * 2000000)) $_th
}

# mem_setup DIR HIGH: a cgroup v2 memory cgroup with memory.high
mem_setup() {
	cgroup_setup $1 memory
	echo $2 > $1/memory.high || fail "memory.high"
	[ -f $1/memory.pressure ] || skip "SKIP no memory.pressure (psi=0?)"
}

# check_mem FILE FUNC TRUTHFILE (the mem scenario): FUNC touches memory
# over its cgroup's memory.high, and the kernel makes it sleep for that.
# At least 90% of its off-CPU time outside runq and wakeup is mem. The
# cgroup's own count of its stall (delay_memstall_ns, PSI "some") bounds
# it: the stall includes reclaim on the CPU, so mem is at most the stall
# (10% and 2 ms a call of slack) and at least 90% of the stall less FUNC's
# ON-CPU time.
check_mem() {
	_m=$(fn $1 $2 off_cpu_ns_by_cause.mem) _on=$(fn $1 $2 on_cpu_ns)
	_ms=$(truth $3 delay_memstall_ns) _n=$(truth $3 calls)
	note "$2: mem=$_m off=$(fn $1 $2 off_cpu_ns) on=$_on runq=$(fn $1 $2 off_cpu_ns_by_cause.runq) cgroup's memory stall grew $_ms ns"
	assert_ge "mem: the cgroup was throttled (5 ms a call)" $_ms $((_n * 5000000))
	check_cause $1 $2 mem $3 90
	assert_ge "$2 mem vs 110% of the cgroup's stall + 2 ms a call" $((_ms * 11 / 10 + _n * 2000000)) $_m
	assert_ge "$2 mem vs 90% of the cgroup's stall less ON-CPU" $((_m * 10)) $(((_ms - _on) * 9))
}

# check_wakeup FILE FUNC TRUTHFILE (the wakeup scenario): the time FUNC's
# thread waited for the CPU once woken, by the kernel's own count
# (delay_rundelay_ns), is wakeup within 10% (and 1 ms: the hog preempts the
# thread as FUNC starts, before its first reading, and that is runq); the
# rest of the injected off-CPU time, the sleep, is at least 90% sleep.
check_wakeup() {
	_wk=$(fn $1 $2 off_cpu_ns_by_cause.wakeup) _sl=$(fn $1 $2 off_cpu_ns_by_cause.sleep)
	_rd=$(truth $3 delay_rundelay_ns)
	_inj=$(($(truth $3 delay_in_ns) - $(fn $1 $2 on_cpu_ns)))
	note "$2: wakeup=$_wk (kernel's run_delay $_rd) sleep=$_sl runq=$(fn $1 $2 off_cpu_ns_by_cause.runq) injected~$_inj"
	# by design MS/2 a call: at least half of that, or the hog did not run
	assert_ge "wakeup: the scenario's wake-up wait" $_rd $(($(truth $3 calls) * $(truth $3 ms) * 250000))
	assert_ge "$2 wakeup vs 90% of the kernel's run_delay" $((_wk * 10)) $((_rd * 9))
	assert_ge "$2 wakeup vs 110% of the kernel's run_delay + 1 ms" $((_rd * 11 / 10 + 1000000)) $_wk
	assert_ge "$2 sleep vs 90% of the injected time outside the wake-up" $((_sl * 10)) $(((_inj - _rd) * 9))
}
