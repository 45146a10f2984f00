# Helpers for the guest-side experiments (sourced).
OUT=${BENCH_OUT:-/mnt/share}
[ -d "$OUT" ] && [ -w "$OUT" ] || OUT=/tmp/bench
mkdir -p "$OUT"

# median of numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -g | head -n 1; }
maximum() { sort -g | tail -n 1; }

# wait_line FILE PATTERN: until FILE has a line matching PATTERN (10 s at most)
wait_line() {
	local i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "bench: timed out waiting for '$2' in $1" >&2; return 1; }
		sleep 0.05
	done
}
