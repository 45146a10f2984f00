# User-hook events (issue 19, step 2): every call of a hooked function in
# the traced process fires xprobes_uhook, with the registers its first
# instruction sees, through a system call only the process's view
# intercepts (module/uevent.c). uhtarget's 2 threads call each function N
# times once started, checking every result; uhevents (a raw tracepoint
# program) counts events per cookie and compares each one's registers with
# the function's address, its call site and its arguments.
# (a) Exact counts, in BPF and in uhook list; nothing for a hook without
# events. (b) The registers: ip at the function, the return address at sp
# (the one uh_args6 itself stored), the six arguments, the entry's stack
# alignment. (c) The view's hook on __x64_sys_ni_syscall is listed and
# cannot be deleted. (d) A forked child runs the hooked functions (N rounds)
# and fires nothing. (e) Untraced processes: syscall 420 is ENOSYS.
. /xp/selftests/tests/lib.sh
N=$(scaled 5000 1000)

fn_addr() { awk -v f="$2" '$1 == "fn" && $2 == f { print $3 }' "$1"; }
field() { echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }

uhtarget -t 2 -n $N -g > /tmp/ue.out 2>&1 &
P=$!
wait_for /tmp/ue.out '^ready' "uhtarget did not start"
xprobectl view add $P > /dev/null || fail "view add"
uhevents > /tmp/uev.out 2>&1 &
E=$!
wait_for /tmp/uev.out '^attached' "uhevents did not attach"
j=$(xprobectl uhook add --json --cookie 1 $P uh_add) || fail "uhook add uh_add"
assert_eq "uh_add: events" true "$(json_get "$j" events)"
a=$(json_get "$j" id)
j=$(xprobectl uhook add --json --cookie 6 $P uh_args6) || fail "uhook add uh_args6"
g=$(json_get "$j" id)
j=$(xprobectl uhook add --json --cookie 2 --no-events $P uh_call) || fail "uhook add uh_call"
assert_eq "uh_call: no events" false "$(json_get "$j" events)"
c=$(json_get "$j" id)

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
hits() { xprobectl uhook list $P | awk -v i=$1 '$1 == i { print $(NF - 1) }'; }
assert_eq "uh_add: events listed" $((2 * N)) "$(hits $a)"
assert_eq "uh_args6: events listed" $((2 * N)) "$(hits $g)"
assert_eq "uh_call: no events listed" - "$(hits $c)"

# (d) the child is in the view (fork is followed), but not the hooked mm
kill -USR1 $P
wait_for /tmp/ue.out '^child' "the forked child did not report" 6000
assert_match "the forked child computed right" "child ok" "$(grep '^child' /tmp/ue.out)"
assert_eq "uh_add: the child fired nothing" $((2 * N)) "$(hits $a)"

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
assert_eq "uh_args6: the word at sp is where it returns" $((ret)) $(($(field "$a6" ret)))
assert_eq "uh_args6: the arguments" "1 2 3 4 5 6" "$(echo "$a6" | sed 's/.* args //')"
assert_eq "sp + 8 is 16-byte aligned at every event (uh_add)" 0 "$(field "$a1" misaligned)"
assert_eq "sp + 8 is 16-byte aligned at every event (uh_args6)" 0 "$(field "$a6" misaligned)"
assert_eq "no events of other hooks" "" "$(grep '^cookie 2 ' /tmp/uev.out)"
assert_eq "no events with other cookies" "other 0" "$(grep '^other' /tmp/uev.out)"

# (e)
assert_eq "syscall 420 outside any view: ENOSYS" ENOSYS "$(uhtarget -s 420)"

kill $P
wait $P
assert_eq "uhtarget's exit" 0 $?
note "ok: $((2 * N)) events per function, registers as at entry; no events without, none from a child"
