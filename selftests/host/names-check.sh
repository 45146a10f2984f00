#!/bin/sh
# One file under two names in trace's -f, in fallback mode on this host's
# kernel: the program named as a library of its own ("-f tailx:tx_*"
# beside "-f tx_*") and a library under three names (its soname's stem,
# "libtailx", and its path) give each function once, its calls counted
# once; a Go program named so keeps its functions' entries only (a return
# probe rewrites the return addresses Go walks: the runtime's "unexpected
# return pc", then its crash). Until 2026-12-04 the first traced every
# function twice, a probe of each kind, and the second killed the program.
#   names-check.sh XPROBECTL TAILX GOSTACK DIR
set -eu
CTL=$1 TAILX=$2 GO=$3 D=$4
mkdir -p "$D"
lib=$(dirname "$TAILX")/libtailx.so
"$CTL" trace --no-views --json -f 'tx_*' -f 'tailx:tx_*' -f 'libtailx:tx_*' -f "$lib:tx_*" \
	-- "$TAILX" 100 > "$D/tailx.json" 2> "$D/tailx.err" || { cat "$D/tailx.err"; exit 1; }
grep -q "tracing 7 functions" "$D/tailx.err" || {
	echo "tailx: not 7 functions: $(grep tracing "$D/tailx.err")"; exit 1; }
n=$(grep -o '"calls":[0-9]*' "$D/tailx.json" | grep -c '"calls":100$' || true)
[ "$n" = 7 ] || { echo "tailx: $n of 7 functions with 100 calls: $(grep -o '"name":"[^"]*","calls":[0-9]*' "$D/tailx.json")"; exit 1; }
"$GO" "$D/go.untraced" || { echo "gostack fails untraced"; exit 1; }
"$CTL" trace --no-views -f "$(basename "$GO"):main.*" -- "$GO" "$D/go.traced" \
	> "$D/go.out" 2> "$D/go.err" || { tail -n 5 "$D/go.err"; exit 1; }
grep -q "it exited with status 0" "$D/go.out" || { tail -n 5 "$D/go.err"; exit 1; }
cmp -s "$D/go.untraced" "$D/go.traced" || {
	echo "gostack wrote '$(cat "$D/go.traced" 2>/dev/null)' traced, '$(cat "$D/go.untraced")' untraced"; exit 1; }
echo "names: 7 functions once under 4 names; gostack named as a library: entries only, ran as untraced"
