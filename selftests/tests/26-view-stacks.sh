# Kernel stacks from a hook's BPF programs (issue 35): bpf_get_stack() in a
# hook's kprobe program (its registers as the context) and in a program on
# the xprobes_hook tracepoint, at a jump hook (the function's first
# instruction: a push), a call hook and an int3 hook of A, against real
# kprobes at the same addresses afterwards (kstacks). A kprobe program's
# stack equals the kprobe's frame for frame (at the push, its first frame:
# see below); the tracepoint program's, from
# the hooked function on, equals it too, and at the push, where an unwind
# from the registers is cut at the hooked function (a kprobe's is too:
# the unwind data at hook + 1 is the next instruction's), it goes on to the
# callers (the jump's frame reads as a call from the hook).
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid
PIN=/sys/fs/bpf/xp_test26s

sysloop -n 0 -i 1000 getppid > /dev/null &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
E=$(entry_off $A $F)
j=$(xprobectl hook add --json --cookie 1 $A $F) || fail "hook add"
jid=$(json_get "$j" id)
wait_jump $jid
off=$((E + 1)) cid=
while [ -z "$cid" ] && [ $off -lt 64 ]; do
	if j=$(xprobectl hook add --json --cookie 2 $A $F+$off 2> /dev/null); then
		if [ "$(json_get "$j" kind)" = call ]; then
			cid=$(json_get "$j" id) coff=$off
		else
			xprobectl hook del $(json_get "$j" id)
		fi
	fi
	off=$((off + 1))
done
[ -n "$cid" ] || fail "no call hook in $F"
toff=$(insn_at $A $F $((coff + 1))) || fail "no instruction after $F+$coff"
tid=$(xprobectl hook add --trap --cookie 3 $A $F+$toff) || fail "hook add --trap"
note "jump $F+$E ($(peek_byte $$ $F+$E)...), call $F+$coff, int3 $F+$toff"

rm -f /tmp/ks.out
kstacks -P $PIN > /tmp/ks.out 2>&1 &
K=$!
wait_for /tmp/ks.out attached "kstacks did not start"
for id in $jid $cid $tid; do
	xprobectl hook prog $id $PIN || fail "hook prog $id"
done
sleep 1
kill -USR1 $K
wait $K
xprobectl view del $A > /dev/null
# The same addresses through kprobes, in the same process, now untraced.
kstacks -P $PIN -p $A -k $F+$E:11 -k $F+$coff:12 -k $F+$toff:13 > /tmp/ks2.out 2>&1 &
K=$!
wait_for /tmp/ks2.out attached "kstacks (kprobes) did not start"
sleep 1
kill -USR1 $K
wait $K
kill $A
wait $A
cat /tmp/ks.out /tmp/ks2.out | grep -v attached

stack() { sed -n "s/^$1: //p" /tmp/ks.out /tmp/ks2.out; }
# from the hooked function's frame on (the tracepoint program's own frames,
# the module's dispatch, are before it)
from_f() { echo "$1" | tr ' ' '\n' | sed -n "/^$F+/,\$p" | tr '\n' ' ' | sed 's/ $//'; }
for c in 1 2 3; do
	[ -n "$(stack $((c + 10)))" ] || fail "no stack from the kprobe $((c + 10))"
done
# At the push, an unwind from the registers reads the return address one
# word too high, a stale word of the caller's frame: where that happens to
# be a text address (left by an earlier call at that depth: hrtimer code,
# seen on 6.12), the kprobe's stack and ours go on differently. Only the
# first frame is the kernel's answer there, for both.
assert_eq "hook 1's kprobe program: the kprobe's first frame" \
	"$(stack 11 | cut -d' ' -f1)" "$(stack 1 | cut -d' ' -f1)"
for c in 2 3; do
	assert_eq "hook $c's kprobe program: the kprobe's stack" "$(stack $((c + 10)))" "$(stack $c)"
done
for c in 2 3; do
	assert_eq "hook $c's tracepoint program, from $F on: the kprobe's stack" \
		"$(stack $((c + 10)))" "$(from_f "$(stack $((c + 32)))")"
done
callers=$(stack 12 | cut -d' ' -f2-)
[ -n "$callers" ] || fail "the call hook's kprobe stack has no callers: $(stack 12)"
assert_eq "the jump's tracepoint program, from $F on: $F, then its callers" \
	"$F+0x$(printf '%x' $((E + 1))) $callers" "$(from_f "$(stack 33)")"
