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
	# A bar is at least 90 px wide, and with more than six the names
	# slant under them: side by side, "instaret" ran into
	# "instaret-uprobes" (issue 41).
	local n width tics=
	n=$(wc -l < "$DIR/$name.dat")
	width=$((n * 90 > 800 ? n * 90 : 800))
	[ "$n" -le 6 ] || tics="set xtics rotate by -30 left; set rmargin 12"
	gnuplot <<GP
set terminal pngcairo size $width,450 noenhanced
set output "$DIR/$name.png"
set title "$2"
set ylabel "$3"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set grid ytics
$tics
plot "$DIR/$name.dat" using 0:2:xtic(1) with boxes notitle, \
     "" using 0:2:3:4 with yerrorbars lc rgb "black" pt -1 notitle
GP
	echo "plot: $DIR/$name.png"
}

for w in syscall tp memcached redis; do
	bars untraced-$w "Untraced $w throughput while another process is traced" "ratio to no tracing" ratio_median
done
bars hit-cost "Cost of one hook hit in the traced process" "guest ns (instructions) per hit" ns_per_hit
bars hit-cost-tp "Cost of one tracepoint hit in the traced process" "guest ns (instructions) per hit" ns_per_hit
bars ucall-cost "Cost of one traced call of a user function" "guest ns (instructions) per call" ns_per_hit
bars redis-uprobes "Redis GET throughput under user-space probes" "ratio to no tracing" ratio_median

# Attribution: what landed in the expected cause, over what was injected.
if [ -f "$DIR/attribution.json" ]; then
	python3 - "$DIR/attribution.json" > "$DIR/attribution.dat" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    inj = r["injected_ns"]
    print("%s/%s(%s)" % (r["scenario"], r["mode"][0], r["cause"]), r["in_cause_ns"] / inj if inj else 0)
PY
	gnuplot <<GP
set terminal pngcairo size 1000,450 noenhanced
set output "$DIR/attribution.png"
set title "Attribution: time in the expected cause / time injected (v: views, f: fallback)"
set ylabel "ratio"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:1.2]
set grid ytics
set xtics rotate by -45
plot "$DIR/attribution.dat" using 0:2:xtic(1) with boxes notitle, 1 with lines lc rgb "black" notitle
GP
	echo "plot: $DIR/attribution.png"
fi

# metrics: each server's throughput at its limit under 'xprobectl metrics', views and fallback.
if [ -f "$DIR/metrics.json" ]; then
	python3 - "$DIR/metrics.json" > "$DIR/metrics.dat" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    print(r["server"], r["throughput_ratio_views"], r["throughput_ratio_fallback"], r["r2_median"])
PY
	gnuplot <<GP
set terminal pngcairo size 800,450 noenhanced
set output "$DIR/metrics.png"
set title "Server throughput at its limit under xprobectl metrics (ratio to none)"
set ylabel "ratio to no tracing"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.6
set yrange [0:1.2]
set grid ytics
plot "$DIR/metrics.dat" using 2:xtic(1) title "views", "" using 3 title "fallback"
GP
	echo "plot: $DIR/metrics.png"
fi
