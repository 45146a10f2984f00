# (c) View structure, from a software walk of the real page tables: exactly
# the hooked page is private in A (and its guard's, which the jump hook
# brings: module/views/guard.c), private leaf entries are non-global and
# read-only-executable, the modules/BPF/fixmap half (PUD[511]) is shared, the
# shared mapping of the hooked region loses its global bit while hooked and
# gets it back afterwards, and after view del A's tables equal B's again.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid
G=$((1 << 8)) RW=$((1 << 1)) P=1

start_loop /tmp/a.out -e -n 10 getppid
A=$LOOP_PID
B=$$
stext=$(ksym _stext)
etext=$(ksym _etext)
pages=$(( (0x$etext - 0x$stext) / 4096 ))
fpage=$(printf '%016x' $(( 0x$(ksym $F) & ~0xfff )))
modtext=$(cat /sys/module/xprobes/sections/.text)
note "text $stext-$etext ($pages pages); $F in page $fpage; module text $modtext"

xprobectl walk $B 0x$stext $pages > /tmp/b0 || fail "walk B"
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A $F) || fail "hook add"
xprobectl walk $A 0x$stext $pages > /tmp/wa || fail "walk A"
xprobectl walk $B 0x$stext $pages > /tmp/wb || fail "walk B"
assert_eq "walk A covers the text" $pages "$(wc -l < /tmp/wa)"

# Columns: addr level phys pgd p4d pud pmd pte
# (compare as strings: awk would read 000069e01000 as a number)
private=$(awk 'NR == FNR { ph[$1] = "x" $3; next } ph[$1] != "x" $3 { print $1 }' /tmp/wb /tmp/wa)
g=$(guard_of $A)
[ -n "$g" ] || fail "A's view has a jump over several instructions but no guard"
gpage=$(printf '%016x' $(( $(xprobectl hook list | awk -v id=$g '$1 == id { print $3 }') & ~0xfff )))
assert_eq "private pages in A (the hook's, the guard's)" \
	"$(printf '%s\n' $fpage $gpage | sort -u)" "$private"
line=$(grep "^$fpage " /tmp/wa)
set -- $line
assert_eq "private page is a 4 KiB leaf" 1 "$2"
pte=0x$8
[ $((pte & G)) = 0 ] || fail "private PTE $8 is global"
[ $((pte & RW)) = 0 ] || fail "private PTE $8 is writable"
[ $((pte & P)) = 1 ] || fail "private PTE $8 is not present"
[ $((pte)) -gt 0 ] || fail "private PTE $8 is not executable (NX set)"
note "ok: private PTE $8 present, read-only, executable, non-global"

# Every 4 KiB entry of A in the hooked 2 MiB region is non-global.
region=$(( 0x$fpage & ~0x1fffff ))
glb=$(awk -v lo=$region '{ print }' /tmp/wa | while read -r a l ph pg p4 pu pm pt; do
	[ $(( 0x$a & ~0x1fffff )) = $region ] || continue
	[ "$l" = 1 ] || { echo "level$l@$a"; continue; }
	[ $(( 0x$pt & G )) = 0 ] || echo "global@$a"
done | head -3)
assert_eq "global or non-4K entries in A's private region" "" "$glb"

# The shared mapping of that region is not global while hooked.
set -- $(grep "^$fpage " /tmp/wb)
if [ "$2" = 2 ]; then shared=0x$7; else shared=0x$8; fi
[ $((shared & G)) = 0 ] || fail "B's mapping of the hooked page ($shared) is still global"
note "ok: B's level-$2 entry for the hooked page is non-global while hooked"
set -- $(grep "^$fpage " /tmp/b0)
if [ "$2" = 2 ]; then before=0x$7; else before=0x$8; fi

# The top-level entry for the image differs (private chain) ...
set -- $(head -n 1 /tmp/wa); a_pgd=$4
set -- $(head -n 1 /tmp/wb); b_pgd=$4
[ "$a_pgd" != "$b_pgd" ] || fail "A's pgd entry for the image is the shared one"
# ... but the module/BPF/fixmap PUD entry (PUD[511]) is the shared one.
set -- $(xprobectl walk $A $modtext); a_mod="$6 $7 $8 $3"
set -- $(xprobectl walk $B $modtext); b_mod="$6 $7 $8 $3"
assert_eq "PUD[511] chain (pud pmd pte phys) for module text" "$b_mod" "$a_mod"

# The out-of-line area exists in A only.
xol=$(xprobectl view list --json | sed -n 's/.*"xol":"\(0x[0-9a-f]*\)".*/\1/p')
[ -n "$xol" ] && [ "$xol" != 0x0 ] || fail "no xol area reported"
set -- $(xprobectl walk $A $xol)
assert_eq "xol mapped in A" 1 "$2"
[ $((0x$8 & G)) = 0 ] || fail "xol PTE $8 is global"
[ $((0x$8 & RW)) = 0 ] || fail "xol PTE $8 is writable"
set -- $(xprobectl walk $B $xol)
assert_eq "xol not mapped in B" 0 "$2"

expect_rc "view del" 0 xprobectl view del $A
xprobectl walk $A 0x$stext $pages > /tmp/wa2
xprobectl walk $B 0x$stext $pages > /tmp/wb2
cmp -s /tmp/wa2 /tmp/wb2 || fail "A's page tables differ from B's after view del"
cmp -s /tmp/b0 /tmp/wb2 || fail "B's page tables changed (global bits not restored?)"
note "ok: after view del A = B = B before (global bit restored: $before)"
end_loop $A /tmp/a.out
