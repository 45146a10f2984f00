# (d) 1000 view add/del cycles and 1000 hook add/del cycles against a running
# A: the counts stay right, the module's memory returns to 0, kernel memory
# does not grow, no splat. A process viewed the moment a shell started it
# ("cmd &" then view add, as tests and scripts do) gets its view: it may be
# in execve still, which the module answers with EAGAIN, and view add asks
# again (14-view-rmmod failed on that once in make check, 2026-11-30).
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
# after the memory check: the processes it starts and ends grow the slabs
i=0
while [ $i -lt $(scaled 20 5) ]; do
	sysloop -n 0 getppid > /dev/null &
	P=$!
	xprobectl view add $P > /dev/null || fail "view add of a process started at once (round $i)"
	kill $P
	wait $P
	i=$((i + 1))
done
note "ok: $i processes viewed as soon as started"
