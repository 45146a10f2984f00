# (a) A traced, B untraced, both make the same system call, whose kernel path
# carries hooks on every instruction of __x64_sys_getppid that no other
# hook's jump covers: each hook counts
# exactly A's calls, and B adds nothing. Threads of A share its view.
. /xp/selftests/tests/lib.sh
N=$(scaled 1000)
F=__x64_sys_getppid

start_loop /tmp/a.out -e -n $N getppid
A=$LOOP_PID
expect_rc "view add" 0 xprobectl view add $A
assert_eq "views in status" 1 "$(status_field views)"

# Hook every instruction boundary xprobes accepts, up to the function's
# return (the function is straight-line: every instruction runs on each call).
ids=""
offs=""
covered=""
off=0
while [ $off -lt 64 ]; do
	boundary=0
	if id=$(xprobectl hook add $A $F+$off 2>/tmp/err); then
		ids="$ids $id"
		offs="$offs $off"
		boundary=1
	elif grep -q "jump covers" /tmp/err; then
		boundary=1	# under the jump of the hook before it
		covered="$covered $off"
	fi
	# the return: a ret, or a jump to the return thunk where the CPU
	# needs one (6.1 on the Haswell model keeps those)
	if [ $boundary = 1 ]; then
		case $(peek_byte $$ $F+$off) in c3|e9) break ;; esac
	fi
	off=$((off + 1))
done
n=$(echo $ids | wc -w)
note "hooked $F at offsets:$offs; under those hooks' jumps:$covered"
# Every instruction to the return is hooked or under a jump that runs it.
[ $((n + $(echo $covered | wc -w))) -ge 8 ] || fail "only $n instructions of $F could be hooked"
g=$(guard_of $A)
[ -n "$g" ] || fail "A's view has jumps over several instructions but no guard"
assert_eq "hooks in status (with the view's guard, $(hook_col $g 4))" $((n + 1)) "$(status_field hooks)"

go_loop $A /tmp/a.out
for id in $ids; do
	assert_eq "hits of hook $id ($(hook_col $id 4))" $N "$(hook_col $id 5)"
	assert_eq "dropped of hook $id" 0 "$(hook_col $id 6)"
done

# B: the same call, no view: the counts do not move.
sysloop -n $N getppid
for id in $ids; do
	assert_eq "hits of hook $id after B" $N "$(hook_col $id 5)"
done
expect_rc "view del" 0 xprobectl view del $A
end_loop $A /tmp/a.out

# Threads share the view: 4 threads x 500 calls on one hook.
start_loop /tmp/t.out -e -n 500 -t 4 getppid
T=$LOOP_PID
expect_rc "view add (threads)" 0 xprobectl view add $T
id=$(xprobectl hook add $T $F) || fail "hook add $F"
assert_match "default offset skips ENDBR and fentry" "$F\+0x$(printf %x "$(entry_off $T $F)")" "$(hook_col $id 4)"
go_loop $T /tmp/t.out
assert_eq "hits from 4 threads" 2000 "$(hook_col $id 5)"
expect_rc "view del (threads)" 0 xprobectl view del $T
end_loop $T /tmp/t.out
assert_eq "no views left" 0 "$(status_field views)"
assert_eq "no hooks left" 0 "$(status_field hooks)"
assert_eq "no memory held" 0 "$(status_field memory_bytes)"
