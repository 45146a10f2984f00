# Stress: modules loaded and unloaded beside a view with a hook in module
# text (module/views/modspace.c). A reads /proc/xp_modfn flat out through
# its hook in xp_modfn; its child C (in the view) loads xp_modfn3, reads
# through it and unloads it, XP_MODLOOP_N times (the loader writing the new
# module and running its init and exit in the view, in the same 2 MiB slot
# as the hook or not); meanwhile an untraced shell loads and unloads
# xp_modfn2 as often, and the test hooks xp_modfn2 in A's view whenever it
# can (the hook ends with each unload). Checks: A's hook counted exactly
# A's reads, every load and read in C succeeded, the views' tables never
# had to be caught up late, the audit and the page-table check are clean,
# no splat (the log), no leak (kmemleak).
. /xp/selftests/tests/lib.sh
. /xp/selftests/debug/tests/stress-lib.sh
[ -f /xp/xp_modfn.ko ] && [ -f /xp/xp_modfn2.ko ] && [ -f /xp/xp_modfn3.ko ] ||
	skip "no xp_modfn test modules"
N=${XP_MODLOOP_N:-$(scaled 32)}
D=/tmp/65
rm -rf $D
mkdir -p $D
for m in xp_modfn3 xp_modfn2 xp_modfn; do rmmod $m 2>/dev/null; done
insmod /xp/xp_modfn.ko || fail "insmod xp_modfn"
ended0=$(status_field module_hooks_ended)

# A: reads until told to stop, then writes how many; its child C loads,
# reads and unloads xp_modfn3 N times.
sh -c 'n=0
	while [ ! -f '$D'/go ]; do sleep 0.05; done
	sh -c "i=0; bad=0
		while [ \$i -lt '$N' ]; do
			insmod /xp/xp_modfn3.ko || bad=\$((bad + 1))
			read x < /proc/xp_modfn3 || bad=\$((bad + 1))
			rmmod xp_modfn3 || bad=\$((bad + 1))
			i=\$((i + 1))
		done
		echo \$bad > '$D'/c.bad" &
	while [ ! -f '$D'/stop ]; do read x < /proc/xp_modfn; n=$((n + 1)); done
	wait
	echo $n > '$D'/a.reads
	while [ ! -f '$D'/end ]; do sleep 0.05; done' &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A xp_modfn_hit) || fail "hook add xp_modfn_hit"
touch $D/go

i=0 hooked=0
while [ $i -lt $N ]; do
	insmod /xp/xp_modfn2.ko || fail "round $i: insmod xp_modfn2"
	xprobectl hook add $A xp_modfn2:xp_modfn_hit > /dev/null 2>&1 && hooked=$((hooked + 1))
	read x < /proc/xp_modfn2 || fail "round $i: read xp_modfn2"
	rmmod xp_modfn2 || fail "round $i: rmmod xp_modfn2"
	i=$((i + 1))
done
note "$N loads of xp_modfn2 beside the view, hooked $hooked times"
wait_for $D/c.bad . "A's child did not finish its $N loads" 1800
assert_eq "every load, read and unload in the view went through" 0 "$(cat $D/c.bad)"
touch $D/stop
wait_for $D/a.reads . "A did not stop" 600
reads=$(cat $D/a.reads)
note "A read $reads times"
[ "$reads" -gt 0 ] || fail "A made no read"
assert_eq "the hook counted A's reads" "$reads" "$(hook_col $id 5)"
touch $D/end
wait $A
assert_eq "each hook on xp_modfn2 ended with its module" $((ended0 + hooked)) \
	"$(status_field module_hooks_ended)"
note "module space: $(status_field module_space_syncs) changes followed at once"
assert_none_late
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_match "page tables" " 0 violation" "$(xprobectl audit --tables)"
wait_views 0
rmmod xp_modfn || fail "rmmod xp_modfn"
kmemleak_check
