# (t) Page-table invariants with two views hooking different 2 MiB regions.
# A real CPU keeps a global TLB entry across CR3 writes (TCG does not, so this
# is checked on the tables): when view B hooks region R, view A - made
# earlier, its PMD page copied then - must no longer map R with a global 2 MiB
# leaf, or a CPU that loaded it from A (or from any kernel thread borrowing
# A) runs B's process on the shared, unhooked text. The reverse when B
# unhooks: A gets the global leaf back. Checked with walk (A's and B's PMD
# entries for both regions) and with the module's own invariant checker
# (xprobectl audit --tables), which also runs after every selftest. (u) The
# kernel changes its image mapping itself (CPA): the views follow.
. /xp/selftests/tests/lib.sh
G=$((1 << 8)) PSE=$((1 << 7))
region() { echo $(( 0x$1 >> 21 )); }

# Two hookable functions in different 2 MiB regions of the text.
F=__x64_sys_getppid
fr=$(region "$(ksym $F)")
H=
for cand in $(awk '$2 ~ /^[tT]$/ && $3 ~ /^__x64_sys_[a-z]+$/ { print $1 ":" $3 }' /proc/kallsyms); do
	[ "$(region "${cand%%:*}")" != "$fr" ] || continue
	H=${cand#*:}
	break
done
[ -n "$H" ] || skip "the text has one 2 MiB region"
hr=$(region "$(ksym $H)")
note "$F in region $fr, $H in region $hr"

# pmd_of PID SYMBOL: the PMD entry (hex) PID's tables use for SYMBOL's page;
# level_of: 1 (4 KiB leaf) or 2 (2 MiB leaf).
pmd_of() { set -- $(xprobectl walk "$1" "$2"); echo "$7"; }
level_of() { set -- $(xprobectl walk "$1" "$2"); echo "$2"; }
tables_ok() {
	expect_rc "$1: audit --tables" 0 xprobectl audit --tables
	note "$OUT"
}

start_loop /tmp/a.out -e -n 10 getppid
A=$LOOP_PID
start_loop /tmp/b.out -e -n 10 getppid
B=$LOOP_PID
C=$$
leaf_before=$(pmd_of $C $H)
note "shared PMD entry for $H's region before: $leaf_before (level $(level_of $C $H))"
# With PTI, the user-mode tables (pti_clone_kernel_text) may map the text too,
# global when the CPU has no PCID: the leaf entry for H there, if mapped.
uleaf() { set -- $(xprobectl walk --user "$1" "$2"); [ "$2" = 2 ] && echo "$7"; [ "$2" = 1 ] && echo "$8"; }
user_before=
xprobectl walk --user $C $H > /dev/null 2>&1 && user_before=$(uleaf $C $H)
note "PTI user tables' entry for $H: ${user_before:-none}"

xprobectl view add $A > /dev/null || fail "view add A"
ida=$(xprobectl hook add $A $F) || fail "hook add A $F"
xprobectl view add $B > /dev/null || fail "view add B"
tables_ok "A hooks $F"
idb=$(xprobectl hook add $B $H) || fail "hook add B $H"
tables_ok "A hooks $F, B hooks $H"

# Region hr in A: A does not hook it, so A maps it as the shared tables do,
# and that is non-global now (or a PTE table whose entries are non-global).
if [ "$(level_of $A $H)" = 2 ]; then
	e=$(pmd_of $A $H)
	[ $((0x$e & G)) = 0 ] || fail "A maps B's hooked region $hr with a global 2 MiB leaf ($e)"
	note "ok: A's 2 MiB leaf for B's hooked region is non-global ($e)"
	assert_eq "A's entry for region $hr is the shared one" "$(pmd_of $C $H)" "$e"
fi
# Region fr in B, likewise.
if [ "$(level_of $B $F)" = 2 ]; then
	e=$(pmd_of $B $F)
	[ $((0x$e & G)) = 0 ] || fail "B maps A's hooked region $fr with a global 2 MiB leaf ($e)"
	note "ok: B's 2 MiB leaf for A's hooked region is non-global ($e)"
fi
if [ -n "$user_before" ]; then
	e=$(uleaf $C $H)
	[ $((0x$e & G)) = 0 ] || fail "the PTI user tables map B's hooked region global ($e)"
	note "ok: the PTI user tables' entry for B's hooked region is non-global ($e)"
fi
# Each view's own region is a private PTE table.
assert_eq "A's hooked page is a 4 KiB leaf" 1 "$(level_of $A $F)"
assert_eq "B's hooked page is a 4 KiB leaf" 1 "$(level_of $B $H)"

# B unhooks: the region is global again in A and in the shared tables, as before.
xprobectl hook del $idb || fail "hook del B"
tables_ok "B unhooked"
assert_eq "shared entry for region $hr after B unhooked" "$leaf_before" "$(pmd_of $C $H)"
assert_eq "A's entry for region $hr after B unhooked" "$leaf_before" "$(pmd_of $A $H)"
[ -z "$user_before" ] || assert_eq "PTI user entry after B unhooked" "$user_before" "$(uleaf $C $H)"

# A view made while another hooks a region copies it non-global, and keeps
# it so when the first view goes.
idb=$(xprobectl hook add $B $F) || fail "hook add B $F"
tables_ok "A and B hook $F"
xprobectl view del $A || fail "view del A"
tables_ok "A gone, B hooks $F"
xprobectl view del $B || fail "view del B"
tables_ok "no view"
assert_eq "shared entry for region $hr at the end" "$leaf_before" "$(pmd_of $C $H)"
end_loop $A /tmp/a.out
end_loop $B /tmp/b.out

# (u) The kernel changes its own image mapping: CPA on a page of the image's
# physical range changes its alias there too, and splits the 2 MiB leaf that
# maps it (a set_memory_*() on any BPF JIT, kprobe or module page whose frame
# was freed init memory does). xp_cpa.ko keeps a text page of H's region
# uncached while it is loaded. The views follow the kernel (pgtable.c,
# xp_chain_resync()): A, which hooks F and maps that region as the kernel
# does, through a private table first; B, which hooks H, in its own table.
# They used to end ("the kernel changed its image page tables").
[ -f /xp/xp_cpa.ko ] || skip "no xp_cpa test module"
PCD=$((1 << 4))
pte_of() { set -- $(xprobectl walk "$1" "$2"); [ "$2" = 1 ] && echo "$8"; }
start_loop /tmp/a.out -e -n 10 getppid
A=$LOOP_PID
start_loop /tmp/b.out -e -n 10 getppid
B=$LOOP_PID
xprobectl view add $A > /dev/null && xprobectl view add $B > /dev/null || fail "view add A, B"
ida=$(xprobectl hook add $A $F) && idb=$(xprobectl hook add $B $H) || fail "hook add"
hp=$((0x$(ksym $H) & ~0xfff))
tp=$((hp + 4096))
[ $((tp >> 21)) = $((hp >> 21)) ] || tp=$((hp - 4096))
tp=0x$(printf '%x' $tp)
note "region $hr: the shared tables map it at level $(level_of $C $tp), A at level $(level_of $A $tp); page $tp goes uncached"
insmod /xp/xp_cpa.ko addr=$tp || fail "insmod xp_cpa"
assert_eq "the kernel maps the page with 4 KiB now" 1 "$(level_of $C $tp)"
e=$(pte_of $C $tp)
[ $((0x$e & PCD)) != 0 ] || fail "the kernel's entry for $tp is not uncached: $e"
sleep 0.5	# the sweeper follows the kernel every 200 ms
tables_ok "the kernel split region $hr"
assert_eq "views after the kernel's change" 2 "$(status_field views)"
for v in $A $B; do
	e=$(pte_of $v $tp)
	[ -n "$e" ] && [ $((0x$e & PCD)) != 0 ] || fail "view of $v does not map $tp uncached: ${e:-no 4 KiB entry}"
	assert_eq "view of $v maps $tp to the kernel's frame" "$(xprobectl walk $C $tp | cut -d' ' -f3)" \
		"$(xprobectl walk $v $tp | cut -d' ' -f3)"
done
note "ok: A and B map $tp uncached, as the kernel does"
rmmod xp_cpa || fail "rmmod xp_cpa"
sleep 0.5
tables_ok "the page is write-back again"
for v in $A $B; do
	e=$(pte_of $v $tp)
	[ -n "$e" ] && [ $((0x$e & PCD)) = 0 ] || fail "view of $v still maps $tp uncached: $e"
done
assert_eq "views at the end" 2 "$(status_field views)"
xprobectl view del $A && xprobectl view del $B || fail "view del"
end_loop $A /tmp/a.out
end_loop $B /tmp/b.out
