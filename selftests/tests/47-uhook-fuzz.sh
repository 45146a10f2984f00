# A hostile process against user hooks (issue 36): uhfuzz (seeded; see
# selftests/progs/uhfuzz.c) scribbles over its records buffers, makes
# system calls 420-422 with random registers and stack pointers, jumps into
# its trampolines at random, mprotects, mremaps, munmaps and madvises the
# module's areas, forks, vforks and execs, and exits under its own calls,
# while this script adds and deletes user hooks with records, events and
# returns on its functions. Its callers check every result all along: the
# process may spoil its own records, never its results. Beside it, in a view
# of its own, uhfuzz -w attacks its own hooked address space (jumps into
# its trampolines and stubs with random registers and stacks, system calls
# 420-422 from there, the areas mremapped and unmapped under its callers): its results are its own
# business, the kernel's health is not. Afterwards the
# module holds nothing of it and a well-formed user hook still works; the
# run leaves no splat (run-vm) and, on the debug kernel, no leak (kmemleak,
# 71-hostile-uhook runs this with 500 rounds).
# Replay with XP_SEED=S XP_UFUZZ_N=N (printed first).
. /xp/selftests/tests/lib.sh

SEED=${XP_SEED:-$(date +%s)}
N=${XP_UFUZZ_N:-300}
echo "XP_SEED=$SEED XP_UFUZZ_N=$N"
note "seed $SEED, $N rounds"
fts=finish_task_switch.isra.0
grep -q " $fts\$" /proc/kallsyms || fts=finish_task_switch

# hooked PID [FLAGS]: a view with the records hand-over hooks (with FLAGS:
# uhfuzz's own process folds and sums calls itself, and scribbles over the
# counts, slots and sums the kernel reads back), records and events
hooked() {
	xprobectl view add $1 > /dev/null || fail "view add $1"
	for k in switch_mm_irqs_off $fts do_exit; do
		xprobectl hook add --records ${2:-} $1 $k > /dev/null || fail "hook add --records ${2:-} $k"
	done
	xprobectl uhook add --records --returns --cookie 1 $1 uf_add > /dev/null ||
		fail "uhook add --records uf_add"
	xprobectl uhook add --returns $1 uf_call > /dev/null || fail "uhook add --returns uf_call"
	xprobectl uhook add --records $1 uf_endbr > /dev/null || fail "uhook add --records uf_endbr"
}
uhfuzz -s $SEED -n $N > /tmp/uf.out 2>&1 &
P=$!
wait_for /tmp/uf.out '^ready' "uhfuzz did not start"
uhfuzz -w -f /tmp/ufw.entries -s $((SEED + 1)) -n $N > /tmp/ufw.out 2>&1 &
W=$!
wait_for /tmp/ufw.out '^ready' "uhfuzz -w did not start"
hooked $P "--calls --sums"
hooked $W
xprobectl uhook list $W | awk 'NR > 1 { print $4 }' > /tmp/ufw.entries
kill -HUP $P $W

# Adds and deletes all along, of every kind; a refusal (a child of fork in
# the view is a second process for records) is the process's doing.
cycles=0
while kill -0 $P 2>/dev/null && ! grep -q '^done\|^BAD' /tmp/uf.out; do
	for spec in "--records --returns uf_one" "--returns uf_endbr" "--no-events uf_one" \
		    "--records uf_endbr"; do
		id=$(xprobectl uhook add $P ${spec% *} ${spec##* } 2>/dev/null) || continue
		xprobectl uhook del $id 2>/dev/null
		cycles=$((cycles + 1))
	done
done
wait $P
rc=$?
! grep BAD /tmp/uf.out || fail "uhfuzz computed a wrong result (XP_SEED=$SEED): $(grep BAD /tmp/uf.out)"
assert_eq "uhfuzz ran every round and exited 0 (XP_SEED=$SEED)" "done $N 0" \
	"$(grep '^done' /tmp/uf.out) $rc"
note "ok: $N rounds, $cycles add/del cycles beside them"
# the wild one: its end is its own (done, or killed by what it did); it
# is given as long again as the other took, then killed mid-call
i=0
while kill -0 $W 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL $W 2>/dev/null
wait $W
wrc=$?
note "uhfuzz -w: $(grep '^done' /tmp/ufw.out || echo 'ended early') (exit $wrc)"

# Nothing of it left in the module; a well-formed user hook still works.
sleep 0.5
assert_eq "no views left (XP_SEED=$SEED)" 0 "$(status_field views)"
assert_eq "no user hooks left" "" "$(xprobectl uhook list | awk 'NR > 1')"
uhtarget -t 2 > /tmp/uf2.out 2>&1 &
Q=$!
wait_for /tmp/uf2.out '^ready' "uhtarget did not start"
xprobectl view add $Q > /dev/null || fail "view add (after)"
id=$(xprobectl uhook add $Q uh_add) || fail "uhook add uh_add after the fuzzing"
sleep 0.3
xprobectl uhook del $id || fail "uhook del after the fuzzing"
kill $Q
wait $Q 2>/dev/null
! grep BAD /tmp/uf2.out || fail "uhtarget computed a wrong result after the fuzzing"
note "ok: a user hook still goes in and out"
