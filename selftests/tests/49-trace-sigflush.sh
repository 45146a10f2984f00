# A signal handler at a flush (module/uhooks/urec.c, xp_urec_slow()). A records
# routine that finds its CPU's buffer full asks system call 422 to hand the
# buffer over, then appends the record it came with. A signal delivered at
# that call's exit runs its handler first; a handler whose traced calls
# fill the buffer again left it full for that record, and the routine,
# which tries once after a flush, dropped it. sigflush's own tracer (a
# child that ptraces it) has SIGUSR1 delivered at the exit of a flush in
# each round, and the handler fills the buffer the stops emptied. Every
# call of sf_leaf(), the handler's among them, is in trace's count; none
# is unmatched. Twice: without sums (XPROBECTL_NO_SUMS=1), where every call
# is two records; and with them, where sf_leaf's calls are made on the way
# up a recursion, each from a frame above the last (sigflush's "rise"), so
# that only the first after each hand-over is summed at the bottom of the
# buffer and the others fill it (calling it from one place, the process
# would sum every call there and the buffer would never fill). The sums
# run has a hand-over of its own early in each round (a tracer stop after
# the third call): wherever a switch falls, the scenario holds (the two
# stack depths that alternated until 2026-12-06 did not: after a hand-over
# that made the shallow call the first, every call was summed; a
# preemption did that on 6.1-rt, and 18 of 20 rounds had no flush).
. /xp/selftests/tests/lib.sh
R=$(scaled 20 4)

# sigflush_trace HOW ARGS...: trace sf_leaf in sigflush ARGS (HOW: nosums
# or sums); every call counted, the scenario held
sigflush_trace() {
	local how=$1 out=/tmp/sf.$1.out want sigs ev summed
	shift
	if [ $how = nosums ]; then
		XPROBECTL_NO_SUMS=1 xprobectl trace -f sf_leaf -- /xp/bin/sigflush "$@" > $out 2>&1
	else
		xprobectl trace -f sf_leaf -- /xp/bin/sigflush "$@" > $out 2>&1
	fi || fail "trace of sigflush ($how): $(tail -n 3 $out)"
	grep -q "views mode, [0-9]* through user hooks" $out ||
		fail "$how: not through user hooks: $(grep tracing $out)"
	want=$(sed -n 's/^calls //p' $out)
	sigs=$(sed -n 's/^signals //p' $out)
	ev=$(grep -m 1 '^# events:' $out)
	note "$how: $(grep 'sigflush: tracer' $out)"
	note "$how: $ev"
	# (a round has no flush only if switches come less than 333 calls
	# apart all through it)
	[ $((${sigs:-0} * 4)) -ge $((R * 3)) ] ||
		fail "$how: the handler ran ${sigs:-0} times in $R rounds: the scenario did not hold"
	if [ $how = sums ]; then
		# the process summed some, the first after each hand-over (about
		# three a round: its start, the stop after call 3, the handler's
		# first; a preemption adds one), and the rest went as records; a
		# handler whose calls were all summed (333 a round) would leave
		# the buffer unfilled for the record it came with
		summed=$(echo "$ev" | sed -n 's/.* calls_summed=\([0-9]*\).*/\1/p')
		[ "${summed:-0}" -gt 0 ] || fail "sums: the process summed no call: $ev"
		[ "$summed" -lt $((10 * R)) ] ||
			fail "sums: $summed of $want calls summed: the buffer did not fill with records"
	fi
	assert_eq "$how: sf_leaf's calls ($sigs signals at a flush)" "$want" \
		"$(awk '/^Total for/ { t = 1 } t && $1 == "sf_leaf" { print $2; exit }' $out)"
	assert_eq "$how: no return without its entry" 0 \
		"$(echo "$ev" | sed -n 's/.* unmatched=\([0-9]*\).*/\1/p')"
}
sigflush_trace nosums $R
sigflush_trace sums $R 1000 333 rise 3
