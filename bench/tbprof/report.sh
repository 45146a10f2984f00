#!/bin/bash
# report.sh DIR CONFIG [BASE] [N]: a tbprof profile as guest instructions
# per operation by symbol, or its difference from BASE's, largest first, N
# lines (40). DIR holds, per configuration C (bench/tbprof/README):
#   prof.C      "vaddr instructions" per translation block (tbprof.so)
#   kallsyms.C  the guest's /proc/kallsyms (kernel, modules, BPF programs)
#   maps.C      /proc/TARGET/maps: the target's user code by mapping
#   ops.C       how many operations the window held
# Addresses are compared as 16-digit hex strings: awk's numbers are doubles.
set -eu
dir=$1 c=$2 base=${3:-} n=${4:-40}
TAB=$(printf '\t')

# profile CONFIG: "symbol<TAB>instructions per op"
profile() {
	local ops
	ops=$(cat "$dir/ops.$1")
	{
		awk '$2 ~ /^[tTwW]$/ && $1 !~ /^0+$/ { print $1, "S", $3 ($4 != "" ? " " $4 : "") }' \
			"$dir/kallsyms.$1"
		awk '{ split($1, r, "-"); f = $6 == "" ? "[anon]" : $6; sub(/.*\//, "", f)
			print r[1], "M", r[2], f }' "$dir/maps.$1"
		awk '{ print $1, "B", $2 }' "$dir/prof.$1"
	} | awk 'function pad(a) { a = tolower(a); while (length(a) < 16) a = "0" a; return a }
		{ $1 = pad($1); if ($2 == "M") $3 = pad($3); print }' |
		LC_ALL=C sort -k1,1 -k2,2r |
		awk -v ops="$ops" '
		$2 == "S" { sym = substr($0, 20); next }
		$2 == "M" { lo[++m] = $1; hi[m] = $3; name[m] = $4; next }
		{
			if ($1 "" < "0000800000000000") {
				k = "user: another process"
				for (i = 1; i <= m; i++)
					if ($1 "" >= lo[i] "" && $1 "" < hi[i] "") { k = "user: target " name[i]; break }
			} else
				k = sym == "" ? "kernel: ?" : sym
			t[k] += $3
		}
		END { for (k in t) printf "%s\t%.1f\n", k, t[k] / ops }'
}

if [ -z "$base" ]; then
	profile "$c" | LC_ALL=C sort -t "$TAB" -k2,2 -gr |
		awk -F'\t' -v n="$n" '{ s += $2; l[NR] = $0 }
			END { printf "total %.0f\n", s
			      for (i = 1; i <= NR && i <= n; i++) { split(l[i], f, "\t"); printf "%9.1f %s\n", f[2], f[1] } }'
	exit 0
fi
tmp=$(mktemp)
LC_ALL=C join -t "$TAB" -a1 -a2 -e 0 -o 0,1.2,2.2 \
	<(profile "$c" | LC_ALL=C sort -t "$TAB" -k1,1) <(profile "$base" | LC_ALL=C sort -t "$TAB" -k1,1) > "$tmp"
awk -F'\t' '{ a += $2; b += $3 } END { printf "total %.0f - %.0f = %+.0f\n", a, b, a - b }' "$tmp"
awk -F'\t' '{ printf "%s\t%.1f\n", $1, $2 - $3 }' "$tmp" | LC_ALL=C sort -t "$TAB" -k2,2 -gr |
	awk -F'\t' -v n="$n" '{ l[++m] = $0 }
		END { for (i = 1; i <= m && i <= n; i++) { split(l[i], f, "\t"); printf "%+9.1f %s\n", f[2], f[1] }
		      print "..."
		      for (i = (m - 4 > n ? m - 4 : n + 1); i <= m; i++) { split(l[i], f, "\t"); printf "%+9.1f %s\n", f[2], f[1] } }'
rm -f "$tmp"
