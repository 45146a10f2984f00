# A signal handler at a flush (module/urec.c, xp_urec_slow()). A records
# routine that finds its CPU's buffer full asks system call 422 to hand the
# buffer over, then appends the record it came with. A signal delivered at
# that call's exit runs its handler first; a handler whose traced calls
# fill the buffer again left it full for that record, and the routine,
# which tries once after a flush, dropped it. sigflush's own tracer (a
# child that ptraces it) has SIGUSR1 delivered at the exit of a flush in
# each round, and the handler fills the buffer the stops emptied. Every
# call of sf_leaf(), the handler's among them, is in trace's count; none
# is unmatched. Without sums (XPROBECTL_NO_SUMS=1): sf_leaf's caller is not
# traced, so with sums the process sums every call at the bottom of its
# buffer and the buffer never fills.
. /xp/selftests/tests/lib.sh
R=$(scaled 20 4)

XPROBECTL_NO_SUMS=1 xprobectl trace -f sf_leaf -- /xp/bin/sigflush $R > /tmp/sf.out 2>&1 ||
	fail "trace of sigflush: $(tail -n 3 /tmp/sf.out)"
grep -q "views mode, [0-9]* through user hooks" /tmp/sf.out ||
	fail "not through user hooks: $(grep tracing /tmp/sf.out)"
want=$(sed -n 's/^calls //p' /tmp/sf.out)
sigs=$(sed -n 's/^signals //p' /tmp/sf.out)
note "$(grep 'sigflush: tracer' /tmp/sf.out)"
note "$(grep -m 1 '^# events:' /tmp/sf.out)"
[ "${sigs:-0}" -ge $((R / 2)) ] ||
	fail "the handler ran ${sigs:-0} times in $R rounds: the scenario did not hold"
assert_eq "sf_leaf's calls ($sigs signals at a flush)" "$want" \
	"$(awk '/^Total for/ { t = 1 } t && $1 == "sf_leaf" { print $2; exit }' /tmp/sf.out)"
