# A traced program sees exactly what it was given (issue 39): trace --
# CMD with every function of the program (the default) takes no return
# slot at the ELF entry point (_start, which the kernel or the dynamic
# loader enters by a jump, with argc where a return address would be).
# args, run untraced and under trace in views mode (user hooks, records
# and --events), with --uprobes and in fallback mode (--no-views), writes
# the same arguments and environment and exits with the same status;
# and the static args_static in views mode. The report's header and
# --json say how it ended: its exit status, or the signal that killed it.
. /xp/selftests/tests/lib.sh

# run_args OUT PROGRAM [TRACE OPTIONS...]: PROGRAM's report in OUT, its status
run_args() {
	local out=$1 prog=$2 rc
	shift 2
	rm -f "$out"
	if [ $# -eq 0 ]; then
		XP_ARGS_OUT=$out XP_ARGS_ENV=kept "/xp/bin/$prog" hello "two words" ""
		rc=$?
	else
		XP_ARGS_OUT=$out XP_ARGS_ENV=kept xprobectl trace "$@" -- \
			"/xp/bin/$prog" hello "two words" "" > "$out.trace" 2>&1 ||
			fail "trace $* -- $prog: $(tail -n 3 "$out.trace")"
		rc=$(sed -n "s/^xprobectl: .* exited with status \([0-9]*\)$/\1/p" "$out.trace")
	fi
	echo "$rc" > "$out.rc"
}

for prog in args args_static; do
	run_args /tmp/args-$prog $prog
	want=$(cat /tmp/args-$prog)
	assert_eq "$prog untraced" "argc=4 [hello] [two words] [] env=kept" "$want"
	assert_eq "$prog untraced status" 14 "$(cat /tmp/args-$prog.rc)"
	if [ $prog = args ]; then
		modes="default --events --uprobes --no-views"
	else
		modes="default --events"
	fi
	for mode in $modes; do
		opt=$mode
		[ $mode = default ] && opt=
		run_args /tmp/args-$prog-$mode $prog -d 20 $opt
		assert_eq "$prog traced ($mode): what it was given" "$want" \
			"$(cat /tmp/args-$prog-$mode 2>/dev/null)"
		assert_eq "$prog traced ($mode): its exit status" 14 \
			"$(cat /tmp/args-$prog-$mode.rc)"
		grep -q "^main " /tmp/args-$prog-$mode.trace ||
			fail "$prog traced ($mode): main is not in the report: $(cat /tmp/args-$prog-$mode.trace)"
		grep -q "^Total for .*; it exited with status 14$" /tmp/args-$prog-$mode.trace ||
			fail "$prog traced ($mode): the header does not say how it ended: $(grep Total /tmp/args-$prog-$mode.trace)"
	done
done

# Killed by a signal: the header, --json and stderr say so
XP_ARGS_OUT=/tmp/args-sig XP_ARGS_SIG=31 xprobectl trace --json -- /xp/bin/args x \
	> /tmp/args-sig.json 2> /tmp/args-sig.err || fail "trace of a killed args: $(cat /tmp/args-sig.err)"
assert_eq "killed: --json's target" "killed 31 SIGSYS" \
	"$(jsonq /tmp/args-sig.json target.end) $(jsonq /tmp/args-sig.json target.signal) $(jsonq /tmp/args-sig.json target.signal_name)"
assert_match "killed: stderr says so" "was killed by SIGSYS" "$(cat /tmp/args-sig.err)"
