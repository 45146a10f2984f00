# Syscall entry and exit in one process's view, the kernel side of
# 'xprobectl metrics' and 'latency': a hook on x64_sys_call sees every syscall
# entry; a return hook (--return) on it lands in do_syscall_64 right after the
# call, where every syscall returns. Both count the traced loop's calls, the
# same untraced loop adds nothing, and the return hook is refused elsewhere.
. /xp/selftests/tests/lib.sh
N=$(scaled 2000)

start_loop /tmp/a.out -e -n $N getppid
A=$LOOP_PID
expect_rc "view add" 0 xprobectl view add $A
in=$(xprobectl hook add $A x64_sys_call) || fail "hook add x64_sys_call"
out=$(xprobectl hook add --return $A x64_sys_call) || fail "hook add --return x64_sys_call"
assert_match "the return hook sits in the dispatcher" '^do_syscall_64\+0x[0-9a-f]+$' "$(hook_col $out 4)"

# Before the loop, the traced process sits in one syscall (it waits for the
# start signal); after it, in another. Every call between returns.
in0=$(hook_col $in 5)
out0=$(hook_col $out 5)
go_loop $A /tmp/a.out
din=$(( $(hook_col $in 5) - in0 ))
dout=$(( $(hook_col $out 5) - out0 ))
note "entries $din, exits $dout for $N getppid calls"
[ $din -ge $N ] && [ $din -le $((N + 20)) ] || fail "entries: $din for $N calls"
[ $dout -ge $N ] && [ $dout -le $((N + 20)) ] || fail "exits: $dout for $N calls"
d=$((din - dout))
[ $d -ge -1 ] && [ $d -le 1 ] || fail "entries and exits differ by $d"
note "ok: entries and exits pair up"

# The same loop untraced: neither count moves.
in1=$(hook_col $in 5)
out1=$(hook_col $out 5)
sysloop -n $N getppid
assert_eq "entries after an untraced loop" $in1 "$(hook_col $in 5)"
assert_eq "exits after an untraced loop" $out1 "$(hook_col $out 5)"

# The traced process sees the int3 at the return site; this shell does not.
addr=$(hook_col $out 3)
assert_eq "traced process sees int3 at the return site" cc "$(peek_byte $A $addr)"
[ "$(peek_byte $$ $addr)" != cc ] || fail "the untraced shell sees the int3"
note "ok: the untraced shell sees the kernel's byte"

# Return hooks exist for the dispatcher only, and take no offset.
expect_rc "return hook elsewhere" 1 xprobectl hook add --return $A __x64_sys_getppid
assert_match "says which" "x64_sys_call" "$OUT"
expect_rc "return hook with offset" 1 xprobectl hook add --return $A x64_sys_call+4
assert_match "says why" "no offset" "$OUT"
# do_syscall_64 itself stays refused (noinstr).
expect_rc "plain hook in do_syscall_64" 1 xprobectl hook add $A do_syscall_64
assert_match "says why" "noinstr" "$OUT"

expect_rc "view del" 0 xprobectl view del $A
end_loop $A /tmp/a.out
assert_eq "no hooks left" 0 "$(status_field hooks)"
