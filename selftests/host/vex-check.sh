#!/bin/sh
# A function whose first instruction is VEX- or EVEX-encoded (AVX2's and
# AVX-512's vpbroadcastb, as glibc's string functions start) keeps its
# result under trace in fallback mode on the host kernel: the kernel's
# uprobes would take its opcode byte for a branch's (0x78 js, 0x7a jp) and
# emulate it, so trace leaves such functions out and says so. Without
# AVX2 on this host there is nothing to run: it says so and passes.
#   vex-check.sh XPROBECTL DIR
set -eu
CTL=$1 D=$2
HERE=$(dirname "$0")
mkdir -p "$D"
${CC:-cc} -O2 -mavx2 -o "$D/vex" "$HERE/vex.c" "$HERE/vex.S"
grep -qw avx2 /proc/cpuinfo || { echo "skipped: this host has no AVX2"; exit 0; }
"$D/vex" | grep -q "^vex ok" || { echo "vex fails untraced"; exit 1; }
"$CTL" trace --no-views -f 'vx_*' -- "$D/vex" > "$D/vex.out" 2> "$D/vex.err" || {
	cat "$D/vex.err"; exit 1; }
grep -q "^vex ok" "$D/vex.out" || {
	echo "traced, vex computed a wrong result: $(cat "$D/vex.out")"; cat "$D/vex.err"; exit 1; }
grep -q "not probing 2 functions whose first instruction is VEX- or EVEX-encoded" "$D/vex.err" || {
	echo "trace did not say which functions it left out:"; cat "$D/vex.err"; exit 1; }
echo "vex: $(grep '^vex ok' "$D/vex.out"), both functions left out, saying why"
