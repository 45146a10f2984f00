#!/bin/sh
# A C++ exception through functions traced with their returns, in fallback
# mode on this host's kernel (uprobes and uretprobes): where a BPF program
# may write user memory, the program catches it as it does untraced (trace
# gives the unwinder the return addresses back; selftest 49 covers the
# rest in the VM); on a kernel locked down (integrity, as under Secure
# Boot, and as this host's may be) trace says it cannot, before it starts.
#   unwind-check.sh XPROBECTL CXXTHROW DIR
set -eu
CTL=$1 PROG=$2 D=$3
mkdir -p "$D"
"$PROG" one "$D/untraced" || { echo "cxxthrow fails untraced"; exit 1; }
"$CTL" trace --no-views -f middle -f thrower -- "$PROG" one "$D/traced" \
	> "$D/trace.out" 2> "$D/trace.err" || { cat "$D/trace.err"; exit 1; }
if grep -q "this kernel does not let BPF write a process.s memory" "$D/trace.err"; then
	lock=$(cat /sys/kernel/security/lockdown 2>/dev/null || echo "securityfs not mounted")
	grep -q "killed by SIGABRT" "$D/trace.err" || {
		echo "locked down, yet the exception was caught: the warning is wrong"; exit 1; }
	echo "unwind: BPF may not write user memory here (lockdown: $lock): trace said an exception may end the program, and it did"
	exit 0
fi
cmp -s "$D/untraced" "$D/traced" || {
	echo "traced, cxxthrow wrote '$(cat "$D/traced" 2>/dev/null)', untraced '$(cat "$D/untraced")'"
	cat "$D/trace.err"; exit 1; }
grep -q "unwinds=[1-9]" "$D/trace.out" || {
	echo "the unwinder's entries were not counted: $(grep events: "$D/trace.out")"; exit 1; }
echo "unwind: $(cat "$D/traced"), traced as untraced"
