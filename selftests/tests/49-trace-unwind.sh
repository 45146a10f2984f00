# A traced program unwinds as it would untraced (issue 39): C++ exceptions
# thrown through functions traced with their returns, rethrown, caught in
# nested try blocks and in a traced frame that then goes on, through a
# destructor that calls a traced function on the way (a landing pad, then
# _Unwind_Resume), through a tail call (a thunk that returns into another:
# tailer() jumps to middle()), from a signal handler's callee through the
# signal frame, backtrace() from inside traced frames, and an
# exception no one catches. cxxthrow
# (libstdc++ and libgcc_s) and cxxthrow_static, run untraced and under
# trace in fallback mode (--no-views: uprobes and uretprobes, whose
# trampolines unwind_start gives back to the unwinder) and in views mode
# (user hooks, whose return thunks the module's unwinder hooks give
# back): the same lines, the same end.
. /xp/selftests/tests/lib.sh

FUNCS="-f thrower -f middle -f deep -f middle_rethrow -f inner -f catcher -f frames
	-f with_cleanup -f helper -f tailer -f utail -f spinner -f sigthrower"

# ended STATUS: "exit N" or "signal NAME" for a shell's $?
ended() {
	if [ $1 -gt 128 ]; then
		echo "signal $(kill -l $(($1 - 128)))"
	else
		echo "exit $1"
	fi
}

# traced_end TRACE-OUTPUT: the same, from the report's header
traced_end() {
	sed -n 's/^Total for .*; it exited with status \([0-9]*\)$/exit \1/p
		s/^Total for .*; it was killed by SIG\([A-Z0-9]*\)$/signal \1/p' "$1"
}

# trace_run PROG MODE HOW: trace PROG MODE fallback (uprobes and
# uretprobes), views (user hooks with records; the static program, which
# registers rseq only after its entry, gets events), events (-T: user
# hooks with events and event thunks) or all (views mode, every function
# of the program: trace's default); its output in /tmp/cx.MODE.HOW.out
trace_run() {
	f=$FUNCS
	case $3 in
	fallback) opt=--no-views ;;
	views) opt= ;;
	events) opt=-T ;;
	all) opt= f= ;;
	esac
	rm -f /tmp/cx.$2.t
	xprobectl trace $opt $f -- /xp/bin/$1 $2 /tmp/cx.$2.t > /tmp/cx.$2.$3.out 2>&1 ||
		fail "trace ($3) of $1 $2: $(tail -n 3 /tmp/cx.$2.$3.out)"
	if [ $3 != fallback ]; then
		grep -q "views mode, [0-9]* through user hooks" /tmp/cx.$2.$3.out ||
			fail "$1 $2 ($3): not through user hooks: $(grep tracing /tmp/cx.$2.$3.out)"
		! grep -q "unwinder entry point has no hook" /tmp/cx.$2.$3.out ||
			fail "$1 $2 ($3): $(grep 'no hook' /tmp/cx.$2.$3.out)"
	fi
}

# Each program runs its cases one after the other in one process (mode
# suite: one trace per way of tracing), then terminate. The static program
# differs in where the unwinder is (in it, not in libgcc_s, and traced with
# the rest when every function is). In views mode the module's unwinder
# hooks give the return thunks' slots back (module/uhooks/uunwind.c); -T's event
# thunks on the dynamic one; every function traced on both.
# XP_UNWIND_LIGHT (check-debug, the -rt kernels: the module's paths under
# KASAN, lockdep and PREEMPT_RT in a fraction of the time): the dynamic
# program, views mode.
LIGHT=${XP_UNWIND_LIGHT:-}
progs="cxxthrow cxxthrow_static"
[ -z "$LIGHT" ] || progs=cxxthrow
for prog in $progs; do
	for mode in suite terminate; do
		rm -f /tmp/cx.$mode
		/xp/bin/$prog $mode /tmp/cx.$mode 2> /dev/null
		want_end=$(ended $?)
		want=$(cat /tmp/cx.$mode)
		[ -n "$want" ] || fail "$prog $mode wrote nothing untraced"
		hows="fallback views all"
		[ $prog = cxxthrow_static ] || hows="$hows events"
		[ -z "$LIGHT" ] || hows=views
		for how in $hows; do
			trace_run $prog $mode $how
			o=/tmp/cx.$mode.$how.out
			assert_eq "$prog $mode traced ($how): what it wrote" "$want" \
				"$(cat /tmp/cx.$mode.t 2>/dev/null)"
			assert_eq "$prog $mode traced ($how): how it ended" "$want_end" "$(traced_end $o)"
			n=1
			[ $mode = terminate ] || n=82
			unwinds=$(sed -n 's/.* unwinds=\([0-9]*\).*/\1/p' $o)
			[ "${unwinds:-0}" -ge $n ] ||
				fail "$prog $mode ($how): the unwinder was entered ${unwinds:-0} times, not $n or more: $(grep events: $o)"
		done
	done
	# catcher() catches what middle() throws and goes on: its own returns
	# come after an exception crossed the frames below it, every one seen
	for how in fallback views events; do
		[ -f /tmp/cx.suite.$how.out ] || continue
		assert_eq "$prog ($how): catcher's returns all seen" 30 \
			"$(awk '/^Total for/ { t = 1 } t && $1 == "catcher" { print $2; exit }' /tmp/cx.suite.$how.out)"
	done
	note "ok: $prog unwinds through traced frames as it does untraced"
done

# A trace that ends while a traced frame is live: slow() is entered under
# trace, the trace stops (Ctrl-C), then an exception crosses slow()'s
# frame. Views mode gives every thread's return thunks back when the hooks
# go (module/uhooks/uunwind.c, detach); with events (-T) too.
for how in views events; do
	[ -z "$LIGHT" ] || [ $how = views ] || continue
	opt=; [ $how = events ] && opt=-T
	rm -f /tmp/cx.late /tmp/cx.late.go1 /tmp/cx.late.go2
	/xp/bin/cxxthrow late /tmp/cx.late 2> /dev/null &
	pid=$!
	wait_exec $pid /xp/bin/cxxthrow	# not the shell's fork: trace reads its exe
	xprobectl trace $opt -f slow -f middle -f thrower $pid > /tmp/cx.late.$how.out 2>&1 &
	tpid=$!
	wait_for /tmp/cx.late.$how.out "^xprobectl: tracing" "late ($how): trace did not start" 600
	grep -q "through user hooks" /tmp/cx.late.$how.out ||
		fail "late ($how): not through user hooks: $(grep tracing /tmp/cx.late.$how.out)"
	touch /tmp/cx.late.go1
	wait_for /tmp/cx.late entered "late ($how): slow() was not entered"
	kill -INT $tpid
	wait $tpid || fail "late ($how): trace: $(tail -n 3 /tmp/cx.late.$how.out)"
	touch /tmp/cx.late.go2
	wait $pid
	assert_eq "late ($how): how it ended after the trace" "exit 0" "$(ended $?)"
	assert_eq "late ($how): what it wrote" "entered
late caught=1" "$(cat /tmp/cx.late)"
done
note "ok: an exception after the trace crosses a frame entered under it"

# fn_count OUT FUNC: FUNC's calls in trace's report OUT
fn_count() {
	awk -v f="$2" '/^Total for/ { t = 1 } t && $1 == f { print $2; exit }' "$1"
}

# C: glibc's backtrace() (which loads libgcc_s only then, after trace
# attached: __libc_unwind_link_get() takes the unwinder hook), longjmp()
# and siglongjmp() out of traced frames, swapcontext() coroutines that
# switch stacks inside traced functions, a thread cancelled or exiting
# inside traced frames (forced unwinding, its cleanup handler run).
# In one process (cflow suite), fallback mode, views mode with the
# functions named and with every one.
CFUNCS="-f frames -f deepj -f jumper -f spin -f co_step -f co_body -f waiter -f worker"

# untraced TAG PROG ARGS...: run PROG ARGS /tmp/TAG untraced; what it wrote
# in $want, how it ended in $want_end
untraced() {
	tag=$1
	shift
	rm -f /tmp/$tag
	"$@" /tmp/$tag 2> /dev/null
	want_end=$(ended $?)
	want=$(cat /tmp/$tag)
	[ -n "$want" ] || fail "$tag wrote nothing untraced"
}

# traced TAG HOW FUNCS PROG ARGS...: the same under trace, fallback, views
# (FUNCS), events (views with -T, FUNCS) or all (views, every function):
# the same lines, the same end; the report in /tmp/TAG.HOW.out
traced() {
	tag=$1 how=$2 funcs=$3
	shift 3
	opt= f=$funcs
	[ $how = fallback ] && opt=--no-views
	[ $how = events ] && opt=-T
	[ $how = all ] && f=
	rm -f /tmp/$tag.t
	set -f		# -f main.* is a pattern for trace
	xprobectl trace $opt $f -- "$@" /tmp/$tag.t > /tmp/$tag.$how.out 2>&1 ||
		fail "trace ($how) of $tag: $(tail -n 3 /tmp/$tag.$how.out)"
	set +f
	assert_eq "$tag ($how): what it wrote" "$want" "$(cat /tmp/$tag.t 2>/dev/null)"
	assert_eq "$tag ($how): how it ended" "$want_end" "$(traced_end /tmp/$tag.$how.out)"
}

hows="fallback views all"
[ -z "$LIGHT" ] || hows=views
untraced cflow /xp/bin/cflow suite
for how in $hows; do
	traced cflow $how "$CFUNCS" /xp/bin/cflow suite
done

# Rust: panics caught by catch_unwind through traced frames (libgcc_s's
# unwinder, as C++); rcatcher() catches and goes on, so its returns are
# all seen.
untraced rust /xp/bin/rpanic
for how in $hows; do
	traced rust $how "-f rthrower -f rmiddle -f rcatcher" /xp/bin/rpanic
	# every function too (it lost one return of 30 until the records were
	# handed over where uprobes' handlers run, 2026-11-30)
	n=$(fn_count /tmp/rust.$how.out rcatcher)
	# trace's own counts, to tell where a call went (29 of 30 on the
	# debug kernel in 1 run of 4 until 2026-12-02, entries=209: an entry
	# lost to a switch-in after a landing, the case below)
	[ "$n" = 30 ] || note "rust ($how): $(grep -m 1 'events:' /tmp/rust.$how.out)"
	assert_eq "rust ($how): rcatcher's returns all seen" 30 "$n"
done

# Rust under preemption (views mode): many panics while a sleeper at nice
# -20 on the same CPU wakes every few microseconds and takes it, so that
# switch-ins land between a landing's system call and its rearm's task
# work (urec.c, xp_urec_slow()). Every call is counted: ROUNDS of
# rcatcher(), and of rmiddle() and rthrower() all that return, 3 * ROUNDS less the
# panics (two for each third of the rounds); trace's own tally has every
# entry (7 a round) and each panic's two frames abandoned. Before
# 2026-12-02 the entry after a landing was lost when a switch-in came in
# that window: 4 runs of 2000 rounds on 6.12 lost 136 to 254 entries each
# (rcatcher's calls 1870 to 1935); one in about a thousand unwindings with
# a busy loop beside it instead (49's rare 29 of 30 rcatcher calls).
if [ "$(nproc)" -ge 2 ]; then
	R=2000
	[ -z "$LIGHT" ] || R=600
	panics=$((2 * ((R + 2) / 3)))
	taskset 1 sysloop -n 0 -p -20 nanosleep &
	sleeper=$!
	taskset 1 xprobectl trace -f rthrower -f rmiddle -f rcatcher -- /xp/bin/rpanic /tmp/rpre.t $R \
		> /tmp/rpre.out 2>&1
	rc=$?
	kill $sleeper
	wait $sleeper 2> /dev/null
	[ $rc = 0 ] || fail "rust preempted: trace: $(tail -n 3 /tmp/rpre.out)"
	ev=$(grep -m 1 '^# events:' /tmp/rpre.out)
	note "rust preempted: $ev"
	for f in rcatcher:$R rmiddle:$((3 * R - panics)) rthrower:$((3 * R - panics)); do
		assert_eq "rust preempted, $R rounds: ${f%:*}'s calls" ${f#*:} \
			"$(fn_count /tmp/rpre.out ${f%:*})"
	done
	assert_eq "rust preempted, $R rounds: entries seen" $((7 * R)) \
		"$(echo "$ev" | sed -n 's/.* entries=\([0-9]*\) .*/\1/p')"
	assert_eq "rust preempted, $R rounds: frames abandoned" $((2 * panics)) \
		"$(echo "$ev" | sed -n 's/.* abandoned=\([0-9]*\) .*/\1/p')"
fi

# Go: its runtime copies goroutine stacks (deep recursion), scans them
# (garbage collection), unwinds panics to recover() and walks them
# (runtime.Callers), all by return addresses: trace sees a Go program and
# probes entries only, past each function's stack check (a call that
# grows its stack runs that check twice), and leaves the runtime out of
# patterns. Calls are exact: recurse() is called 4 x 10 x 3001 times, its
# goroutines' stacks growing under it (it failed so at 41 of 40 thrower()
# calls with the probe on the first instruction).
untraced go /xp/bin/gostack
for how in $hows; do
	traced go $how "-f main.*" /xp/bin/gostack
	grep -q "is a Go program: its functions are traced at their entries only" /tmp/go.$how.out ||
		fail "go ($how): not said to be a Go program: $(head -n 3 /tmp/go.$how.out)"
	assert_eq "go ($how): main.thrower's calls" 40 "$(fn_count /tmp/go.$how.out main.thrower)"
	assert_eq "go ($how): main.mayPanic's calls" 40 "$(fn_count /tmp/go.$how.out main.mayPanic)"
	assert_eq "go ($how): main.recurse's calls" 120040 "$(fn_count /tmp/go.$how.out main.recurse)"
done
note "ok: Rust panics and Go's stacks under trace"

# A stack page out for a moment under a hook's system call: stackzap's
# thread calls zs_outer() -> zs_leaf() on a stack that another thread
# collapses into a huge page again and again (MADV_COLLAPSE: khugepaged's
# own path, which clears the entries while it copies). The handlers read
# the stub's registers and write the return slot without faulting; what
# they cannot do then, the thread's late work does before the syscall
# returns (module/uhooks/ulate.c). Every call and return is seen. Until
# 2026-12-01 about one call in a thousand was lost with events (19979 of
# 20000, 21 abandoned), and CI lost one of Go's 120040 (above) so.
# Kernels without transparent huge pages (the debug kernel, PREEMPT_RT)
# have no MADV_COLLAPSE: the calls are counted all the same.
untraced stackzap /xp/bin/stackzap 20000
for how in events views; do
	[ -z "$LIGHT" ] || [ $how = events ] || continue
	traced stackzap $how "-f zs_leaf -f zs_outer" /xp/bin/stackzap 20000
	o=/tmp/stackzap.$how.out
	n=$(sed -n 's/^stackzap: \([0-9]*\) collapses.*/\1/p' $o)
	if [ -d /sys/kernel/mm/transparent_hugepage ]; then
		[ "${n:-0}" -ge 1 ] ||
			fail "stackzap ($how): its stack was never collapsed: $(grep -m 1 stackzap: $o)"
	else
		note "stackzap ($how): no huge pages here, no collapse: $(grep -m 1 stackzap: $o)"
	fi
	# (what trace counted, kept for a failure: 2 of 20000 calls were lost
	# so once with events on 6.12, 2026-12-02, not seen in 32 runs since)
	note "stackzap ($how): $(grep -m 1 '^# events:' $o)"
	assert_eq "stackzap ($how): zs_leaf's calls" 20000 "$(fn_count $o zs_leaf)"
	assert_eq "stackzap ($how): zs_outer's calls" 20000 "$(fn_count $o zs_outer)"
	assert_eq "stackzap ($how): returns unmatched, abandoned" "0 0" \
		"$(sed -n 's/.* unmatched=\([0-9]*\) abandoned=\([0-9]*\).*/\1 \2/p' $o)"
done

# seccomp after the hooks: a static server that filters its own system
# calls once set up (seccompw: kills the process for 420-422, standing for
# "not on its allow-list") through seccomp(2), prctl(), with TSYNC while a
# second thread calls work(), or seccomp through int $0x80; or syscall
# user dispatch blocking every system call while work() runs (sud: a
# trampoline's system call would be a SIGSYS). Fallback mode (uprobes: int3, and on 6.12
# the uretprobe system call, which seccomp lets through) runs it as it
# runs untraced, its calls exact (seccomp(2) and TSYNC). In views mode (user hooks with records,
# and with events: -T) the module takes the hooks out before the filter
# goes in (their system calls would kill the process) and trace goes on
# with uprobes: the same run, every call before the filter counted, none
# twice, and those after it (the process, seeing trampolines, waits for
# the uprobe's int3 at work() after its filter) but for a call or two. After dispatch, on 6.12, entry probes only: a
# uretprobe returns through a system call there (fallback mode, whose
# uretprobes the process cannot survive under dispatch, is not run on it:
# docs/userhooks.md).
# The light set (debug kernel, -rt boots): TSYNC in views mode, the seal
# under KASAN and lockdep and full preemption (and a child's filter, below).
if ! grep -q '^Seccomp:' /proc/self/status; then
	note "skip: the seccomp cases: this kernel has no seccomp (CONFIG_SECCOMP)"
	exit 0
fi
# takeover_go OUT GO: make the file GO once trace's report OUT says how
# the uprobes' takeover went (or after 60 s): the process then starts its
# calls after the filter (seccompw's SECCOMPW_GO)
takeover_go() {
	rm -f "$1" "$2"
	( i=0
	  while [ $i -lt 600 ] &&
		! grep -qE "go on with uprobes|uprobes could not take over" "$1" 2> /dev/null; do
		sleep 0.1
		i=$((i + 1))
	  done
	  touch "$2" ) &
}

modes_sc="seccomp prctl tsync int80 sud"
[ -z "$LIGHT" ] || modes_sc=tsync
for mode in $modes_sc; do
	untraced sc-$mode /xp/bin/seccompw_static $mode 100
	# fallback mode is the same whichever way the filter goes in
	hows_sc="views events"
	case $mode in seccomp|tsync) hows_sc="fallback $hows_sc" ;; esac
	[ -z "$LIGHT" ] || hows_sc=views
	for how in $hows_sc; do
		rm -f /tmp/sc-$mode.t.n /tmp/sc-$mode.t.b /tmp/sc-$mode.t.w
		if [ $how != fallback ]; then
			takeover_go /tmp/sc-$mode.$how.out /tmp/sc-$mode.go
			go_pid=$!
			export SECCOMPW_GO=/tmp/sc-$mode.go
		fi
		traced sc-$mode $how "-f work" /xp/bin/seccompw_static $mode 100
		if [ $how != fallback ]; then
			unset SECCOMPW_GO
			wait $go_pid
		fi
		n=$(fn_count /tmp/sc-$mode.$how.out work)
		if [ $how = fallback ]; then
			assert_eq "sc-$mode (fallback): work's calls" "$(cat /tmp/sc-$mode.t.n)" "$n"
			continue
		fi
		said="installs a seccomp filter"
		[ $mode != sud ] || said="turns on syscall user dispatch"
		grep -q "$said, and the module took out its 1 user hook" /tmp/sc-$mode.$how.out ||
			fail "sc-$mode ($how): trace did not say the hooks went: $(cat /tmp/sc-$mode.$how.out)"
		if [ $mode = sud ] && [ "$(uname -r | cut -d. -f1-2)" != 6.1 ]; then
			grep -q "with uprobes, their calls only" /tmp/sc-$mode.$how.out ||
				fail "sc-sud ($how): trace did not say it counts calls only: $(cat /tmp/sc-$mode.$how.out)"
		fi
		note "sc-$mode ($how): work counted $n of $(cat /tmp/sc-$mode.t.n), $(cat /tmp/sc-$mode.t.b) before the filter; in the trampolines: $(cat /tmp/sc-$mode.t.a); uprobes in after $(cat /tmp/sc-$mode.t.w) ms"
		# every system call in the trampolines made harmless before the filter
		assert_match "sc-$mode ($how): the trampolines' system calls" \
			"^syscalls 0 muted [1-9][0-9]*$" "$(cat /tmp/sc-$mode.t.a)"
		# On 6.1 (no uprobe_multi) they failed with ESRCH until 2026-11-28:
		# trace detached and re-attached the unwinder's probes, and the
		# process had exited by then. On 6.1-rt the takeover once took
		# longer than the 400 ms the process ran on (CI, stop 52): it then
		# waited for the uprobe's int3 before its calls after the filter,
		# which on 6.1 comes with the uretprobe, the first of two attaches,
		# and the entry probe's came too late once more (CI of
		# 2026-12-04): it now waits for trace's word that the takeover
		# is over (takeover_go), and says how long it waited (OUT.w).
		assert_match "sc-$mode ($how): the process saw the uprobe come" \
			"^[0-9]+$" "$(cat /tmp/sc-$mode.t.w)"
		! grep -q "uprobes could not take over" /tmp/sc-$mode.$how.out ||
			fail "sc-$mode ($how): uprobes could not take over: $(grep 'cannot probe' /tmp/sc-$mode.$how.out | head -n 1)"
		assert_ge "sc-$mode ($how): work's calls, at most all" "$(cat /tmp/sc-$mode.t.n)" "$n"
		# It waited for the uprobe: the main thread's 400 calls after the
		# filter are counted, but for a call or two that may fall between
		# the entry and the return probes' links (two uprobe_multi links
		# on 6.12; on 6.1 each probe gets its program after its int3).
		# (6.12 lost one in 1 of a run's 10 cases, 6.1 up to 3.)
		assert_ge "sc-$mode ($how): work's calls after the filter, at least 300 of 400" \
			"$(($n - $(cat /tmp/sc-$mode.t.b)))" 300
	done
done

# A child of fork that filters its own system calls while its parent's
# hooks are live (a server's sandboxed worker): the trampolines it shares
# with its parent become its own muted copies, and it runs on; the
# parent's stay live, its hooks in, its calls all counted. Until
# 2026-11-29 the child died of SIGSYS at its first call of work().
# The light set: views mode (the copies made under KASAN and lockdep, and
# on PREEMPT_RT).
untraced sc-fork /xp/bin/seccompw_static fork 100
hows_sc="views events"
[ -z "$LIGHT" ] || hows_sc=views
for how in $hows_sc; do
	rm -f /tmp/sc-fork.t.c /tmp/sc-fork.t.a /tmp/sc-fork.t.n
	traced sc-fork $how "-f work" /xp/bin/seccompw_static fork 100
	note "sc-fork ($how): the child's trampolines: $(cat /tmp/sc-fork.t.c); the parent's: $(cat /tmp/sc-fork.t.a)"
	assert_match "sc-fork ($how): the child's trampolines, muted" \
		"^syscalls 0 muted [1-9][0-9]*$" "$(cat /tmp/sc-fork.t.c)"
	assert_match "sc-fork ($how): the parent's, live" \
		"^syscalls [1-9][0-9]* muted 0$" "$(cat /tmp/sc-fork.t.a)"
	! grep -q "installs a seccomp filter" /tmp/sc-fork.$how.out ||
		fail "sc-fork ($how): the parent's hooks went: $(cat /tmp/sc-fork.$how.out)"
	assert_eq "sc-fork ($how): the parent's calls, all counted" \
		"$(cat /tmp/sc-fork.t.n)" "$(fn_count /tmp/sc-fork.$how.out work)"
done

[ -z "$LIGHT" ] || { note "ok: seccomp after the hooks (light set)"; exit 0; }

# trace PID of a process it did not start says how it ended, as its parent
# saw it (the report's header, --json), fallback and views mode alike.
for how in fallback views; do
	opt=
	[ $how = fallback ] && opt=--no-views
	rm -f /tmp/sc-pid.go /tmp/sc-pid.t
	/xp/bin/seccompw_static seccomp 0 /tmp/sc-pid.go /tmp/sc-pid.t 2> /dev/null &
	pid=$!
	wait_exec $pid /xp/bin/seccompw_static	# not the shell's fork: trace reads its exe
	xprobectl trace -v --json $opt -f work $pid > /tmp/sc-pid.$how.json 2> /tmp/sc-pid.$how.err &
	tr=$!
	for i in $(seq 100); do
		grep -q "^xprobectl: tracing" /tmp/sc-pid.$how.err && break
		sleep 0.1
	done
	touch /tmp/sc-pid.go
	wait $pid
	real=$(ended $?)
	wait $tr || fail "trace $opt of pid $pid: $(cat /tmp/sc-pid.$how.err)"
	case $(jsonq /tmp/sc-pid.$how.json target.end) in
	exited) said="exit $(jsonq /tmp/sc-pid.$how.json target.status)" ;;
	killed) said="signal $(jsonq /tmp/sc-pid.$how.json target.signal_name | sed 's/^SIG//')" ;;
	*) said="$(jsonq /tmp/sc-pid.$how.json target.end)" ;;
	esac
	assert_eq "sc-pid ($how): it ran on" "exit 0" "$real"
	assert_eq "sc-pid ($how): trace says how it ended" "$real" "$said"
	[ $how = views ] || continue
	# Attached by pid with every function on a user hook, trace loads
	# its uprobe programs only once tracing is under way (or at the seal,
	# if that comes first): the seal's fall-back to uprobes finds them all
	# the same, and the calls after the filter (the process waits for the
	# uprobe's int3 first) are counted but for the few the two links'
	# order may drop (the cases above).
	grep -q "the uprobe programs loaded now (no function needed them at the start)" \
		/tmp/sc-pid.$how.err || fail "sc-pid ($how): the uprobe programs were not loaded late: $(cat /tmp/sc-pid.$how.err)"
	grep -q "installs a seccomp filter, and the module took out its 1 user hook" \
		/tmp/sc-pid.$how.err || fail "sc-pid ($how): trace did not say the hooks went: $(cat /tmp/sc-pid.$how.err)"
	! grep -q "uprobes could not take over" /tmp/sc-pid.$how.err ||
		fail "sc-pid ($how): uprobes could not take over: $(cat /tmp/sc-pid.$how.err)"
	note "sc-pid ($how): work counted $(fn /tmp/sc-pid.$how.json work calls) of $(cat /tmp/sc-pid.t.n), $(cat /tmp/sc-pid.t.b) before the filter"
	assert_ge "sc-pid ($how): work's calls after the filter, at least 300 of 400" \
		"$(fn /tmp/sc-pid.$how.json work calls)" 300
done

# The first hook's race: a thread already inside seccomp(2), past the
# module's look at its hooks (none yet), when trace by pid adds the first
# one (sc-late: the filter's sock_fprog lies in a page userfaultfd holds
# until the file GO exists, so the call waits in the kernel for as long as
# the test likes). The add, once claimed, sees the thread on its way to a
# filter, waits for it (up to a second), and is refused: trace goes on with
# uprobes, and the process runs as untraced, every call of work() (all
# after the filter) counted. With events (-T) every call enters the kernel;
# with records only a full buffer does. Until 2026-12-01 the hook went in
# and the process died of SIGSYS at its first call after the filter.
rm -f /tmp/sc-late.go0
touch /tmp/sc-late.go0
/xp/bin/seccompw_static late 0 /tmp/sc-late.go0 /tmp/sc-late 2> /tmp/sc-late.err
rc=$?
if [ $rc = 4 ]; then
	note "skip: sc-late: no userfaultfd here ($(cat /tmp/sc-late.err))"
else
	assert_eq "sc-late: untraced, it ran" "exit 0" "$(ended $rc)"
	want=$(cat /tmp/sc-late)
	for how in events views; do
		opt=
		[ $how = events ] && opt=-T
		rm -f /tmp/sc-late.go /tmp/sc-late.t /tmp/sc-late.t.n
		/xp/bin/seccompw_static late 0 /tmp/sc-late.go /tmp/sc-late.t 2> /dev/null &
		pid=$!
		# in seccomp(2), in the kernel (its fault on the sock_fprog)
		wait_for /proc/$pid/syscall "^317 " "sc-late ($how): the process in seccomp(2)" 100
		xprobectl trace $opt -f work $pid > /tmp/sc-late.$how.out 2>&1 &
		tr=$!
		wait_for /tmp/sc-late.$how.out "^xprobectl: tracing" "sc-late ($how): trace attached" 600
		touch /tmp/sc-late.go
		wait $pid
		assert_eq "sc-late ($how): it ran on" "exit 0" "$(ended $?)"
		wait $tr || fail "trace $opt of pid $pid: $(tail -n 3 /tmp/sc-late.$how.out)"
		assert_eq "sc-late ($how): what it wrote" "$want" "$(cat /tmp/sc-late.t 2>/dev/null)"
		grep -q "is installing a seccomp filter: use a uprobe, or try again: uprobes for every function$" \
			/tmp/sc-late.$how.out ||
			fail "sc-late ($how): trace did not say why uprobes: $(cat /tmp/sc-late.$how.out)"
		assert_eq "sc-late ($how): work's calls, all counted" "$(cat /tmp/sc-late.t.n)" \
			"$(fn_count /tmp/sc-late.$how.out work)"
	done
fi

# rmmod while a hooked process installs its filter (seccompw going: it
# filters MS after /sys/module/xprobes/initstate reads "going", then calls
# work() on). The module watches filters until every hook is out of every
# process; until 2026-12-01 it stopped first, and a filter that went in
# between met live hooks: SIGSYS at 80 ms (0-40 ms were sealed, 160 ms
# found the hooks out; 6.12 in the emulator). A user hook with events (a
# system call per call), a round per MS. Whenever the filter went in, the
# process finds no system call in its trampolines right after it: the
# seal muted them, or the module did as it let the area go (until
# 2026-12-01 an area let go kept them: "syscalls 1 muted 0" at 1000 ms,
# well after the unload).
for ms in 50 70 90 110 130 1000; do
	rm -f /tmp/sc-going.t /tmp/sc-going.t.a
	/xp/bin/seccompw_static going $ms /sys/module/xprobes/initstate /tmp/sc-going.t \
		2> /dev/null &
	pid=$!
	wait_exec $pid /xp/bin/seccompw_static
	xprobectl view add $pid > /dev/null || fail "sc-going: view add"
	xprobectl uhook add $pid work > /dev/null || fail "sc-going: uhook add work"
	sleep 0.2
	rmmod xprobes || fail "sc-going: rmmod with the hooked process"
	wait $pid
	assert_eq "sc-going ($ms ms): it ran on" "exit 0" "$(ended $?)"
	assert_match "sc-going ($ms ms): what it wrote" "^filtered \(going\), then 400 calls" \
		"$(cat /tmp/sc-going.t 2>/dev/null)"
	assert_match "sc-going ($ms ms): its trampolines, right after its filter" \
		"^syscalls 0 muted [1-9][0-9]*$" "$(cat /tmp/sc-going.t.a 2>/dev/null)"
	load_module
done

# A process under syscall user dispatch already, traced by pid in views
# mode: no user hook that enters the kernel (refused, saying why), uprobes
# instead, on 6.11+ at the entries only (a uretprobe's system call would be
# a SIGSYS). Until 2026-11-29 trace refused to go on for such a process.
rm -f /tmp/sc-early.go /tmp/sc-early.t
/xp/bin/seccompw_static sud-early 0 /tmp/sc-early.go /tmp/sc-early.t 2> /dev/null &
pid=$!
wait_exec $pid /xp/bin/seccompw_static
xprobectl trace -f work $pid > /tmp/sc-early.out 2>&1 &
tr=$!
for i in $(seq 100); do
	grep -q "^xprobectl: tracing" /tmp/sc-early.out && break
	sleep 0.1
done
touch /tmp/sc-early.go
wait $pid
assert_eq "sc-early: it ran on under trace" "exit 0" "$(ended $?)"
wait $tr || fail "trace of pid $pid under dispatch: $(cat /tmp/sc-early.out)"
grep -q "runs with syscall user dispatch on.*: uprobes for every function" /tmp/sc-early.out ||
	fail "sc-early: trace did not say why uprobes: $(cat /tmp/sc-early.out)"
[ "$(uname -r | cut -d. -f1-2)" = 6.1 ] || grep -q "their calls only" /tmp/sc-early.out ||
	fail "sc-early: trace did not say it counts calls only: $(cat /tmp/sc-early.out)"
assert_ge "sc-early: work's calls seen" "$(fn_count /tmp/sc-early.out work)" 400

# A process killed by a signal, traced by pid: trace says which.
/xp/bin/seccompw_static seccomp 0 /tmp/sc-kill.go /tmp/sc-kill.t 2> /dev/null &
pid=$!
wait_exec $pid /xp/bin/seccompw_static
xprobectl trace --json -f work $pid > /tmp/sc-kill.json 2> /tmp/sc-kill.err &
tr=$!
for i in $(seq 100); do
	grep -q "^xprobectl: tracing" /tmp/sc-kill.err && break
	sleep 0.1
done
kill -SEGV $pid
wait $pid
wait $tr || fail "trace of pid $pid: $(cat /tmp/sc-kill.err)"
assert_eq "sc-kill: trace says how it ended" "killed SIGSEGV" \
	"$(jsonq /tmp/sc-kill.json target.end) $(jsonq /tmp/sc-kill.json target.signal_name)"
note "ok: seccomp after the hooks, and how a target by pid ended"
