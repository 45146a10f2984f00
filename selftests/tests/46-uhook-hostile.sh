# User hooks and processes they are not made for, or that work against
# them (issue 36). (a) A 32-bit process, i386 (uh32: 0x40-0x4f are inc/dec
# there, not REX prefixes) and, where the kernel runs x32 programs
# (syscall.x32=y on the command line; make check boots its main suites so),
# x32 (uhx32: x86-64 code, 32-bit pointers): uhook add is refused, saying
# why, before anything is written; the process runs on with its bytes.
# (b) A branch from another function into the bytes a jump would cover
# (uhtarget's uh_fb jumps to uh_fa's second instruction): uhook add on
# uh_fa is refused, naming the branch, and uh_fb keeps computing x + 1
# (uhtarget checks every result); uh_fb itself, whose first bytes nothing
# enters, takes a hook.
. /xp/selftests/tests/lib.sh

# file_addr PID PROGRAM FUNCTION: FUNCTION's address in PID, from its file
# offset (xprobectl's list) and PID's executable mapping of that file
file_addr() {
	local off range perm fo rest
	off=$(xprobectl trace --list-functions -f "$3" -- "$2" | awk -v f="$3" '$2 == f { print $3 }')
	[ -n "$off" ] || return
	while read -r range perm fo rest; do
		case $perm in r-x*)
			printf '0x%x\n' $((0x${range%-*} + off - 0x$fo))
			return ;;
		esac
	done < /proc/$1/maps
}

refused_32() {	# refused_32 PROGRAM WHAT
	local p orig out at
	"/xp/bin/$1" &
	p=$!
	sleep 0.2
	kill -0 $p || fail "$2 did not start"
	at=$(file_addr $p /xp/bin/$1 uh32_fn)
	[ -n "$at" ] || fail "$2: uh32_fn not found in its maps: $(cat /proc/$p/maps)"
	xprobectl view add $p > /dev/null || fail "view add ($2)"
	orig=$(uhtarget -r $p $at 8)
	out=$(xprobectl uhook add $p uh32_fn 2>&1) && fail "uhook add on $2 was not refused: $out"
	assert_match "$2: refused, saying why" "32-bit one \(i386 or x32\)" "$out"
	sleep 0.2
	kill -0 $p || fail "$2 died after the refused add"
	assert_eq "$2: its bytes unchanged" "$orig" "$(uhtarget -r $p $at 8)"
	assert_eq "$2: no user hook listed" "" "$(xprobectl uhook list $p | awk -v p=$p '$2 == p')"
	kill $p
	wait $p 2>/dev/null
}

# (a)
refused_32 uh32 "an i386 process"
if grep -qw 'syscall.x32=y' /proc/cmdline; then
	refused_32 uhx32 "an x32 process"
else
	note "x32 not enabled on this boot (syscall.x32=y): the x32 process is not run"
fi
note "ok: no process that is not an x86-64 one gets a user hook"

# (b)
uhtarget -t 2 > /tmp/uhb.out 2>&1 &
P=$!
wait_for /tmp/uhb.out '^ready' "uhtarget did not start"
xprobectl view add $P > /dev/null || fail "view add (b)"
fa=$(awk '$1 == "fn" && $2 == "uh_fa" { print $3 }' /tmp/uhb.out)
orig=$(uhtarget -r $P $fa 8)
out=$(xprobectl uhook add --no-events $P uh_fa 2>&1) && fail "uhook add uh_fa was not refused: $out"
assert_match "a branch from outside into the covered bytes: refused, naming it" \
	"a branch at uh_fb\+0x3 .*lands at uh_fa\+0x3, inside" "$out"
assert_eq "uh_fa's bytes unchanged" "$orig" "$(uhtarget -r $P $fa 8)"
id=$(xprobectl uhook add --no-events $P uh_fb) || fail "uhook add uh_fb"
sleep 0.5
! grep BAD /tmp/uhb.out || fail "uhtarget computed a wrong result: $(grep BAD /tmp/uhb.out)"
kill -0 $P || fail "uhtarget died: $(cat /tmp/uhb.out)"
xprobectl uhook del $id || fail "uhook del uh_fb"
kill $P
wait $P 2>/dev/null
note "ok: no jump covers bytes another function's branch lands on"
