#!/bin/sh
# BPF's histogram buckets past 2^32 calls, in fallback mode on this host's
# kernel, and the stats map's shape. The map must be an array of
# nfuncs x shards (one shard per possible CPU, at most 8: bpf/trace.bpf.c),
# not per-CPU slots (1 KB a function on every CPU the machine may have,
# until 2026-12-07). Before nestloop's rounds, every bucket of its three
# functions' shards (struct func_stats, bpf/trace.h: 40 buckets of wall,
# ON-CPU and all-ON, 64 bits each) is set to 2^32 - 1 with bpftool, as that
# many calls on each would. Each function's wall and ON-CPU histograms
# must then count its calls plus the planted wall (or ON-CPU) and all-ON
# buckets, which xprobectl adds to both. Until 2026-12-04 the buckets were
# 32 bits: 3 x 2^32 short.
#   buckets-check.sh XPROBECTL NESTLOOP JSONQ DIR
set -eu
CTL=$1 NL=$2 JQ=$3 D=$4
N=200
mkdir -p "$D"
# An earlier run's t.err would end the wait below at once if the shell
# greps it before the background job's redirection truncates it (it did
# once in make check, both CPUs busy with VMs: no stats map yet).
rm -f "$D/go" "$D/t.err" "$D/t.json"
"$CTL" trace --no-views -H --json -f 'nl_*' -- "$NL" $N "$D/go" > "$D/t.json" 2> "$D/t.err" &
T=$!
i=0
until grep -qs "^xprobectl: tracing" "$D/t.err"; do
	i=$((i + 1))
	[ $i -lt 300 ] || { kill $T; echo "trace did not attach: $(tail -n 3 "$D/t.err")"; exit 1; }
	sleep 0.1
done
# this session's map: the newest map named stats
id=$(bpftool map show | sed -n 's/^\([0-9]*\): [a-z_]*  name stats .*/\1/p' | sort -n | tail -n 1)
[ -n "$id" ] || { kill $T; echo "no map named stats"; exit 1; }
kind=$(bpftool map show id "$id" | sed -n 's/^[0-9]*: \([a-z_]*\) .*/\1/p')
[ "$kind" = array ] || { kill $T; echo "stats map $id: a $kind, not an array of shards"; exit 1; }
vsz=$(bpftool map show id "$id" | sed -n 's/.* value \([0-9]*\)B .*/\1/p')
entries=$(bpftool map show id "$id" | sed -n 's/.* max_entries \([0-9]*\) .*/\1/p')
# the CPUs the machine may have, as libbpf counts them: the highest possible one + 1
ncpus=$(tr ',' '\n' < /sys/devices/system/cpu/possible | sed 's/.*-//' | sort -n | tail -n 1)
ncpus=$((ncpus + 1))
shards=1
while [ $shards -lt "$ncpus" ] && [ $shards -lt 8 ]; do shards=$((shards * 2)); done
[ "$entries" = $((3 * shards)) ] ||
	{ kill $T; echo "stats map $id: $entries entries, not 3 functions x $shards shards ($ncpus CPUs)"; exit 1; }
slots=$((3 * 40))
head=$((vsz - 8 * slots))
[ "$head" -gt 0 ] || { kill $T; echo "stats map $id: value of $vsz bytes, not func_stats's"; exit 1; }
value="$(i=0; while [ $i -lt $head ]; do printf '0 '; i=$((i + 1)); done)"
value="$value$(i=0; while [ $i -lt $slots ]; do printf '0xff 0xff 0xff 0xff 0 0 0 0 '; i=$((i + 1)); done)"
k=0
while [ $k -lt "$entries" ]; do
	# shellcheck disable=SC2086
	bpftool map update id "$id" key $k 0 0 0 value $value ||
		{ kill $T; echo "bpftool could not set shard $k of map $id"; exit 1; }
	k=$((k + 1))
done
touch "$D/go"
wait $T || { echo "trace ended with $?: $(tail -n 3 "$D/t.err")"; exit 1; }
planted=$((shards * 2 * 40 * 4294967295))
total() {
	t=0 b=0 n=$("$JQ" "$D/t.json" "functions.[name=$1].histograms.$2.#")
	while [ $b -lt "$n" ]; do
		t=$((t + $("$JQ" "$D/t.json" "functions.[name=$1].histograms.$2.[$b].count")))
		b=$((b + 1))
	done
	echo $t
}
for f in nl_outer nl_mid nl_leaf; do
	c=$("$JQ" "$D/t.json" "functions.[name=$f].calls")
	[ "$c" = $N ] || { echo "$f: $c calls, not $N"; exit 1; }
	for h in wall on_cpu; do
		got=$(total $f $h)
		[ "$got" = $((N + planted)) ] ||
			{ echo "$f's $h histogram: $got, not its $N calls + $planted planted ($shards shards): off by $((got - N - planted))"; exit 1; }
	done
done
echo "buckets: 3 functions' wall and ON-CPU histograms exact past 2^32 a bucket ($shards shards of $ncpus CPUs planted at 2^32 - 1)"
