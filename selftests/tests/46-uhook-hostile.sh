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
# (c) Another tool's uprobe inside a live jump (uprobe_events, on uh_add's
# second instruction): its install is refused while the hook lives (the
# kernel log says whose jump it is), the process keeps its jump and its
# results; after uhook del the same uprobe goes in and counts hits.
# (d) A thread stopped in a signal handler whose saved context is inside
# the bytes the jump covers (uhtarget -S: uh_sig faults on its second
# instruction): after uhook add, with events and without, its sigreturn
# resumes in the trampoline's copy of that instruction and uh_sig returns
# the right value.
# (e) A process whose program is on a FUSE mount that stops answering
# (fusehold, with direct I/O: every read of the file reaches the server):
# uhook add, which reads the function from the file, waits, killably, and
# meanwhile every other xprobes operation goes on: status, and a user hook
# on another process. Killed, the add leaves nothing behind; once the
# mount answers again the same add goes through.
# (f) A process whose mmap lock stays held (another process reads, through
# /proc/PID/mem, a page of its mapping of a file on a FUSE mount that
# stopped answering: the fault waits with the lock held): an add that maps
# the first trampoline area, an add that registers its uprobe (which takes
# the lock for writing) and a del that restores the text wait, and
# meanwhile status and a user hook on another process (of another file:
# uprobes' registration locks every process that maps the file) go on;
# the waiting adds end when killed and leave nothing; once the lock is
# free the del finishes and the text is the file's again. Then its view
# goes while the lock is held: view del returns, and P gets its text back
# once the lock is free.
# XP_46_PARTS=b,d runs only those parts.
. /xp/selftests/tests/lib.sh
part() { [ -z "${XP_46_PARTS:-}" ] || case ",$XP_46_PARTS," in *",$1,"*) ;; *) false ;; esac; }
# (e) and (f) need FUSE: built in on 6.12, a module on 6.1
grep -qw fuse /proc/filesystems || insmod /xp/kmod/fuse.ko 2>/dev/null

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
part a && {
refused_32 uh32 "an i386 process"
if grep -qw 'syscall.x32=y' /proc/cmdline; then
	refused_32 uhx32 "an x32 process"
else
	note "x32 not enabled on this boot (syscall.x32=y): the x32 process is not run"
fi
note "ok: no process that is not an x86-64 one gets a user hook"
}

# (b)
part b && {
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
}

# (c)
part c && {
T=/sys/kernel/tracing
uhtarget -t 2 > /tmp/uhc.out 2>&1 &
P=$!
wait_for /tmp/uhc.out '^ready' "uhtarget did not start"
xprobectl view add $P > /dev/null || fail "view add (c)"
off=$(xprobectl trace --list-functions -f uh_add -- /xp/bin/uhtarget | awk '$2 == "uh_add" { print $3 }')
[ -n "$off" ] || fail "uh_add's file offset"
j=$(xprobectl uhook add --json --no-events $P uh_add) || fail "uhook add uh_add"
id=$(json_get "$j" id)
site=$(($(json_get "$j" address)))
jmp=$(uhtarget -r $P $site 12)
echo "p:xpt/inside /xp/bin/uhtarget:$(printf '0x%x' $((off + 1)))" >> $T/uprobe_events ||
	fail "uprobe_events took no probe definition"
dmesg -c > /dev/null
if echo 1 > $T/events/xpt/inside/enable 2>/dev/null; then
	note "the other uprobe's registration went through (with the process left out)"
	echo 0 > $T/events/xpt/inside/enable
fi
assert_eq "another uprobe inside the cover: the jump and its bytes unchanged" "$jmp" \
	"$(uhtarget -r $P $site 12)"
assert_match "... and the kernel log says whose jump it is" "refused a uprobe at .*user hook $id" \
	"$(dmesg)"
! dmesg | grep -q "failed to unregister" || fail "uprobes leaked the refused uprobe: $(dmesg | tail -n 3)"
sleep 0.3
! grep BAD /tmp/uhc.out || fail "uhtarget computed a wrong result: $(grep BAD /tmp/uhc.out)"
kill -0 $P || fail "uhtarget died: $(cat /tmp/uhc.out)"
xprobectl uhook del $id || fail "uhook del (c)"
echo 1 > $T/events/xpt/inside/enable || fail "the other uprobe is refused after uhook del"
sleep 0.3
echo 0 > $T/events/xpt/inside/enable
hits=$(awk '$2 == "inside" { print $3 }' $T/uprobe_profile)
[ "${hits:-0}" -gt 0 ] || fail "the other uprobe counted no hits once it went in: $(cat $T/uprobe_profile)"
echo "-:xpt/inside" >> $T/uprobe_events
! grep BAD /tmp/uhc.out || fail "uhtarget computed a wrong result: $(grep BAD /tmp/uhc.out)"
kill $P
wait $P 2>/dev/null
note "ok: another tool's uprobe never writes inside a live jump ($hits hits once it was gone)"
}

# (d)
part d && {
for ev in --no-events ""; do
	uhtarget -S > /tmp/uhd.out 2>&1 &
	P=$!
	wait_for /tmp/uhd.out '^in-handler' "uhtarget -S did not fault into its handler"
	xprobectl view add $P > /dev/null || fail "view add (d)"
	j=$(xprobectl uhook add --json $ev $P uh_sig) || fail "uhook add uh_sig $ev"
	assert_eq "uh_sig: a jump over two instructions" "jump 2" \
		"$(json_get "$j" kind) $(json_get "$j" instructions)"
	kill -HUP $P
	wait_for /tmp/uhd.out '^\(BAD \)\?sig ' "uh_sig did not return after its handler ($ev)"
	assert_eq "a sigreturn into the covered bytes ${ev:-(events)}: uh_sig(41) returns 42" \
		"sig ok 42" "$(grep '^\(BAD \)\?sig ' /tmp/uhd.out)"
	kill $P
	wait $P 2>/dev/null
done
note "ok: a signal frame saved inside the cover returns through the trampoline"
}

# (e)
if ! part e; then
	:
elif grep -qw fuse /proc/filesystems; then
mkdir -p /tmp/fh
fusehold /tmp/fh /xp/bin/uhtarget > /tmp/fh.out 2>&1 &
F=$!
wait_for /tmp/fh.out '^mounted' "fusehold did not mount"
/tmp/fh/prog -t 2 > /tmp/uhe.out 2>&1 &
P=$!
wait_for /tmp/uhe.out '^ready' "the program on the FUSE mount did not start"
xprobectl view add $P > /dev/null || fail "view add (e)"
ea=$(awk '$1 == "fn" && $2 == "uh_add" { print $3 }' /tmp/uhe.out)
es=$(awk '$1 == "fn" && $2 == "uh_add" { print $4 }' /tmp/uhe.out)
kill -USR1 $F	# the mount stops answering
wait_for /tmp/fh.out '^stopped 1$' "fusehold did not stop answering"
# xpcycle speaks netlink itself: xprobectl would read the file first
xpcycle uhook $P $ea $es 1 > /tmp/uhe.add 2>&1 &
X=$!
wait_for /tmp/fh.out '^waits 1$' "the add did not read from the stopped mount: $(cat /tmp/uhe.add)"
kill -0 $X 2>/dev/null || fail "the add did not wait for the file: $(cat /tmp/uhe.add)"
timeout 20 xprobectl status > /dev/null ||
	fail "xprobectl status waited for a FUSE mount a traced process runs from"
uhtarget -t 1 > /tmp/uhe2.out 2>&1 &
Q=$!
wait_for /tmp/uhe2.out '^ready' "uhtarget did not start (e)"
xprobectl view add $Q > /dev/null || fail "view add (e, the other process)"
qid=$(timeout 20 xprobectl uhook add --no-events $Q uh_add) ||
	fail "a user hook on another process waited for the FUSE mount"
xprobectl uhook del $qid || fail "uhook del (e, the other process)"
kill $Q
wait $Q 2>/dev/null
kill -KILL $X
wait_gone $X 100 0.05 "the add waiting on the FUSE mount could not be killed"
assert_eq "the killed add left no user hook" "" "$(xprobectl uhook list $P | awk -v p=$P '$2 == p')"
kill -USR2 $F	# it answers again
out=$(xpcycle uhook $P $ea $es 1 2>&1) || fail "uhook add once the mount answers: $out"
sleep 0.3
! grep BAD /tmp/uhe.out || fail "the program on the FUSE mount computed a wrong result"
kill $P
wait $P 2>/dev/null
kill $F
wait $F 2>/dev/null
note "ok: a FUSE mount that stops answering holds up only the add that reads from it"
else
	note "no FUSE in this kernel: (e) not run"
fi

# (f)
killed() {	# killed PID WHAT: PID ends within 5 s of SIGKILL
	local i=0 t
	kill -KILL $1 2>/dev/null
	while kill -0 $1 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then	# where it waits, and what holds P's lock
			for t in /proc/$1/task/*; do
				note "$2: task ${t##*/} ($(cat $t/wchan 2>/dev/null)):"
				sed 's/^/#   /' $t/stack 2>/dev/null
			done
			for t in /proc/[0-9]*/task/*; do
				grep -q "mmap\|uprobe\|xp_\|fuse" $t/stack 2>/dev/null || continue
				note "task $t ($(cat $t/comm 2>/dev/null)):"
				sed 's/^/#   /' $t/stack
			done
			fail "$2 could not be killed"
		fi
		sleep 0.05
	done
	wait $1 2>/dev/null
}
# within WHAT CMD...: CMD ends within 20 s. Polled: a task stuck on a kernel
# lock is beyond the reach of timeout's signals.
within() {
	local what=$1 pid
	shift
	"$@" > /tmp/within.out 2>&1 &
	pid=$!
	wait_gone $pid 400 0.05 "$what"
	wait $pid || fail "$what: $(cat /tmp/within.out)"
}
others_go() {	# others_go WHAT: what does not concern P answers meanwhile
	within "xprobectl status waited ($1)" xprobectl status
	within "a user hook on another process waited ($1)" xprobectl uhook add --no-events $Q uh_add
	within "uhook del on another process waited ($1)" xprobectl uhook del "$(cat /tmp/within.out)"
}
# hold PAGE: a reader of P's FUSE mapping at PAGE (never read yet) holds P's
# mmap lock: once fusehold sees its request waiting, it holds it for sure
# (hold PAGE PID MAP: the same of PID's mapping at MAP)
holds=0
hold() {
	holds=$((holds + 1))
	kill -USR1 $F
	wait_for /tmp/fh2.out "^stopped $holds\$" "fusehold (f) did not stop answering"
	uhtarget -r ${2:-$P} $((${3:-$maddr} + $1 * 4096)) 8 > /dev/null 2>&1 &
	R=$!
	wait_for /tmp/fh2.out "^waits $holds\$" "a read of P's mapping on the stopped FUSE mount sent no request"
	kill -0 $R 2>/dev/null || fail "a read of P's mapping on the stopped FUSE mount did not wait"
}
release() {
	kill -USR2 $F
	wait $R
}
waits() {	# waits PID WHAT OUT
	sleep 1
	kill -0 $1 2>/dev/null || fail "$2 did not wait for P's mmap lock: $(cat $3)"
}
if ! part f; then
	:
elif grep -qw fuse /proc/filesystems; then
mkdir -p /tmp/fh2
dd if=/dev/zero of=/tmp/fhdata bs=1M count=16 2>/dev/null
fusehold /tmp/fh2 /tmp/fhdata > /tmp/fh2.out 2>&1 &
F=$!
wait_for /tmp/fh2.out '^mounted' "fusehold (f) did not mount"
uhtarget -t 2 -m /tmp/fh2/prog > /tmp/uhf.out 2>&1 &
P=$!
wait_for /tmp/uhf.out '^ready' "uhtarget -m did not start"
maddr=$(awk '$1 == "map" { print $2 }' /tmp/uhf.out)
fa=$(awk '$1 == "fn" && $2 == "uh_add" { print $3 }' /tmp/uhf.out)
# Q runs a copy: uprobes' registration in a file takes the mmap lock of every
# process that maps it, P's too (as any uprobe tool's does)
cp /xp/bin/uhtarget /tmp/uhq
/tmp/uhq -t 1 > /tmp/uhf2.out 2>&1 &
Q=$!
wait_for /tmp/uhf2.out '^ready' "uhtarget (f, the other process) did not start"
xprobectl view add $P > /dev/null || fail "view add (f)"
xprobectl view add $Q > /dev/null || fail "view add (f, the other process)"
orig=$(uhtarget -r $P $fa 8)

# P has no trampoline area yet: the add maps one
hold 0
xprobectl uhook add --no-events $P uh_add > /tmp/uhf.add 2>&1 &
X=$!
waits $X "an add that maps a trampoline area" /tmp/uhf.add
others_go "an add mapping a trampoline area waits for P"
killed $X "an add waiting to map a trampoline area"
release
assert_eq "the killed add left no user hook" "" "$(xprobectl uhook list $P | awk -v p=$P '$2 == p')"
id=$(xprobectl uhook add --no-events $P uh_add) || fail "uhook add once P's lock is free"

# Now an area is there: the next add's wait is uprobes' registration; then a del
hold 2048
xprobectl uhook add --no-events $P uh_one > /tmp/uhf.add 2>&1 &
X=$!
waits $X "an add that registers its uprobe" /tmp/uhf.add
others_go "an add registering its uprobe waits for P"
xprobectl uhook del $id > /tmp/uhf.del 2>&1 &
D=$!
sleep 0.5
others_go "a del restoring P's text waits for P"
killed $X "an add waiting to register its uprobe"
release
wait $D || fail "uhook del once P's lock is free: $(cat /tmp/uhf.del)"
assert_eq "no user hook left on P" "" "$(xprobectl uhook list $P | awk -v p=$P '$2 == p')"
assert_eq "P's text is its file's again" "$orig" "$(uhtarget -r $P $fa 8)"

# The view goes while the lock is held: the command returns, the reaper
# gives P its text back once the lock is free
xprobectl uhook add --no-events $P uh_add > /dev/null || fail "uhook add before view del (f)"
hold 3072
within "view del waited for P's mmap lock" xprobectl view del $P
others_go "the view of a process holding its lock went"
release
wait_text $P $fa 8 "$orig" "P's text was not restored after its view went"
note "ok: P's text is its file's again once its view went and the lock is free"

# S runs P's program and holds its own mmap lock: uprobes' registration on P
# waits for S's lock too (every process mapping the file), past the add's
# own wait for P's. It waits holding dup_mmap_sem, so no process forks
# meanwhile: killwait kills the add, and the shell forks again only after
# the release.
xprobectl view add $P > /dev/null || fail "view add (f, again)"
/xp/bin/uhtarget -t 1 -m /tmp/fh2/prog > /tmp/uhs.out 2>&1 &
S=$!
wait_for /tmp/uhs.out '^ready' "uhtarget (f, the process sharing P's program) did not start"
saddr=$(awk '$1 == "map" { print $2 }' /tmp/uhs.out)
hold 1024 $S $saddr
# (into a file: an add that lives on would hold a pipe open)
killwait 2000 xprobectl uhook add --no-events $P uh_add > /tmp/uhs.kw 2>&1
release
assert_eq "an add waiting in uprobes for another process's lock could be killed" "killed" "$(head -n 1 /tmp/uhs.kw)"
assert_eq "the killed add left no user hook" "" "$(xprobectl uhook list $P | awk -v p=$P '$2 == p')"
# Its worker registers once S lets go, and the reaper takes it out: until
# then an add finds its bytes taken (or its int3 in the text)
i=0
until id=$(xprobectl uhook add --no-events $P uh_add 2> /tmp/uhs.add); do
	i=$((i + 1))
	[ $i -lt 50 ] || fail "uhook add once S's lock is free: $(cat /tmp/uhs.add)"
	sleep 0.1
done
sleep 0.3
xprobectl uhook del $id || fail "uhook del (f, S)"
assert_eq "P's text is its file's again (S)" "$orig" "$(uhtarget -r $P $fa 8)"
sleep 0.3
! grep BAD /tmp/uhf.out /tmp/uhf2.out /tmp/uhs.out || fail "a process computed a wrong result (f)"
kill $P $Q $S
wait $P $Q $S 2>/dev/null
kill $F
wait $F 2>/dev/null
note "ok: a process holding its mmap lock holds up only what waits for that process, and killably"
else
	note "no FUSE in this kernel: (f) not run"
fi
