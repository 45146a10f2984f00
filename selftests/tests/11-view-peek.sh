# (b) peek shows the int3 (--trap) at the hooked address in A's view and the original
# byte in B's; /proc/kcore read by untraced B shows the original; the shared
# text of the whole page is identical before, during and after.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid

start_loop /tmp/a.out -e -n 10 getppid
A=$LOOP_PID
B=$$
addr=$(ksym $F)
[ -n "$addr" ] || fail "no address for $F"
page=$(printf '%x' $(( 0x$addr & ~0xfff )))
before=$(kread $page 4096) || fail "kread"
E=$(entry_off $B $F)
orig=$(peek_byte $B $F+$E)
assert_eq "A sees the original before" "$orig" "$(peek_byte $A $F+$E)"

xprobectl view add $A > /dev/null || fail "view add"
assert_eq "A sees the original with an empty view" "$orig" "$(peek_byte $A $F+$E)"
id=$(xprobectl hook add --trap $A $F) || fail "hook add"
assert_eq "A sees int3" cc "$(peek_byte $A $F+$E)"
assert_eq "B sees the original" "$orig" "$(peek_byte $B $F+$E)"
[ "$orig" != cc ] || fail "original byte is already int3"
assert_eq "A's next byte untouched" "$(peek_byte $B $F+$((E + 1)))" "$(peek_byte $A $F+$((E + 1)))"
assert_eq "kcore (read by B) shows the original" "$orig" "$(kread $addr 16 | awk -v f=$((E + 1)) '{ print $f }')"
during=$(kread $page 4096)
[ "$before" = "$during" ] || fail "shared text page changed while hooked"
note "ok: shared page identical before and during"

# Everything else in A's copy of the page equals the shared page.
a_page=$(xprobectl peek $A 0x$page 4096 | cut -d: -f2 | tr -d '\n')
b_page=$(xprobectl peek $B 0x$page 4096 | cut -d: -f2 | tr -d '\n')
diffs=$(printf '%s\n%s\n' "$a_page" "$b_page" | awk 'NR == 1 { n = split($0, a, " ") } NR == 2 { split($0, b, " "); for (i = 1; i <= n; i++) if (a[i] != b[i]) d++; print d + 0 }')
assert_eq "bytes that differ between A's and B's page" 1 "$diffs"

expect_rc "hook del" 0 xprobectl hook del $id
assert_eq "A sees the original after hook del" "$orig" "$(peek_byte $A $F+$E)"
expect_rc "view del" 0 xprobectl view del $A
after=$(kread $page 4096)
[ "$before" = "$after" ] || fail "shared text page changed after the view"
note "ok: shared page identical after"
end_loop $A /tmp/a.out
