#!/bin/bash
# Scan a guest console log for kernel splats. Prints each offending line (with
# the selftest that was running, from the markers the guest runner writes) and
# exits 1 if there is any; exits 0 on a clean log.
set -u
LOG=${1:?console log}
PAT='(Oops|BUG:|WARNING:|kernel BUG at|general protection fault|Kernel panic|Fatal exception|KASAN:|UBSAN:|KFENCE:|possible circular locking|possible recursive locking|inconsistent lock state|lockdep is turned off|DEBUG_LOCKS_WARN_ON|suspicious RCU usage|unreferenced object|soft lockup|hard LOCKUP|rcu_sched self-detected stall|detected stalls on CPUs|hung_task|blocked for more than|Call Trace:|int3: 0000|page-table invariant violated)'
[ -f "$LOG" ] || { echo "splat: no console log at $LOG"; exit 1; }
awk -v pat="$PAT" '
	{ sub(/\r$/, "") }	# serial consoles end lines with CR LF
	/xprobes-selftest: begin / { sub(/.*xprobes-selftest: begin /, ""); test = $0; next }
	# A user-mode fault the kernel reports ("traps: COMM[PID] general
	# protection fault ip:... sp:..."): 47-uhook-fuzz jumps into its own
	# trampolines with random stack pointers, and a non-canonical one
	# faults so (main@6.1, 2026-11-29). The kernel-mode report has no
	# "traps:" prefix and comes with an Oops.
	/traps: .*\[[0-9]+\] general protection fault ip:[0-9a-f]+ sp:/ { next }
	$0 ~ pat { n++; if (n <= 40) printf "splat [%s]: %s\n", (test == "" ? "boot" : test), $0 }
	END { exit n > 0 }
' "$LOG"
