# Syscall entry and exit in one process's view, the kernel side of
# 'xprobectl metrics' and 'latency': a hook on x64_sys_call sees every syscall
# entry; a return hook (--return) on it lands in do_syscall_64 on the call to
# syscall_exit_to_user_mode that follows, where every syscall passes with its
# result in regs->ax: one 5-byte instruction, so a call hook (a jump), not a
# trap, also across a page boundary. Both count the traced loop's calls, the same untraced loop adds
# nothing, a --trap return hook is an int3 on the same call, and the return
# hook is refused elsewhere.
. /xp/selftests/tests/lib.sh
N=$(scaled 2000)

start_loop /tmp/a.out -e -n $N getppid
A=$LOOP_PID
expect_rc "view add" 0 xprobectl view add $A
in=$(xprobectl hook add $A x64_sys_call) || fail "hook add x64_sys_call"
out=$(xprobectl hook add --return $A x64_sys_call) || fail "hook add --return x64_sys_call"
assert_match "the return hook sits in the dispatcher" '^do_syscall_64\+0x[0-9a-f]+$' "$(hook_col $out 4)"
# a direct call to syscall_exit_to_user_mode (e8 rel32), as the untraced shell sees it
addr=$(hook_col $out 3)
assert_eq "the untraced shell sees a call there" e8 "$(peek_byte $$ $addr)"
rel=$(xprobectl peek $$ $addr 5 | awk '{ print $6 $5 $4 $3 }')
to=$(printf '%016x' $(( addr + 5 + ((0x$rel ^ 0x80000000) - 0x80000000) )))
assert_eq "that call goes to syscall_exit_to_user_mode" "$(ksym syscall_exit_to_user_mode)" "$to"
assert_eq "the hook replaces that one 5-byte instruction" 5/1 "$(hook_col $out 9)"
# A call hook (a jump to the hook's entry), also where the call crosses a
# page boundary (6.12.117's does): the jump's last bytes are then written in
# the view's copy of the next page.
assert_eq "the return hook is a call hook" call "$(hook_col $out 8)"
ret_byte=e9
jrel=$(xprobectl peek $A $addr 5 | awk '{ print $6 $5 $4 $3 }')
jto=$(( addr + 5 + ((0x$jrel ^ 0x80000000) - 0x80000000) ))
jentries=$((0x$(awk '$3 == "xp_jentries" { print $1; exit }' /proc/kallsyms)))
[ $jto -ge $jentries ] && [ $jto -lt $((jentries + 65536)) ] ||
	fail "the traced process's jump goes to $(printf %x $jto), not to a hook entry"
if [ $(( addr & 4095 )) -gt $((4096 - 5)) ]; then
	next=$(printf '%x' $(( (addr | 4095) + 1 )))
	note "the exit call crosses into the page at $next"
	[ "$(xprobectl peek $A $next 4)" != "$(xprobectl peek $$ $next 4)" ] ||
		fail "the traced process's next page does not carry the jump's tail"
fi

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

# The traced process sees the hook at the exit call; this shell does not.
assert_eq "traced process sees the hook at the exit call" $ret_byte "$(peek_byte $A $addr)"
assert_eq "the untraced shell still sees the call" e8 "$(peek_byte $$ $addr)"

# --trap: an int3 on the same call, in another process, counting the same.
start_loop /tmp/b.out -e -n $N getppid
B=$LOOP_PID
expect_rc "view add B" 0 xprobectl view add $B
tin=$(xprobectl hook add $B x64_sys_call) || fail "hook add x64_sys_call (B)"
tout=$(xprobectl hook add --return --trap $B x64_sys_call) || fail "hook add --return --trap"
assert_eq "a --trap return hook sits on the same call" $addr "$(hook_col $tout 3)"
assert_eq "and is an int3" int3 "$(hook_col $tout 8)"
assert_eq "B sees int3 at the exit call" cc "$(peek_byte $B $addr)"
in0=$(hook_col $tin 5)
out0=$(hook_col $tout 5)
go_loop $B /tmp/b.out
din=$(( $(hook_col $tin 5) - in0 ))
dout=$(( $(hook_col $tout 5) - out0 ))
[ $dout -ge $N ] && [ $dout -le $((N + 20)) ] || fail "trap exits: $dout for $N calls"
d=$((din - dout))
[ $d -ge -1 ] && [ $d -le 1 ] || fail "entries and trap exits differ by $d"
note "ok: $din entries, $dout exits through the int3"
expect_rc "view del B" 0 xprobectl view del $B
end_loop $B /tmp/b.out

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
