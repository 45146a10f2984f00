#!/bin/bash
# Host side of make bench: PNG bar charts from the experiments' JSON (gnuplot).
#   plot.sh DIR      (build/bench: reads *.json, writes *.png beside them)
set -euo pipefail
DIR=${1:?bench results dir}
command -v gnuplot > /dev/null || { echo "plot: gnuplot missing (make bench installs gnuplot-nox)"; exit 0; }

# bars NAME TITLE YLABEL FIELD: one bar per configuration, FIELD of each result.
bars() {
	local name=$1 json=$DIR/$1.json
	[ -f "$json" ] || return 0
	python3 - "$json" "$4" > "$DIR/$name.dat" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    f = sys.argv[2]
    base = f[:-len("_median")] if f.endswith("_median") else f
    lo, hi = r.get(base + "_min", r[f]), r.get(base + "_max", r[f])
    print(r["config"], r[sys.argv[2]], lo, hi)
PY
	gnuplot <<GP
set terminal pngcairo size 800,450 noenhanced
set output "$DIR/$name.png"
set title "$2"
set ylabel "$3"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set grid ytics
plot "$DIR/$name.dat" using 0:2:xtic(1) with boxes notitle, \
     "" using 0:2:3:4 with yerrorbars lc rgb "black" pt -1 notitle
GP
	echo "plot: $DIR/$name.png"
}

for w in syscall memcached redis; do
	bars untraced-$w "Untraced $w throughput while another process is traced" "ratio to no tracing" ratio_median
done
bars hit-cost "Cost of one hook hit in the traced process" "guest ns (instructions) per hit" ns_per_hit
