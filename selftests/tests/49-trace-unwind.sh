# A traced program unwinds as it would untraced (issue 39): C++ exceptions
# thrown through functions traced with their returns, rethrown, caught in
# nested try blocks and in a traced frame that then goes on, through a
# destructor that calls a traced function on the way (a landing pad, then
# _Unwind_Resume), backtrace() from inside traced frames, and an
# exception no one catches. cxxthrow
# (libstdc++ and libgcc_s) and cxxthrow_static, run untraced and under
# trace in fallback mode (--no-views: uprobes and uretprobes, whose
# trampolines unwind_start gives back to the unwinder): the same lines,
# the same end.
. /xp/selftests/tests/lib.sh

FUNCS="-f thrower -f middle -f deep -f middle_rethrow -f inner -f catcher -f frames
	-f with_cleanup -f helper"

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

# The static program differs in where the unwinder is (in it, not in
# libgcc_s): a throw, the _Unwind_Resume path, a catch that goes on,
# backtrace() and terminate cover it.
for prog in cxxthrow cxxthrow_static; do
	modes="one deep rethrow nested cleanup catcher backtrace terminate"
	[ $prog = cxxthrow ] || modes="one cleanup catcher backtrace terminate"
	for mode in $modes; do
		rm -f /tmp/cx.$mode /tmp/cx.$mode.t
		/xp/bin/$prog $mode /tmp/cx.$mode 2> /dev/null
		want_end=$(ended $?)
		want=$(cat /tmp/cx.$mode)
		[ -n "$want" ] || fail "$prog $mode wrote nothing untraced"
		xprobectl trace --no-views $FUNCS -- /xp/bin/$prog $mode /tmp/cx.$mode.t \
			> /tmp/cx.$mode.out 2>&1 || fail "trace of $prog $mode: $(tail -n 3 /tmp/cx.$mode.out)"
		assert_eq "$prog $mode traced: what it wrote" "$want" "$(cat /tmp/cx.$mode.t 2>/dev/null)"
		assert_eq "$prog $mode traced: how it ended" "$want_end" "$(traced_end /tmp/cx.$mode.out)"
		case $mode in
		terminate) n=1 ;;
		backtrace) n=2 ;;
		*) n=10 ;;
		esac
		unwinds=$(sed -n 's/.* unwinds=\([0-9]*\).*/\1/p' /tmp/cx.$mode.out)
		[ "${unwinds:-0}" -ge $n ] ||
			fail "$prog $mode: the unwinder was entered ${unwinds:-0} times, not $n or more: $(grep events: /tmp/cx.$mode.out)"
	done
	# catcher's own return comes after the exception: seen, every call
	assert_eq "$prog: catcher's returns all seen" 30 \
		"$(awk '/^Total for/ { t = 1 } t && $1 == "catcher" { print $2 }' /tmp/cx.catcher.out)"
	note "ok: $prog unwinds through traced frames as it does untraced"
done
