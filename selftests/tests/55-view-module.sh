# Hooks in module text (module/views/modspace.c). A hook on xp_modfn_hit(), a
# function in the test module xp_modfn that each read of /proc/xp_modfn
# calls once, counts exactly A's reads and none of B's, who reads as often
# at the same time; A executes its private copy of the module page (a jump
# where B has the module's own bytes). Then, with the hook in place:
#  (a) a jump label in the module's text (its static key) flips: A's copy
#      follows, and A's reads take the branch exactly while it is on;
#  (b) an ftrace-based kprobe on the function (tracefs) goes in and out:
#      A's copy carries the ftrace call, and the probe counts A's reads;
#      then a kprobe behind the hook, an int3 that kprobes optimizes into a
#      jump: A's copy carries the int3, then the jump, and the add back;
#      then a BPF fentry program on it, attached and detached 20 times
#      while A reads without pause: it counts A's calls, A's copy carries
#      and loses the trampoline's call each time, nothing calls a freed one;
#  (c) A itself loads a second module (xp_modfn2: the same code, a function
#      of the same name) while its view has private tables for module
#      space: the loader writes the new module and runs its init in A; A
#      reads through it, the plain name is refused as ambiguous, a hook
#      named xp_modfn2:xp_modfn_hit counts exactly,
#      and A unloads it again, which ends that hook;
#  (d) the module is unloaded under its hook: the hook ends (status counts
#      it), the view goes on; loaded again, the function is hooked and
#      counted again;
#  (e) the module's own tracepoint (xp_modfn:xp_modfn_read, one call site,
#      in the module's text) hooked in A's view: A's copy of the module
#      page jumps at the site, the shared text keeps the NOP; the hook
#      counts A's reads, none of B's, and its raw_tp program reads the
#      arguments right; the module cannot be unloaded while the tracepoint
#      is hooked (as with perf or BPF on it); tracefs turns the event on
#      everywhere (the hook goes global, still counts A's only) and off
#      (private again); hook del gives A the shared bytes back;
#  (f) a livepatch of the hooked function (xp_klpmod) goes in and out: A's
#      copy carries its ftrace call, A's reads run the new function (none
#      the old body with the hook), and the old body with its hook after;
#  (g) a module unloaded slowly: xp_stall holds the task unloading xp_modfn2
#      inside vfree(), between vmalloc's unmap of the module's memory and
#      the flush, as a preempted task or a descheduled vCPU is held there,
#      until the checks have run (A's view has its own PTE table for the
#      2 MiB slot through a hook in xp_stall's text, loaded beside): the
#      view keeps those entries until the kernel's flush, as any TLB may,
#      and the checks count the unmap unfinished (status), not late;
#  (h) xprobes itself is unloaded with the hook live, and loaded again: the
#      module's text is the module's own again, for A too;
#  (i) a forced unload of a module whose tracepoint is hooked ends the hook.
# Throughout, the view's tables follow every change the kernel makes in
# module space at once (status: none late), the audit finds every copy
# equal to the shared text outside the hook bytes, and the page-table check
# finds no violation.
. /xp/selftests/tests/lib.sh
[ -f /xp/xp_modfn.ko ] && [ -f /xp/xp_modfn2.ko ] || skip "no xp_modfn test modules"
off=$(status_field module_text_off)
[ -z "$off" ] || fail "module text cannot be hooked here: $off"
rmmod xp_modfn2 2>/dev/null
rmmod xp_modfn 2>/dev/null
insmod /xp/xp_modfn.ko || fail "insmod xp_modfn"
M=/proc/xp_modfn
T=/sys/kernel/tracing
PP=/sys/fs/bpf/xp_test55p PM=/sys/fs/bpf/xp_test55m
rm -rf $PP $PM
trap 'echo 0 > $T/events/xp_modfn/xp_modfn_read/enable 2>/dev/null; rm -rf $PP $PM' EXIT

# calls [FILE]: the module's count of calls so far (and KEYED in $keyed)
calls() { set -- $(cat ${1:-$M}_n); keyed=$2; echo $1; }
# reads N [FILE]: N reads, each calling the module's function once
reads() {
	_i=0
	while [ $_i -lt $1 ]; do read _x < ${2:-$M}; _i=$((_i + 1)); done
}

# A runs what it is told, in turn: /tmp/mgo.K holds "reads N [FILE]" or a
# command (run by a child of A's); A answers in /tmp/mdone.K.
rm -f /tmp/mgo.* /tmp/mdone.* /tmp/mout.* /tmp/mstop
sh -c '. /xp/selftests/tests/lib.sh
	reads() {
		i=0
		while [ $i -lt $1 ] && [ ! -f /tmp/mstop ]; do
			read x < ${2:-/proc/xp_modfn}
			i=$((i + 1))
		done
	}
	k=1
	while :; do
		while [ ! -f /tmp/mgo.$k ]; do sleep 0.05; done
		c=$(cat /tmp/mgo.$k)
		case $c in
		reads*) reads ${c#reads }; r=$? ;;
		*) sh -c "$c" > /tmp/mout.$k 2>&1; r=$? ;;
		esac
		echo $r > /tmp/mdone.$k
		k=$((k + 1))
	done' &
A=$!
K=0
# a_do WHAT: A does WHAT (see above) and returns its status
a_do() {
	K=$((K + 1))
	echo "$1" > /tmp/mgo.$K
	wait_for /tmp/mdone.$K . "A did not finish: $1" 600
	return $(cat /tmp/mdone.$K)
}
# both N: A and B (this shell) read N times at the same time
both() {
	K=$((K + 1))
	echo "reads $1" > /tmp/mgo.$K
	reads $1
	wait_for /tmp/mdone.$K . "A did not finish its reads" 600
}

xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A xp_modfn_hit) || fail "hook add xp_modfn_hit"
loc=$(hook_col $id 4)
addr=$(hook_col $id 3)
note "hook $id at $loc ($addr), $(hook_col $id 8)"
assert_match "hook list names the module" "^xp_modfn:xp_modfn_hit[+]0x" "$loc"
assert_match "--json names the module" '"symbol":"xp_modfn:xp_modfn_hit"' \
	"$(xprobectl hook list --json)"

c0=$(calls)
both 300
c1=$(calls)
assert_eq "the module counted A's and B's calls" $((c0 + 300 + 300)) "$c1"
assert_eq "hits: A's calls, none of B's" 300 "$(hook_col $id 5)"
mine=$(xprobectl peek $A $addr 8)
theirs=$(xprobectl peek $$ $addr 8)
note "A executes $mine"
note "B executes $theirs"
[ "$mine" != "$theirs" ] || fail "A executes the module's own bytes at the hook"
assert_eq "A's first byte is the hook's" "$(armed_byte $id)" "$(echo $mine | awk '{print $2}')"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_match "page tables" " [1-9][0-9]* hooked region.* 0 violation" "$(xprobectl audit --tables)"

# (a) the module's static key: a jump label in its text, behind the hook
hoff=$((${loc#*+}))
cov=$(hook_col $id 9); cov=${cov%/*}
size=$(($(fsize $A xp_modfn:xp_modfn_hit)))
after=xp_modfn:xp_modfn_hit+$((hoff + cov))
len=$((size - hoff - cov))
note "the function is $size bytes; compared: $len bytes behind the hook's $cov"
[ $len -gt 0 ] || fail "no bytes behind the hook"
before_on=$(xprobectl peek $$ $after $len)
echo 1 > $M || fail "static key on"
on_mine=$(xprobectl peek $A $after $len)
on_theirs=$(xprobectl peek $$ $after $len)
[ "$on_theirs" != "$before_on" ] || fail "the static key changed no byte after the hook"
assert_eq "A's copy follows the jump label" "$on_theirs" "$on_mine"
calls > /dev/null; k0=$keyed
a_do "reads 50" || fail "A's reads"
calls > /dev/null
assert_eq "A's reads took the branch while the key was on" $((k0 + 50)) "$keyed"
echo 0 > $M || fail "static key off"
assert_eq "A's copy follows the jump label back" "$before_on" "$(xprobectl peek $A $after $len)"
a_do "reads 50" || fail "A's reads"
calls > /dev/null
assert_eq "no branch taken with the key off" $((k0 + 50)) "$keyed"
assert_eq "hits after (a)" 400 "$(hook_col $id 5)"

# (b) an ftrace-based kprobe on the module's function
reset_tracing
fstart=$(xprobectl peek $A xp_modfn:xp_modfn_hit $hoff)  # the bytes before the hook
echo 'p:xpmod xp_modfn:xp_modfn_hit' > $T/kprobe_events || fail "kprobe on xp_modfn_hit"
echo 1 > $T/events/kprobes/xpmod/enable || fail "enable the kprobe"
f_mine=$(xprobectl peek $A xp_modfn:xp_modfn_hit $hoff)
note "A's function start with the kprobe: $f_mine"
assert_eq "A's copy carries the kprobe's ftrace call" \
	"$(xprobectl peek $$ xp_modfn:xp_modfn_hit $hoff)" "$f_mine"
[ "$f_mine" != "$fstart" ] || fail "the kprobe changed no byte of the function start"
n0=$(awk '$1 == "xpmod" { print $2 }' $T/kprobe_profile)
a_do "reads 30" || fail "A's reads"
n1=$(awk '$1 == "xpmod" { print $2 }' $T/kprobe_profile)
assert_eq "the kprobe saw A's reads" $((n0 + 30)) "$n1"
echo 0 > $T/events/kprobes/xpmod/enable
echo '-:xpmod' >> $T/kprobe_events || fail "remove the kprobe"
assert_eq "A's copy is back" "$fstart" "$(xprobectl peek $A xp_modfn:xp_modfn_hit $hoff)"
assert_eq "hits after (b)" 430 "$(hook_col $id 5)"
# ... and a kprobe behind the hook, on the first of the function's three
# adds (48 83 c0 01, an asm block of the test module's): an int3 at once,
# which kprobes then optimizes into a jump to a detour buffer (where it
# optimizes at all): A's copy carries the int3, then the jump, the probe
# counts A's reads both ways, and A's copy has the add back once it goes.
add=$(xprobectl peek $$ xp_modfn:xp_modfn_hit $size | sed 's/^[^:]*://' | tr -s ' \n' '\n' |
	awk 'NF { b[n++] = $1 } END { for (i = 0; i + 7 < n; i++)
		if (b[i] == "48" && b[i+1] == "83" && b[i+2] == "c0" && b[i+3] == "01" &&
		    b[i+4] == "48" && b[i+5] == "83" && b[i+6] == "c0" && b[i+7] == "02") { print i; exit } }')
[ -n "$add" ] || fail "no block of adds in xp_modfn_hit: $(xprobectl peek $$ xp_modfn:xp_modfn_hit $size)"
echo "p:xpmod2 xp_modfn:xp_modfn_hit+$add" > $T/kprobe_events || fail "kprobe at +$add"
echo 1 > $T/events/kprobes/xpmod2/enable || fail "enable the kprobe on the add"
assert_match "A's copy carries the kprobe's int3 (or already its jump)" '^(cc|e9)$' \
	"$(peek_byte $A xp_modfn:xp_modfn_hit+$add)"
a_do "reads 25" || fail "A's reads"
assert_eq "the kprobe saw A's reads" 25 "$(awk '$1 == "xpmod2" { print $2 }' $T/kprobe_profile)"
if [ "$(cat /proc/sys/debug/kprobes-optimization 2>/dev/null)" = 1 ]; then
	# optimized once the shared text has the jump's opcode (written last)
	i=0 at=xp_modfn_hit+0x$(printf %x $add)
	until grep -q "$at .*OPTIMIZED" /sys/kernel/debug/kprobes/list 2>/dev/null &&
	      [ "$(peek_byte $$ xp_modfn:xp_modfn_hit+$add)" = e9 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "kprobes did not optimize the probe at $at: $(grep xp_modfn /sys/kernel/debug/kprobes/list)"
		sleep 0.1
	done
	note "$(grep "$at" /sys/kernel/debug/kprobes/list)"
	assert_eq "A's copy carries the optimized kprobe's jump" \
		"$(xprobectl peek $$ xp_modfn:xp_modfn_hit+$add 5)" "$(xprobectl peek $A xp_modfn:xp_modfn_hit+$add 5)"
	a_do "reads 25" || fail "A's reads"
	assert_eq "the optimized kprobe saw A's reads" 50 "$(awk '$1 == "xpmod2" { print $2 }' $T/kprobe_profile)"
else
	note "kprobes does not optimize here: the int3 only"
	a_do "reads 25" || fail "A's reads"
fi
echo 0 > $T/events/kprobes/xpmod2/enable
echo '-:xpmod2' >> $T/kprobe_events || fail "remove the kprobe on the add"
assert_eq "A's copy has the add back" "$(xprobectl peek $$ xp_modfn:xp_modfn_hit+$add 8)" \
	"$(xprobectl peek $A xp_modfn:xp_modfn_hit+$add 8)"
assert_eq "the add is the module's own again" "48 83 c0 01 48 83 c0 02" \
	"$(xprobectl peek $$ xp_modfn:xp_modfn_hit+$add 8 | sed 's/^[^:]*: //')"
assert_eq "hits after (b) and the kprobe on the add" 480 "$(hook_col $id 5)"

# ... and a BPF fentry program on it (a trampoline the kernel writes a call
# to at the function's ftrace site, and frees when detached), attached and
# detached over and over while A reads without pause: its rounds count A's
# calls, A's copy carries each call and loses it, A never calls a freed
# trampoline, and the hook counts every call the module counted
# (fentry needs the module's BTF: Debian's 6.1 headers have no vmlinux to
# build it against, so the test module has none there)
if [ ! -e /sys/kernel/btf/xp_modfn ]; then
	note "no BTF for xp_modfn on this kernel: no fentry on it"
else
	R=$(scaled 20)
	h0=$(hook_col $id 5)
	c0=$(calls)
	K=$((K + 1))
	echo "reads 1000000" > /tmp/mgo.$K
	fentryloop -p $A -n $R -m 30 -f xp_modfn_hit > /tmp/mfl.out 2>&1
	fl=$?
	touch /tmp/mstop
	wait_for /tmp/mdone.$K . "A did not stop its reads" 600
	rm -f /tmp/mstop
	[ $fl = 0 ] || fail "fentryloop on xp_modfn_hit: $(tail -n 3 /tmp/mfl.out)"
	rounds=$(awk '$2 > 0' /tmp/mfl.out | wc -l)
	note "fentry on the module's function counted A in $rounds of $R rounds ($(awk '{ n += $2 } END { print n }' /tmp/mfl.out) calls)"
	[ "$rounds" -ge $((R * 9 / 10)) ] || fail "fentry missed A's calls in $((R - rounds)) rounds"
	assert_eq "the hook counted every call A made meanwhile" $(($(calls) - c0)) $(($(hook_col $id 5) - h0))
	assert_eq "A's copy is back at the function's start" "$fstart" "$(xprobectl peek $A xp_modfn:xp_modfn_hit $hoff)"
fi
hits_b=$(hook_col $id 5)

# (c) A loads a second module, reads through it, hooked, and unloads it
a_do "insmod /xp/xp_modfn2.ko" || fail "A's insmod xp_modfn2: $(cat /tmp/mout.$K)"
m2=$(awk '$1 == "xp_modfn2" { print $6 }' /proc/modules)
note "xp_modfn2 loaded by A at $m2"
refused_with "a name two modules have" 1 "in several modules: name one, as xp_modfn2?:xp_modfn_hit" \
	xprobectl hook add $A xp_modfn_hit
id2=$(xprobectl hook add $A xp_modfn2:xp_modfn_hit) || fail "hook add xp_modfn2:xp_modfn_hit"
assert_match "the second hook is in xp_modfn2" "^xp_modfn2:xp_modfn_hit[+]0x" "$(hook_col $id2 4)"
[ "$(hook_col $id2 3)" != "$addr" ] || fail "xp_modfn2:xp_modfn_hit resolved to xp_modfn's"
d0=$(calls /proc/xp_modfn2)
a_do "reads 40 /proc/xp_modfn2" || fail "A's reads of xp_modfn2"
reads 40 /proc/xp_modfn2
assert_eq "xp_modfn2 counted A's and B's calls" $((d0 + 80)) "$(calls /proc/xp_modfn2)"
assert_eq "hits in xp_modfn2: A's calls" 40 "$(hook_col $id2 5)"
assert_eq "hits in xp_modfn unchanged" $hits_b "$(hook_col $id 5)"
ended=$(status_field module_hooks_ended)
a_do "rmmod xp_modfn2" || fail "A's rmmod xp_modfn2: $(cat /tmp/mout.$K)"
[ -z "$(hook_col $id2 1)" ] || fail "hook $id2 outlived its module"
assert_eq "one hook ended with xp_modfn2" $((ended + 1)) "$(status_field module_hooks_ended)"
row=$(xprobectl hook list $A | awk -v id=$id2 '$1 == id && /[(]ended: /')
note "the list: $row"
assert_match "the list keeps it, ended, with its hits and why" \
	" 40 +[(]ended: module xp_modfn2 was unloaded[)]" "$row"
assert_match "--json too" '"state":"ended","reason":"module xp_modfn2 was unloaded"' \
	"$(xprobectl hook list --json)"
both 20
assert_eq "hits after (c)" $((hits_b + 20)) "$(hook_col $id 5)"
assert_match "audit after (c)" "^0 private page" "$(xprobectl audit)"
assert_match "page tables after (c)" " 0 violation" "$(xprobectl audit --tables)"

# (d) the module goes under its hook, comes back, is hooked again
rmmod xp_modfn || fail "rmmod xp_modfn under its hook"
[ -z "$(hook_col $id 1)" ] || fail "hook $id outlived its module"
assert_eq "the hook ended with xp_modfn" $((ended + 2)) "$(status_field module_hooks_ended)"
assert_eq "the view goes on" 1 "$(status_field views)"
refused_with "a hook in an unloaded module" 1 "unknown kernel function" \
	xprobectl hook add $A xp_modfn:xp_modfn_hit
insmod /xp/xp_modfn.ko || fail "insmod xp_modfn again"
id=$(xprobectl hook add $A xp_modfn_hit) || fail "hook add after the reload"
addr=$(hook_col $id 3)
both 25
assert_eq "hits after the reload" 25 "$(hook_col $id 5)"
refused_with "data in a module" 1 "not a function" xprobectl hook add $A xp_modfn:calls
refused_with "xprobes' own text" 1 "xprobes' own text" xprobectl hook add $A xprobes:xp_hook_add

# (e) the module's own tracepoint, on in A's view only
tp_json() { xprobectl hook list --json | tr '{' '\n' | grep "\"id\":$1,"; }
is_global() { tp_json $1 | grep -q '"global":true' && echo global || echo private; }
count_at() {
	bpftool -j map dump pinned $PM/counts > /tmp/m55-map.json || fail "bpftool map dump"
	jsonq /tmp/m55-map.json "[$1].formatted.value"
}
bpftool prog loadall /xp/tbpf/tpcount.bpf.o $PP pinmaps $PM || fail "bpftool loadall"
tid=$(xprobectl hook add $A tracepoint:xp_modfn:xp_modfn_read) ||
	fail "hook add the module's tracepoint: $tid"
site=$(hook_col $tid 3)
note "tracepoint hook $tid: $(hook_col $tid 4), $(json_get "$(tp_json $tid)" sites) site(s), at $site"
set -- $(awk '$1 == "xp_modfn" { print $6, $2 }' /proc/modules)
[ $((site - $1)) -ge 0 ] && [ $((site - $1)) -lt $2 ] ||
	fail "the site $site is not in xp_modfn ($1, $2 bytes)"
assert_match "A's copy of the module page jumps at the site" '^(eb|e9)$' "$(peek_byte $A $site)"
assert_match "the shared text keeps the NOP" '^(66|0f)$' "$(peek_byte $$ $site)"
xprobectl hook prog $tid $PP/raw_modfn || fail "hook prog raw_modfn"
both 35
assert_eq "the hook counted A's reads, none of B's" 35 "$(hook_col $tid 5)"
assert_eq "its raw_tp program read A's tgid and a growing count, each time" "35 0" \
	"$(count_at 10) $(count_at 11)"
refused_with "rmmod of a module whose tracepoint is hooked" 1 \
	"in use|Resource temporarily unavailable" rmmod xp_modfn
# tracefs turns the event on everywhere: the hook goes global, still A's
# (and the tracepoint's inline static call in the module's text goes from
# our probe alone to the kernel's iterator: A's copy follows, or tracefs
# would not see A's events, and the audit would find the old call)
E=$T/events/xp_modfn/xp_modfn_read/enable
echo > $T/trace
echo 1 > $E || fail "enable the module's event"
assert_eq "with tracefs on it, the hook is global" global "$(is_global $tid)"
both 15
assert_eq "global, the hook counted A's reads only" 50 "$(hook_col $tid 5)"
assert_eq "tracefs saw A's reads" 15 "$(grep -c "xp_modfn_read: tgid=$A " $T/trace)"
assert_match "audit while global" "^0 private page" "$(xprobectl audit)"
echo 0 > $E
wait_eq private 100 0.05 "the hook private again once tracefs let go" is_global $tid
assert_match "A's copy jumps again" '^(eb|e9)$' "$(peek_byte $A $site)"
both 10
assert_eq "private again, the hook counted A's reads" 60 "$(hook_col $tid 5)"
assert_eq "the program saw them all, right" "60 0" "$(count_at 10) $(count_at 11)"
assert_match "audit with the tracepoint hook" "^0 private page" "$(xprobectl audit)"
xprobectl hook del $tid || fail "hook del of the tracepoint hook"
assert_match "the shared bytes back in A's copy" '^(66|0f)$' "$(peek_byte $A $site)"
both 5
assert_eq "the function hook counted all along" 90 "$(hook_col $id 5)"

# (f) a livepatch of the hooked module function
L=/sys/kernel/livepatch/xp_klpmod
if [ ! -f /xp/xp_klpmod.ko ]; then
	note "no livepatch test module: no livepatch of the module's function"
else
	hoff=$(($(hook_col $id 4 | sed 's/.*+//')))
	f0=$(xprobectl peek $A xp_modfn:xp_modfn_hit $hoff)
	h0=$(hook_col $id 5)
	c0=$(calls)
	insmod /xp/xp_klpmod.ko || fail "insmod the livepatch of xp_modfn_hit"
	i=0; while [ "$(cat $L/transition 2>/dev/null)" != 0 ]; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "the livepatch's transition did not end"; sleep 0.2
	done
	f1=$(xprobectl peek $A xp_modfn:xp_modfn_hit $hoff)
	note "A's copy before the hook: $f0 unpatched, $f1 patched"
	assert_eq "A's copy carries the livepatch's ftrace call" \
		"$(xprobectl peek $$ xp_modfn:xp_modfn_hit $hoff)" "$f1"
	[ "$f1" != "$f0" ] || fail "the livepatch changed no byte before the hook"
	both 20
	assert_eq "the new function ran for A's reads and B's" 40 \
		"$(cat /sys/module/xp_klpmod/parameters/calls)"
	assert_eq "the old body (and the hook in it) ran for nobody" "$h0 $c0" \
		"$(hook_col $id 5) $(calls)"
	echo 0 > $L/enabled || fail "disable the livepatch"
	i=0; while [ -d $L ]; do
		i=$((i + 1)); [ $i -lt 600 ] || fail "the livepatch did not go away"; sleep 0.2
	done
	rmmod xp_klpmod || fail "rmmod xp_klpmod"
	assert_eq "A's copy is back before the hook" "$f0" "$(xprobectl peek $A xp_modfn:xp_modfn_hit $hoff)"
	both 10
	assert_eq "the old body runs again, the hook counts A's" $((h0 + 10)) "$(hook_col $id 5)"
	assert_match "audit after the livepatch" "^0 private page" "$(xprobectl audit)"
fi

# (g) a module's memory freed by a task held between the unmap and the flush
insmod /xp/xp_modfn2.ko || fail "insmod xp_modfn2 for (g)"
insmod /xp/xp_stall.ko || fail "insmod xp_stall"
S=/sys/module/xp_stall/parameters
t2=$(cat /sys/module/xp_modfn2/sections/.text)
ts=$(cat /sys/module/xp_stall/sections/.text)
if [ $((t2 >> 21)) != $((ts >> 21)) ]; then
	# loaded one after the other, they share a 2 MiB slot unless the
	# first ends at the slot's end (a few pages in 512)
	note "(g) not run: xp_modfn2 ($t2) and xp_stall ($ts) are in different 2 MiB slots"
	rmmod xp_modfn2 || fail "rmmod xp_modfn2"
else
	# A's view gets its own PTE table for the slot: a hook in xp_stall's text
	sid=$(xprobectl hook add $A xp_stall:hold_then_call) || fail "hook add in xp_stall: $sid"
	late0=$(status_field module_space_late)
	unf0=$(status_field module_space_unfinished)
	sh -c "echo \$\$ > $S/pid; exec rmmod xp_modfn2" &
	R=$!
	i=0; until [ "$(cat $S/stalling)" = 1 ]; do
		i=$((i + 1)); [ $i -lt 500 ] || fail "xp_stall did not hold the unload"; sleep 0.02
	done
	# held: the checks find the kernel's unmap unfinished (not late)
	i=0
	while checked=$(xprobectl audit --tables)
	      [ "$(status_field module_space_unfinished)" -le "$unf0" ]; do
		i=$((i + 1)); [ $i -lt 20 ] || fail "no check saw the held unmap unfinished"
	done
	note "(g) xp_modfn2 at $t2, xp_stall at $ts; the checks saw the held unmap unfinished" \
		"$(($(status_field module_space_unfinished) - unf0)) time(s)"
	assert_eq "still held" 1 "$(cat $S/stalling)"
	echo 1 > $S/release
	wait $R || fail "rmmod xp_modfn2 under the hold"
	assert_eq "xp_stall held the unload once" 1 "$(cat $S/stalled)"
	assert_match "page tables with the unload held" " 0 violation" "$checked"
	assert_eq "the held unmap was not counted late" "$late0" "$(status_field module_space_late)"
	xprobectl hook del $sid || fail "hook del in xp_stall"
fi
rmmod xp_stall || fail "rmmod xp_stall"

late=$(status_field module_space_late)
note "module space: $(status_field module_space_syncs) changes followed at once, $late late"
assert_none_late
assert_match "audit at the end" "^0 private page" "$(xprobectl audit)"
assert_match "page tables at the end" " 0 violation" "$(xprobectl audit --tables)"

# (h) rmmod xprobes under a live hook in module text
unload_module
load_module
assert_eq "A executes the module's own bytes again" "$(xprobectl peek $$ $addr 8)" \
	"$(xprobectl peek $A $addr 8)"
c0=$(calls)
both 10
assert_eq "the module counted both after xprobes went" $((c0 + 20)) "$(calls)"
kill $A 2>/dev/null
wait $A 2>/dev/null
rmmod xp_modfn || fail "rmmod xp_modfn at the end"
assert_eq "no view left" 0 "$(status_field views)"

# (i) a forced unload (rmmod -f: Debian's kernels have MODULE_FORCE_UNLOAD)
# of a module whose tracepoint a view hooks, past the reference the hook
# holds: the hook ends as a function hook does (listed as ended, counted),
# before the kernel's own notifiers would find our probe on the tracepoint
# (a WARN) and the module's text is freed under the view's copy. Not on the
# debug kernel: the taint of a forced unload turns lockdep off for the
# tests after.
if [ -n "$DEBUG_KERNEL" ]; then
	note "debug kernel: no forced unload"
else
	insmod /xp/xp_modfn.ko || fail "insmod xp_modfn for (i)"
	sleep 1000 &
	C=$!
	xprobectl view add $C > /dev/null || fail "view add C"
	tid=$(xprobectl hook add $C tracepoint:xp_modfn:xp_modfn_read) || fail "hook add for (i): $tid"
	ended=$(status_field module_hooks_ended)
	rmmod -f xp_modfn || fail "rmmod -f xp_modfn under the tracepoint hook"
	grep -q '^xp_modfn ' /proc/modules && fail "xp_modfn is still loaded after rmmod -f"
	assert_eq "the tracepoint hook ended with its module" $((ended + 1)) \
		"$(status_field module_hooks_ended)"
	assert_match "listed as ended, with why" "[(]ended: module xp_modfn was unloaded[)]" \
		"$(xprobectl hook list $C | awk -v id=$tid '$1 == id')"
	assert_match "audit after the forced unload" "^0 private page" "$(xprobectl audit)"
	kill $C
	wait $C 2>/dev/null
	wait_views 0
fi
