#!/bin/sh
# User hooks with records (issue 19, design (b); module/uhooks/urec.c): a hooked
# call appends {time, sp, cookie} to its CPU's buffer in the process, under
# rseq, and its return (through a return thunk) a return record; no kernel
# entry per call. The view's hooks on switch_mm_irqs_off,
# finish_task_switch and do_exit, with --records, hand a thread's records
# to the xprobes_urecs tracepoint when it leaves its CPU or exits; a full
# buffer, or a
# return address new to the area, makes system call 422.
# uhtarget's 2 threads call each function N times once started, checking
# every result; uhrecs (a raw tracepoint program) replays each thread's
# records against its own stack.
# (a) Refusals: without the view's three hooks (saying which), a cookie
# past 14 bits, events and records at once, --records on another kernel
# function. (b) Exact counts per cookie: entries, and returns that close
# the entry at their sp; nothing unmatched or abandoned, no time going
# back within a thread or past its hand-over; only uhtarget's two workers
# own records; the buffers filled and were handed over many times.
# (c) A forked child runs the hooked functions (is not the hooked mm): it
# computes right and hands nothing over; it finds zeros where its parent's
# buffers are (VM_WIPEONFORK), and what it writes there its parent never
# sees; nor does a
# child of vfork (the hooked mm, its parent's TLS, no rseq of its own); a
# child of clone(CLONE_VM) without CLONE_VFORK leaves its parent, which runs
# on at once, its cpu_id (records on); a thread with a TLS of its own, not
# glibc's, finds no byte of it written. (d) Untraced
# processes: syscall 422 is ENOSYS. (e) A process without rseq
# (glibc.pthread.rseq=0) is refused records, saying why. (f) Calls folded
# (--calls, module/uhooks/urec_fold.c): a view's three hooks that hand records
# over take it all or none (refused, saying why); each call of a function
# hooked with returns is then one record, or its entry and return where a
# hand-over fell between them; uhtarget's functions are leaves, so every
# folded call is "top"; entries without returns stay entries; a hand-over
# hook with sums (--sums) beside them is refused. (g) An events
# hook with returns in the same process as records hooks with returns: both
# kinds count every call and return, and every result is right. (h) The
# thunk cache: each hook's word names the hash entry of its last return.
. /xp/selftests/tests/lib.sh
N=$(scaled 5000 10)

field() { echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }
fts=finish_task_switch.isra.0
grep -q " $fts\$" /proc/kallsyms || fts=finish_task_switch

# -F 400: the first worker's first 400 rounds (7 records each) run as
# SCHED_FIFO, which no task of the usual class preempts, so a buffer of it
# fills (664 records) before any switch hands it over, however busy the
# machine: without it, on 6.1-rt beside five other VMs, the largest of 746
# hand-overs was 637 records (docs/ci.md)
uhtarget -t 2 -n $N -g -v -F 400 > /tmp/ur.out 2>&1 &
P=$!
wait_for /tmp/ur.out '^ready' "uhtarget did not start"
xprobectl view add $P > /dev/null || fail "view add"

# (a)
out=$(xprobectl uhook add --records $P uh_add 2>&1) && fail "records without switch hooks: $out"
assert_match "records need the view's switch hooks, and it says so" "switch_mm_irqs_off" "$out"
out=$(xprobectl hook add --records $P do_sys_openat2 2>&1) && fail "--records on do_sys_openat2: $out"
assert_match "only the switch and exit hooks hand records over" "only at switch_mm_irqs_off" "$out"
xprobectl hook add --records $P switch_mm_irqs_off > /dev/null || fail "hook add --records switch_mm_irqs_off"
xprobectl hook add --records $P $fts > /dev/null || fail "hook add --records $fts"
out=$(xprobectl uhook add --records $P uh_add 2>&1) && fail "records without the do_exit hook: $out"
assert_match "records need the do_exit hook too, and it says so" "do_exit" "$out"
xprobectl hook add --records $P do_exit > /dev/null || fail "hook add --records do_exit"
out=$(xprobectl uhook add --records --cookie 16384 $P uh_add 2>&1) && fail "cookie 16384: $out"
assert_match "a cookie past 14 bits is refused" "below 16384" "$out"

uhrecs > /tmp/urc.out 2>&1 &
R=$!
wait_for /tmp/urc.out '^attached' "uhrecs did not attach"
j=$(xprobectl uhook add --json --records --cookie 1 $P uh_add) || fail "uhook add --records uh_add"
assert_eq "uh_add: records" true "$(json_get "$j" records)"
assert_eq "uh_add: no events" false "$(json_get "$j" events)"
a=$(json_get "$j" id)
xprobectl uhook add --records --returns --cookie 6 $P uh_args6 > /dev/null ||
	fail "uhook add --records --returns uh_args6"
xprobectl uhook add --records --returns --cookie 3 $P uh_endbr > /dev/null ||
	fail "uhook add --records --returns uh_endbr"
xprobectl uhook add --records --returns --cookie 2 $P uh_call > /dev/null ||
	fail "uhook add --records --returns uh_call"
assert_eq "uh_add listed as writing records" rec \
	"$(xprobectl uhook list $P | awk -v i=$a '$1 == i { print $(NF - 2) }')"
assert_match "the buffers are mapped into the process" "xprobes-records" "$(cat /proc/$P/maps)"
# (g) an events hook with returns beside them, in the same trampoline area:
# its return thunks and the records block each have their own place
j=$(xprobectl uhook add --json --returns --cookie 9 $P uh_one) || fail "uhook add --returns uh_one (events)"
assert_eq "uh_one: events" true "$(json_get "$j" events)"
o=$(json_get "$j" id)

# (b)
workers=$(ls /proc/$P/task | sort -n | tail -n +2 | tr '\n' ' ')
kill -HUP $P
wait_for /tmp/ur.out '^ok calls\|^BAD' "uhtarget did not finish its rounds" 6000
grep -q BAD /tmp/ur.out && fail "uhtarget computed a wrong result: $(grep BAD /tmp/ur.out)"
assert_eq "the rounds" "ok calls=$((2 * N))" "$(grep -o '^ok calls=[0-9]*' /tmp/ur.out)"
# (uh_one runs twice a round: uh_tail jumps to it)
assert_eq "uh_one (events, beside records): calls and returns listed" "$((4 * N)) $((4 * N))" \
	"$(xprobectl uhook list $P | awk -v i=$o '$1 == i { print $(NF - 2), $(NF - 1) }')"

# (h) the thunk cache (module/uhooks/urec.h): each hook with returns keeps,
# in the process, which hash entry its last call's return address was; the
# three hooks' words must each name an entry whose key returns from a call
# to their own function, all from one hash start (zeros, or no cache, name
# three different ones)
fnaddr() { awk -v f=$1 '$1 == "fn" && $2 == f { print $3; exit }' /tmp/ur.out; }
tc=$(uhtarget -k $P 6:$(fnaddr uh_args6) 3:$(fnaddr uh_endbr) 2:$(fnaddr uh_call))
assert_match "each hook's thunk cache word names its last return's hash entry" "^tcache base 0x" "$tc"

# (c) the child is in the view (fork is followed), but not the hooked mm
kill -USR1 $P
wait_for /tmp/ur.out '^child' "the forked child did not report" 6000
ch=$(grep '^child' /tmp/ur.out)
assert_match "the forked child computed right" "child ok" "$ch"
# its own buffers: its parent's records are not there, its own do not reach them
assert_eq "the child found zeros where its parent's records are" unseen "$(field "$ch" parent_records)"
assert_eq "the parent did not see what the child wrote there" unseen "$(field "$ch" child_mark)"
# and a child of vfork: the same mm, the same TLS (its parent's rseq area),
# not registered for rseq; its parent's cpu_id says "none" meanwhile, so it
# writes no records (they would mix with a worker's in that CPU's buffer)
wait_for /tmp/ur.out '^vchild' "the vfork child did not report" 6000
v=$(grep '^vchild' /tmp/ur.out)
assert_match "the vfork child computed right" "vchild ok" "$v"
assert_eq "the vfork child saw cpu_id 'none' in its parent's rseq area" -1 "$(field "$v" cpu_id)"
assert_ge "its parent has its cpu_id back" "$(field "$v" parent)" 0
# a child of clone(CLONE_VM) without CLONE_VFORK: its parent runs on at once,
# and must find its cpu_id as clone returns (its records are not dropped)
wait_for /tmp/ur.out '^cchild' "the clone(CLONE_VM) child did not report" 6000
cc=$(grep '^cchild' /tmp/ur.out)
assert_match "the clone(CLONE_VM) child exited right" "cchild ok" "$cc"
assert_ge "its parent's cpu_id as clone returned" "$(field "$cc" cpu_id)" 0
# a thread with a TLS of its own (clone(CLONE_SETTLS), no rseq area), that
# looks like an rseq area at the process's offset and carries the stamp
# the routines check (copied from a stamped TLS): the stamp is taken out
# as the thread is made, and the routines write nothing there (they use
# an area only where the kernel stamped it as the thread's own); its calls
# write no records (the exact counts and the tids below)
wait_for /tmp/ur.out '^tchild' "the thread with a TLS of its own did not report" 6000
tc=$(grep '^tchild' /tmp/ur.out)
assert_match "the thread with a TLS of its own computed right" "tchild ok" "$tc"
assert_eq "the stamp planted in its TLS was cleared" "stamp cleared" "$(echo "$tc" | grep -o 'stamp [a-z]*')"
assert_eq "no other byte of that TLS changed" "tls intact" "$(echo "$tc" | grep -o 'tls .*')"
sleep 0.2

kill -INT $R
wait $R
c=$(tail -n 1 /tmp/urc.out)
note "uhrecs: $c"
assert_eq "uh_add: entry records" $((2 * N)) "$(field "$c" entries.1)"
assert_eq "uh_add: no returns (hooked without)" 0 "$(field "$c" returns.1)"
assert_eq "uh_add's entries say their return writes nothing" $((2 * N)) "$(field "$c" noret)"
for k in 6 3 2; do
	assert_eq "cookie $k: entry records" $((2 * N)) "$(field "$c" entries.$k)"
	assert_eq "cookie $k: returns closing an entry at their sp" $((2 * N)) "$(field "$c" returns.$k)"
done
assert_eq "no return without its entry" 0 "$(field "$c" unmatched)"
assert_eq "no entry left behind" 0 "$(field "$c" abandoned)"
assert_eq "no time going back within a thread" 0 "$(field "$c" backwards)"
assert_eq "no time past the hand-over" 0 "$(field "$c" future)"
assert_eq "no other cookies" 0 "$(field "$c" other)"
assert_eq "no tail calls in uhtarget" 0 "$(field "$c" tail)"
assert_eq "records of uhtarget's workers only (none of the child, none of main)" \
	"$(echo $workers | tr ' ' '\n' | sort -n | tr '\n' ' ')" \
	"$(echo "$c" | sed 's/.* tids //' | tr ' ' '\n' | sort -n | tr '\n' ' ')"
assert_ge "buffers filled and were handed over (664 records a full one)" "$(field "$c" max_batch)" 664
assert_ge "hand-overs" "$(field "$c" batches)" 8

# (d)
assert_eq "syscall 422 outside any view: ENOSYS" ENOSYS "$(uhtarget -s 422)"

kill $P
wait $P
assert_eq "uhtarget's exit" 0 $?

# (e)
GLIBC_TUNABLES=glibc.pthread.rseq=0 uhtarget -t 1 > /tmp/un.out 2>&1 &
Q=$!
wait_for /tmp/un.out '^ready' "uhtarget without rseq did not start"
xprobectl view add $Q > /dev/null || fail "view add (no rseq)"
xprobectl hook add --records $Q switch_mm_irqs_off > /dev/null || fail "hook add (no rseq)"
xprobectl hook add --records $Q $fts > /dev/null || fail "hook add $fts (no rseq)"
xprobectl hook add --records $Q do_exit > /dev/null || fail "hook add do_exit (no rseq)"
out=$(xprobectl uhook add --records $Q uh_add 2>&1) && fail "records without rseq: $out"
assert_match "no rseq: refused, saying why" "rseq" "$out"
kill $Q
wait $Q

# (f)
N2=$(scaled 1000 10)
uhtarget -t 2 -n $N2 -g > /tmp/uf.out 2>&1 &
F=$!
wait_for /tmp/uf.out '^ready' "uhtarget (calls) did not start"
xprobectl view add $F > /dev/null || fail "view add (calls)"
xprobectl hook add --records --calls $F switch_mm_irqs_off > /dev/null || fail "hook add --records --calls"
out=$(xprobectl hook add --records $F $fts 2>&1) && fail "a hand-over hook without --calls beside one with: $out"
assert_match "hand-over hooks that disagree on --calls are refused, saying why" "calls folded" "$out"
out=$(xprobectl hook add --calls $F do_sys_openat2 2>&1) && fail "--calls without --records: $out"
assert_match "--calls without --records is refused" "needs --records" "$out"
xprobectl hook add --records --calls $F $fts > /dev/null || fail "hook add --records --calls $fts"
xprobectl hook add --records --calls $F do_exit > /dev/null || fail "hook add --records --calls do_exit"
uhrecs > /tmp/ufc.out 2>&1 &
R=$!
wait_for /tmp/ufc.out '^attached' "uhrecs (calls) did not attach"
xprobectl uhook add --records --cookie 1 $F uh_add > /dev/null || fail "uhook add (calls) uh_add"
for f in 6:uh_args6 3:uh_endbr 2:uh_call; do
	xprobectl uhook add --records --returns --cookie ${f%%:*} $F ${f#*:} > /dev/null ||
		fail "uhook add (calls) ${f#*:}"
done
kill -HUP $F
wait_for /tmp/uf.out '^ok calls\|^BAD' "uhtarget (calls) did not finish its rounds" 6000
grep -q BAD /tmp/uf.out && fail "uhtarget (calls) computed a wrong result: $(grep BAD /tmp/uf.out)"
kill -INT $R
wait $R
c=$(tail -n 1 /tmp/ufc.out)
note "uhrecs (calls): $c"
folded=0
for k in 6 3 2; do
	assert_eq "cookie $k: every call once, folded or as its entry" $((2 * N2)) \
		$(($(field "$c" calls.$k) + $(field "$c" entries.$k)))
	assert_eq "cookie $k: every entry left as such returned at its sp" "$(field "$c" entries.$k)" \
		"$(field "$c" returns.$k)"
	assert_ge "cookie $k: most calls folded" "$(field "$c" calls.$k)" $N2
	folded=$((folded + $(field "$c" calls.$k)))
done
assert_eq "uh_add (no returns): entries, none folded" "$((2 * N2)) 0" \
	"$(field "$c" entries.1) $(field "$c" calls.1)"
assert_eq "every folded call is top (no hooked caller)" $folded "$(field "$c" top)"
assert_ge "folded calls took time" "$(field "$c" call_ns)" 1
assert_eq "no return without its entry (calls)" 0 "$(field "$c" unmatched)"
assert_eq "no entry left behind (calls)" 0 "$(field "$c" abandoned)"
assert_eq "no time going back (calls)" 0 "$(field "$c" backwards)"
# Its routines were written without sums: a hand-over hook with sums is
# refused beside the others (and they cannot go while it has buffers).
out=$(xprobectl hook add --records --calls --sums $F try_to_wake_up 2>&1) &&
	fail "a hand-over hook with sums beside ones without: $out"
assert_match "hand-over hooks that disagree on --sums are refused, saying why" "without sums" "$out"
out=$(xprobectl hook add --records --sums $F try_to_wake_up 2>&1) && fail "--sums without --calls: $out"
assert_match "--sums without --calls is refused" "needs --records --calls" "$out"
kill $F
wait $F
note "ok: $((2 * N)) calls per function as records, every return matched at its sp; with --calls, $folded of $((6 * N2)) folded"
