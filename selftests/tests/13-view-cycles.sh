# (d) 1000 view add/del cycles and 1000 hook add/del cycles against a running
# A: the counts stay right, the module's memory returns to 0, kernel memory
# does not grow, no splat.
. /xp/selftests/tests/lib.sh
F=__x64_sys_getppid
CYCLES=${XP_CYCLES:-$(scaled 1000 10)}	# the debug kernel: 61-stress-attach does 1000

sysloop -n 0 getppid &
A=$!
before=$(kmem_kb)
# In-process cycles (xpcycle): a thousand execs of xprobectl would only
# measure exec under emulation.
expect_rc "$CYCLES view add/del cycles" 0 xpcycle view $A $CYCLES
assert_eq "views after view cycles" 0 "$(status_field views)"
assert_eq "memory after view cycles" 0 "$(status_field memory_bytes)"

xprobectl view add $A > /dev/null || fail "view add"
expect_rc "$CYCLES hook add/del cycles" 0 xpcycle hook $A $F $CYCLES
# The last hook still counts.
id=$(xprobectl hook add $A $F) || fail "hook add"
sleep 1
hits=$(hook_col $id 5)
[ "$hits" -gt 0 ] || fail "hook on a running loop counted nothing"
note "ok: final hook counted $hits hits in 1 s"
xprobectl view del $A || fail "view del"
kill $A
wait $A
assert_eq "hooks at the end" 0 "$(status_field hooks)"
assert_eq "memory at the end" 0 "$(status_field memory_bytes)"
after=$(kmem_kb)
growth=$((after - before))
note "kernel memory before ${before} kB, after ${after} kB, growth ${growth} kB"
assert_no_growth "view and hook cycles" $growth 256
