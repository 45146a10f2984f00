# Helpers shared by the stress tests (sourced after selftests/tests/lib.sh):
# the seed and its generator, process state, cleanup on exit, kmemleak checks.
# scaled N [DIV] (lib.sh): N, or less on the debug kernel; N without lib's
command -v scaled > /dev/null || scaled() { echo $1; }
SEED=${XP_SEED:-$(date +%s)}
note "seed $SEED"
XS=$((SEED % 2147483648))
[ $XS -ge 0 ] || XS=$((-XS))
# rnd N: R = the seeded generator's next number in [0, N) (an LCG: no fork)
rnd() { XS=$(( (XS * 1103515245 + 12345) % 2147483648 )); R=$(( (XS >> 8) % $1 )); }
# state PID: the process state letter (R, S, D, T, Z, ...), empty once reaped
state() {
	local a b s rest
	read a b s rest 2>/dev/null < /proc/$1/stat && echo $s
}
# On exit, pass or fail, SIGKILL whatever this test started that still runs.
cleanup() {
	kill -9 $(awk -v top=$$ '{ pp[$1] = $4 }
		END { for (p in pp) for (q = pp[p]; q > 1; q = pp[q]) if (q == top) { print p; break } }' \
		/proc/[0-9]*/stat 2>/dev/null) 2>/dev/null
	module_loaded || insmod $KO
}
trap cleanup EXIT
# kmemleak_list FILE: the suspects kmemleak lists now, one "ADDRESS X" line
# each, X = x when the allocation went through xprobes (a frame in
# [xprobes], or an unresolved module address: an unloaded xprobes), else -.
kmemleak_list() {
	awk '/^unreferenced object/ { if (o) print o, x; o = $3; x = "-" }
		/\[xprobes\]/ || /\] 0xffffffff[a-f][0-9a-f]+$/ { x = "x" }
		END { if (o) print o, x }' /sys/kernel/debug/kmemleak 2>/dev/null | sort -u > "/tmp/$1"
}
# kmemleak_check: a scan finds no new leak through xprobes (debug kernel);
# other new suspects are only counted. XP_KMEMLEAK=0 skips it (two scans:
# a new object is reported by the second scan that finds it unreferenced).
kmemleak_check() {
	local f=/sys/kernel/debug/kmemleak new
	[ -w $f ] || { note "kmemleak: not in this kernel"; return 0; }
	[ "${XP_KMEMLEAK:-1}" = 1 ] || { note "kmemleak: skipped (XP_KMEMLEAK=0)"; return 0; }
	sleep 6		# kmemleak ignores objects younger than 5 s
	echo scan > $f
	echo scan > $f
	kmemleak_list kml.after
	new=$(grep -vxF -f /tmp/kml.before /tmp/kml.after)
	if printf '%s\n' "$new" | grep -q ' x$'; then
		cat $f
		fail "kmemleak: new leaks through xprobes: $(printf '%s\n' "$new" | grep ' x$' | tr '\n' ' ')"
	fi
	note "ok: kmemleak finds no new leak through xprobes ($(printf '%s\n' "$new" | grep -c ' -$') other new suspects)"
}
# kmem_check KB0: kernel memory did not grow by XP_KMEM_SLACK_KB (default
# 1 MiB: process churn alone moves slab and vmap areas by a few 100 kB) or
# more since kmem_kb said KB0; on the debug kernel lib's assert_no_growth
# leaves leaks to kmemleak_check (KASAN's quarantine holds freed objects).
kmem_check() {
	local now
	now=$(kmem_kb)
	note "kernel memory before $1 kB, after $now kB"
	assert_no_growth "kernel memory since the start" $((now - $1)) ${XP_KMEM_SLACK_KB:-1024}
}
# A clean start: no views (an earlier test that failed may have left some).
if [ "$(status_field views)" != 0 ]; then
	note "views left by an earlier test: reloading xprobes"
	rmmod xprobes && insmod $KO || fail "cannot reload xprobes"
fi
assert_eq "no views at the start" 0 "$(status_field views)"
MEM0=$(status_field memory_bytes)
KMEM0=$(kmem_kb)
kmemleak_list kml.before

# view_gone_checks: the last process of the view is gone; within 5 s the view
# ends by itself (the sweeper runs every 200 ms), no hook is left, and memory
# is back to the baselines MEM0 (module) and KMEM0 (kernel); kmemleak agrees.
view_gone_checks() {
	local i=0
	while [ "$(status_field views)" != 0 ]; do
		i=$((i + 1)); [ $i -lt 25 ] || fail "the view outlived its last process: $(xprobectl view list)"
		sleep 0.2
	done
	note "ok: the view ended with its last process"
	assert_eq "hooks at the end" 0 "$(status_field hooks)"
	assert_eq "module memory back to the baseline" "$MEM0" "$(status_field memory_bytes)"
	kmem_check $KMEM0
	kmemleak_check
}
