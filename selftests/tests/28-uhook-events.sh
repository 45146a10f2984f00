# User-hook events (issue 19, step 2): every call of a hooked function in
# the traced process fires xprobes_uhook, with the registers its first
# instruction sees, through a system call only the process's view
# intercepts (module/uhooks/uevent.c). uhtarget's 2 threads call each function N
# times once started, checking every result; uhevents (a raw tracepoint
# program) counts events per cookie and compares each one's registers with
# the function's address, its call site and its arguments.
# (a) Exact counts of calls and returns, in BPF and in uhook list; nothing
# for a hook without events, no returns for a hook without them. (b) The registers: ip at the function, the return address at sp
# (the one uh_args6 itself stored), the six arguments, the entry's stack
# alignment; at every return, ip at the call site, the result in ax, sp
# aligned. (c) The view's hook on __x64_sys_ni_syscall is listed and
# cannot be deleted. (d) A forked child runs the hooked functions (N rounds)
# and fires nothing. (e) Untraced processes: syscall 420 is ENOSYS.
# (f) rmmod while a thread sleeps inside a hooked function with returns:
# it returns through its thunk, without the module, and runs on.
# (g) trace on user hooks, PROBE per function (a trap where no jump is
# possible, every call counted through it), trace killed with SIGKILL.
# (h) A trap hook (--trap) where a jump is refused: an int3 and the file's
# bytes executed, every call counted through it, none of the child's.
# (i) With every kernel hook an int3 (call_hooks=0), exact events, returns
# and registers, and trace exact with records and with events.
. /xp/selftests/tests/lib.sh
N=$(scaled 5000 10)

fn_addr() { awk -v f="$2" '$1 == "fn" && $2 == f { print $3 }' "$1"; }
field() { echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }

# start OUT EVOUT: uhtarget held (-g) in a view, into P, and uhevents
# counting its events, into E.
start() {
	uhtarget -t 2 -n $N -g > $1 2>&1 &
	P=$!
	wait_for $1 '^ready' "uhtarget did not start ($1)"
	xprobectl view add $P > /dev/null || fail "view add ($1)"
	uhevents > $2 2>&1 &
	E=$!
	wait_for $2 '^attached' "uhevents did not attach ($2)"
}
start /tmp/ue.out /tmp/uev.out
j=$(xprobectl uhook add --json --cookie 1 $P uh_add) || fail "uhook add uh_add"
assert_eq "uh_add: events" true "$(json_get "$j" events)"
a=$(json_get "$j" id)
assert_eq "uh_add: no returns" false "$(json_get "$j" returns)"
j=$(xprobectl uhook add --json --cookie 6 --returns $P uh_args6) || fail "uhook add uh_args6"
assert_eq "uh_args6: returns" true "$(json_get "$j" returns)"
g=$(json_get "$j" id)
j=$(xprobectl uhook add --json --cookie 3 --returns $P uh_endbr) || fail "uhook add uh_endbr"
e=$(json_get "$j" id)
j=$(xprobectl uhook add --json --cookie 2 --no-events $P uh_call) || fail "uhook add uh_call"
assert_eq "uh_call: no events" false "$(json_get "$j" events)"
c=$(json_get "$j" id)
# (h) A trap (--trap) on uh_loop, whose loop branches into the bytes a jump
# would cover (27 sees the jump refused): the uprobe's int3 stays, the
# trampoline runs what a jump's would (so that a later jump there finds no
# thread of the trap's landing inside it), the file is not disassembled.
la=$(($(fn_addr /tmp/ue.out uh_loop)))
lorig=$(uhtarget -r $P $la 6)
j=$(xprobectl uhook add --json --cookie 4 --trap $P uh_loop) || fail "uhook add --trap uh_loop"
assert_eq "uh_loop: kind" trap "$(json_get "$j" kind)"
assert_eq "uh_loop: bytes and instructions covered (xor, add: 5, 2)" "5 2" \
	"$(json_get "$j" bytes) $(json_get "$j" instructions)"
t=$(json_get "$j" id)
assert_eq "uh_loop: $P executes an int3, then the file's bytes" "cc ${lorig#?? }" \
	"$(uhtarget -r $P $la 6)"

# (c)
kh=$(xprobectl hook list $P | awk '/__x64_sys_ni_syscall/ { print $1 }')
[ -n "$kh" ] || fail "no view hook on __x64_sys_ni_syscall: $(xprobectl hook list $P)"
assert_match "it is the module's" "user-hook events" "$(xprobectl hook list $P)"
out=$(xprobectl hook del $kh 2>&1) && fail "the events' kernel hook was deleted: $out"
assert_match "deleting it is refused, saying why" "goes with the view" "$out"

# (a), (b)
kill -HUP $P
wait_for /tmp/ue.out '^ok calls\|^BAD' "uhtarget did not finish its rounds" 6000
grep -q BAD /tmp/ue.out && fail "uhtarget computed a wrong result: $(grep BAD /tmp/ue.out)"
assert_eq "the rounds" "ok calls=$((2 * N))" "$(grep -o '^ok calls=[0-9]*' /tmp/ue.out)"
ret=$(sed -n 's/^ok calls=[0-9]* ret=//p' /tmp/ue.out)
hits() { xprobectl uhook list $P | awk -v i=$1 '$1 == i { print $(NF - 2) }'; }
rets() { xprobectl uhook list $P | awk -v i=$1 '$1 == i { print $(NF - 1) }'; }
assert_eq "uh_add: events listed" $((2 * N)) "$(hits $a)"
assert_eq "uh_args6: events listed" $((2 * N)) "$(hits $g)"
assert_eq "uh_args6: return events listed" $((2 * N)) "$(rets $g)"
assert_eq "uh_endbr: return events listed" $((2 * N)) "$(rets $e)"
assert_eq "uh_add: no return events" - "$(rets $a)"
assert_eq "uh_call: no events listed" - "$(hits $c)"
trapped() { xprobectl uhook list $P | awk -v i=$1 '$1 == i { print $(NF - 3) }'; }
assert_eq "uh_loop (trap): events listed" $((2 * N)) "$(hits $t)"
assert_eq "uh_loop (trap): every call through the int3" $((2 * N)) "$(trapped $t)"
assert_eq "uh_loop (trap): kind listed" trap \
	"$(xprobectl uhook list $P | awk -v i=$t '$1 == i { print $5 }')"

# (d) the child is in the view (fork is followed), but not the hooked mm
kill -USR1 $P
wait_for /tmp/ue.out '^child' "the forked child did not report" 6000
assert_match "the forked child computed right" "child ok" "$(grep '^child' /tmp/ue.out)"
assert_eq "uh_add: the child fired nothing" $((2 * N)) "$(hits $a)"
assert_eq "uh_loop (trap): the child's calls stepped by uprobes, not counted" \
	"$((2 * N)) $((2 * N))" "$(hits $t) $(trapped $t)"

kill -INT $E
wait $E
a1=$(grep '^cookie 1 ' /tmp/uev.out)
a6=$(grep '^cookie 6 ' /tmp/uev.out)
assert_eq "uh_add: events in BPF" $((2 * N)) "$(field "$a1" count)"
assert_eq "uh_add: every event at the function, from one call site" 0 "$(field "$a1" bad)"
assert_eq "uh_add: ip" $(($(fn_addr /tmp/ue.out uh_add))) $(($(field "$a1" ip)))
assert_eq "uh_add: the hook's id" $a "$(field "$a1" id)"
assert_eq "uh_add: the process" $P "$(field "$a1" tgid)"
assert_eq "uh_args6: events in BPF" $((2 * N)) "$(field "$a6" count)"
assert_eq "uh_args6: every event's arguments 1..6, ip and return address alike" 0 "$(field "$a6" bad)"
assert_eq "uh_args6: ip" $(($(fn_addr /tmp/ue.out uh_args6))) $(($(field "$a6" ip)))
# The function itself finds a return thunk's address where its caller's
# was (as under a uretprobe); the event has the caller's, and so does the return.
assert_eq "uh_args6: the return goes where the word at sp said at entry" \
	$(($(field "$a6" ret))) $(($(field "$a6" rip)))
set -- $(awk '/xprobes-uhooks/ { split($1, r, "-"); print r[1], r[2]; exit }' /proc/$P/maps)
[ $((ret)) -ge $((0x$1)) ] && [ $((ret)) -lt $((0x$2)) ] ||
	fail "uh_args6 saw $ret as its return address, not a thunk in $1-$2"
note "ok: uh_args6 saw a return thunk ($ret) where its caller's return address was"
assert_eq "uh_args6: the arguments" "1 2 3 4 5 6" "$(echo "$a6" | sed 's/.* args //')"
assert_eq "sp + 8 is 16-byte aligned at every event (uh_add)" 0 "$(field "$a1" misaligned)"
assert_eq "sp + 8 is 16-byte aligned at every event (uh_args6)" 0 "$(field "$a6" misaligned)"
assert_eq "uh_args6: return events in BPF" $((2 * N)) "$(field "$a6" rcount)"
assert_eq "uh_args6: every return to the call site, with the result 21" 0 "$(field "$a6" rbad)"
assert_eq "uh_args6: the return's ax" 21 $(($(field "$a6" rax)))
assert_eq "uh_args6: sp 16-byte aligned after every return" 0 "$(field "$a6" rmisaligned)"
a3=$(grep '^cookie 3 ' /tmp/uev.out)
assert_eq "uh_endbr: events and returns in BPF" "$((2 * N)) $((2 * N))" \
	"$(field "$a3" count) $(field "$a3" rcount)"
assert_eq "uh_endbr: every return to one call site" 0 "$(field "$a3" rbad)"
assert_eq "uh_add: no return events in BPF" 0 "$(field "$a1" rcount)"
a4=$(grep '^cookie 4 ' /tmp/uev.out)
assert_eq "uh_loop (trap): events in BPF" $((2 * N)) "$(field "$a4" count)"
assert_eq "uh_loop (trap): every event at the function, from one call site" 0 "$(field "$a4" bad)"
assert_eq "uh_loop (trap): ip" $la $(($(field "$a4" ip)))
assert_eq "no events of other hooks" "" "$(grep '^cookie 2 ' /tmp/uev.out)"
assert_eq "no events with other cookies" "other 0" "$(grep '^other' /tmp/uev.out)"

# (e)
assert_eq "syscall 420 outside any view: ENOSYS" ENOSYS "$(uhtarget -s 420)"

# (h) The view ends while P runs: the trap's byte comes back with its
# uprobe, and nothing looked for a jump there (until 2026-11-29 every
# view's end warned that a trap's text "is no longer our jump").
xprobectl view del $P || fail "view del (h)"
wait_text $P $la 6 "$lorig" "uh_loop's bytes after its view went"
assert_eq "uh_loop (trap): its view's end took no jump out" "" \
	"$(dmesg | grep "uhook $t: .*no longer our jump")"

kill $P
wait $P
assert_eq "uhtarget's exit" 0 $?

# (f) rmmod while a thread sleeps inside a hooked function with returns:
# its return address is a thunk's, which must return without the module.
uhtarget -t 1 -z > /tmp/uz.out 2>&1 &
Z=$!
wait_for /tmp/uz.out '^ready' "uhtarget -z did not start"
xprobectl view add $Z > /dev/null || fail "view add (uh_sleep)"
z=$(json_get "$(xprobectl uhook add --json --returns $Z uh_sleep)" id)
[ -n "$z" ] || fail "uhook add --returns uh_sleep"
i=0
while [ "$(xprobectl uhook list $Z | awk -v i=$z '$1 == i { print $(NF - 1) }')" -lt 3 ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "uh_sleep returned fewer than 3 times: $(xprobectl uhook list $Z)"
	sleep 0.05
done
rmmod xprobes || fail "rmmod with a thread inside a hooked function"
sleep 0.5
kill -0 $Z 2>/dev/null || fail "the process died after rmmod: $(tail -n 3 /tmp/uz.out)"
kill $Z
wait $Z
assert_eq "uhtarget -z's exit after rmmod" 0 $?
assert_match "its sleeper returned through the thunk and on" "^naps [1-9]" "$(grep '^naps' /tmp/uz.out)"
load_module

# (g) trace on a multithreaded target that checks its results: user hooks
# where a function allows one, a uprobe where not, said per function; then
# trace killed with SIGKILL: its view goes with its socket, and with it
# every user hook (the file's bytes back), while the target runs on.
# A file no earlier test wrote (27 leaves a /tmp/uk.out with a "ready" in
# it, which the wait could see before the shell truncates the file).
rm -f /tmp/ut28.out
uhtarget -t 2 > /tmp/ut28.out 2>&1 &
K=$!
wait_for /tmp/ut28.out '^ready' "uhtarget (trace) did not start"
ka=$(fn_addr /tmp/ut28.out uh_add)
before=$(uhtarget -r $K $ka 12)
xprobectl trace -d 3 -f 'uh_*' $K > /tmp/tk.txt 2> /tmp/tk.err ||
	fail "trace -f 'uh_*': $(tail -n 3 /tmp/tk.err)"
probe() { awk -v f=$1 '$1 == f { print $NF }' /tmp/tk.txt; }
assert_eq "trace: uh_add through a user hook" uhook "$(probe uh_add)"
assert_eq "trace: uh_args6 through a user hook" uhook "$(probe uh_args6)"
assert_eq "trace: uh_loop (a branch into its first bytes) through a user hook that traps" trap \
	"$(probe uh_loop)"
assert_match "trace says how many went through user hooks" "through user hooks" "$(cat /tmp/tk.err)"
# uh_fa (uh_fb jumps to its +3) too, and uh_swbad and uh_swsplit (a table
# entry at +1), which are never called: not in the table, but in the count
assert_eq "trace: uh_fa through a user hook that traps" trap "$(probe uh_fa)"
assert_match "... and trace says how many trap, with the first's reason" \
	"4 functions on user hooks that trap at each call: no jump possible \(first: uh_[a-z]*: no jump here" \
	"$(cat /tmp/tk.err)"
# Every call counted through the trap, its returns too (thunks, records,
# the process's sums), and through the jumps beside it: uhtarget -n makes
# each of its threads call each function N times, checking each result.
rm -f /tmp/tt.out /tmp/tt.err
uhtarget -g -t 2 -n 3000 > /tmp/tt.out 2>&1 &
U=$!
wait_for /tmp/tt.out '^ready' "uhtarget (trap) did not start"
xprobectl trace --json -f uh_loop -f uh_add $U > /tmp/tt.json 2> /tmp/tt.err &
T=$!
wait_for /tmp/tt.err 'xprobectl: tracing' "trace (trap) did not start" 600
kill -HUP $U
wait_for /tmp/tt.out '^ok calls=' "uhtarget's rounds under the trap did not end" 3000
kill -TERM $U
wait $U
wait $T || fail "trace of uh_loop and uh_add: $(tail -n 3 /tmp/tt.err)"
assert_eq "uh_loop: its probe" trap "$(fn /tmp/tt.json uh_loop probe)"
assert_eq "uh_loop: every call through the trap" 6000 "$(fn /tmp/tt.json uh_loop calls)"
assert_eq "uh_add: every call through the jump" 6000 "$(fn /tmp/tt.json uh_add calls)"
assert_eq "uh_loop: nothing lost" 0 "$(($(fn /tmp/tt.json uh_loop calls_lost) + $(fn /tmp/tt.json uh_loop returns_lost)))"
grep -q BAD /tmp/tt.out && fail "uhtarget computed a wrong result under the trap: $(grep BAD /tmp/tt.out)"
# A file of its own: the shell truncates a reused one only once the job
# runs, and the first trace's "tracing" line would pass the wait at once.
xprobectl trace -f 'uh_*' $K > /dev/null 2> /tmp/tk2.err &
T=$!
wait_for /tmp/tk2.err 'xprobectl: tracing' "trace did not start" 600
assert_ge "user hooks live under trace" "$(xprobectl uhook list $K | grep -c live)" 5
assert_match "uh_add executes a jmp under trace" "^e9 " "$(uhtarget -r $K $ka 5)"
kill -9 $T
wait $T 2>/dev/null
i=0
while [ "$(xprobectl uhook list $K | grep -c live)" != 0 ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "user hooks left after trace was killed: $(xprobectl uhook list $K)"
	sleep 0.05
done
assert_eq "uh_add: the file's bytes back after trace was killed" "$before" "$(uhtarget -r $K $ka 12)"
sleep 0.5
kill $K
wait $K
assert_eq "uhtarget's exit after trace and its kill" 0 $?
grep -q "^ok calls" /tmp/ut28.out || fail "uhtarget: $(tail -n 2 /tmp/ut28.out)"

# (i) Every kernel hook an int3 (call_hooks=0), the view's hook on
# __x64_sys_ni_syscall too: every event, return and records request then
# comes through its trap, whose context is NMI-like (a view otherwise takes
# it only while that hook's jump goes in or out, or while a kprobe keeps
# it out). The handlers take locks (a thunk block's) and run programs, so
# the trap returns into xp_uevent_trapped() instead, which runs them as the
# syscall itself, in task context (module/uhooks/uevent.c). Exact counts and registers
# as at (a) and (b); trace exact with records and with events. On the debug
# kernel, lockdep watches: until 2026-12-01 the trap's handlers took the
# blocks' locks there ("inconsistent {INITIAL USE} -> {IN-NMI}").
unload_module
insmod $KO call_hooks=0 || fail "insmod call_hooks=0"
start /tmp/ui.out /tmp/uiv.out
ia=$(json_get "$(xprobectl uhook add --json --cookie 1 $P uh_add)" id)
ig=$(json_get "$(xprobectl uhook add --json --cookie 6 --returns $P uh_args6)" id)
[ -n "$ia" ] && [ -n "$ig" ] || fail "uhook add (i): $(xprobectl uhook list $P)"
assert_eq "(i) the view's hook on __x64_sys_ni_syscall is an int3" int3 \
	"$(xprobectl hook list $P | awk '/__x64_sys_ni_syscall/ { print $8 }')"
kill -HUP $P
wait_for /tmp/ui.out '^ok calls\|^BAD' "uhtarget (i) did not finish its rounds" 6000
grep -q BAD /tmp/ui.out && fail "uhtarget (i) computed a wrong result: $(grep BAD /tmp/ui.out)"
assert_eq "(i) uh_add: events listed" $((2 * N)) "$(hits $ia)"
assert_eq "(i) uh_args6: events and returns listed" "$((2 * N)) $((2 * N))" \
	"$(hits $ig) $(rets $ig)"
kill -INT $E
wait $E
a1=$(grep '^cookie 1 ' /tmp/uiv.out)
a6=$(grep '^cookie 6 ' /tmp/uiv.out)
assert_eq "(i) uh_add: events in BPF, each at the function" "$((2 * N)) 0" \
	"$(field "$a1" count) $(field "$a1" bad)"
assert_eq "(i) uh_args6: events in BPF, registers as at entry" "$((2 * N)) 0" \
	"$(field "$a6" count) $(field "$a6" bad)"
assert_eq "(i) uh_args6: returns in BPF, each to the call site with 21" "$((2 * N)) 0" \
	"$(field "$a6" rcount) $(field "$a6" rbad)"
kill $P
wait $P
assert_eq "uhtarget's exit (i)" 0 $?
# Twelve threads at once through the trap (each hit's handler runs as the
# syscall itself, xp_uevent_trapped(): nothing to claim, so no share to
# run out of): every call and every return fired. (The first fix handed
# each trapped call to a late work, a process's share 8: 1651 of 12000
# calls were lost here, counted.)
M=$(scaled 1000 10)
uhtarget -t 12 -n $M -g > /tmp/uj.out 2>&1 &
P=$!
wait_for /tmp/uj.out '^ready' "uhtarget -t 12 (i) did not start"
xprobectl view add $P > /dev/null || fail "view add (i, 12 threads)"
ja=$(json_get "$(xprobectl uhook add --json $P uh_add)" id)
jg=$(json_get "$(xprobectl uhook add --json --returns $P uh_args6)" id)
[ -n "$ja" ] && [ -n "$jg" ] || fail "uhook add (i, 12 threads): $(xprobectl uhook list $P)"
kill -HUP $P
wait_for /tmp/uj.out '^ok calls\|^BAD' "uhtarget -t 12 (i) did not finish its rounds" 6000
grep -q BAD /tmp/uj.out && fail "uhtarget -t 12 (i) computed a wrong result: $(grep BAD /tmp/uj.out)"
xprobectl uhook list --json $P > /tmp/uj.json || fail "uhook list --json (i)"
q() { jsonq /tmp/uj.json "[id=$1].$2"; }
assert_eq "(i) 12 threads: uh_add's calls fired, none missed" "$((12 * M)) 0" \
	"$(q $ja hits) $(q $ja hits_missed)"
assert_eq "(i) 12 threads: uh_args6's calls and returns fired, none missed" \
	"$((12 * M)) $((12 * M)) 0 0" \
	"$(q $jg hits) $(q $jg return_hits) $(q $jg hits_missed) $(q $jg returns_missed)"
kill $P
wait $P
NL=$(scaled 20000 100)
for mode in records events; do
	opt=; [ $mode = events ] && opt=-T
	xprobectl trace $opt --json -f 'nl_*' -- nestloop $NL > /tmp/ni.json 2> /tmp/ni.err ||
		fail "trace $opt -- nestloop (i): $(tail -n 3 /tmp/ni.err)"
	for f in nl_outer nl_mid nl_leaf; do
		assert_eq "(i) trace with $mode: $f calls" $NL "$(fn /tmp/ni.json $f calls)"
	done
done
unload_module
load_module
# (j) With the module as usual again: events the module gives up are
# counted, never silently dropped:
# manysites calls ms_leaf from 4096 call sites, more return addresses than
# a process's return thunks stand for (2048): past them a call's entry
# fires but its return cannot (xprobes_uhook_lost, XPROBES_LOST_RETURN).
# trace says so per function and in its counters, and every call is
# either counted or lost (before: about half the calls missing, silently).
xprobectl trace -T --json -f ms_leaf -- manysites 2 > /tmp/ms.json 2> /tmp/ms.err ||
	fail "trace -T -- manysites (j): $(tail -n 3 /tmp/ms.err)"
check_lost_returns /tmp/ms.json /tmp/ms.err ms_leaf 8192 2048 "(j)"
note "ok: $((2 * N)) events per function, registers as at entry; no events without, none from a child; the same through traps; lost events counted"
