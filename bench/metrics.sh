# Experiment 6: xprobectl metrics on real servers, over rounds.
#   accuracy  per server (redis, memcached, nginx) and round: loadgen at
#             50..800 requests/s and as fast as the server answers, observed
#             requests/s against loadgen's; R^2 and slope of the fit, CV2 and
#             slack at the lowest rate and at the limit (selftests/servers.sh,
#             the code selftest 51 uses)
#   cost      each server's throughput at its limit (loadgen -r 0) with no
#             tracing, with 'xprobectl metrics' through its view, and in
#             fallback mode (the global raw_syscalls tracepoints), alternated
#             round by round; ratios to no tracing in the same round
#   untraced  the same three configurations on an idle redis, while a second,
#             untraced redis runs at its limit: what metrics costs everyone
#             else (views: nothing by construction; fallback: the syscall
#             tracepoints fire for every process)
# METRICS_PARTS="cost untraced" reruns only those parts; the report takes
# the others' raw files from an earlier run in the same directory.
# METRICS_SERVERS="memcache" and ROUNDS=7 narrow and lengthen a rerun.
. /xp/bench/lib.sh
. /xp/selftests/servers.sh
ROUNDS=${ROUNDS:-3}
PARTS=${METRICS_PARTS:-accuracy cost untraced}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
SECS=${SECS:-2}
RATES="50 100 200 400 800 0"
SERVERS=${METRICS_SERVERS:-redis memcache http}
for b in redis-server memcached nginx; do
	command -v $b > /dev/null || { echo "bench: $b missing in the VM (make deps installs it)"; exit 1; }
done

port_of() { case $1 in redis) echo 6390 ;; memcache) echo 11290 ;; http) echo 8090 ;; esac; }

# --- accuracy -------------------------------------------------------------
ACC=$OUT/metrics-accuracy.raw	# server round target actual observed cv2 var slack run_rate
part accuracy && : > "$ACC"
part accuracy && for s in $SERVERS; do
	port=$(port_of $s)
	server_start $s $port || exit 1
	r=1
	while [ $r -le $ROUNDS ]; do
		for rate in $RATES; do
			row=$(metrics_point $s $port $SRV_PID $rate $SECS) || exit 1
			echo "$s $r $row" >> "$ACC"
		done
		r=$((r + 1))
	done
	server_stop
done

# --- cost -----------------------------------------------------------------
# Each server's limit under none, metrics (views) and metrics-fb (fallback)
# on $TARGET, rounds() alternating them; measure's loadgen speaks $PROTO.
CONFIGS="none metrics metrics-fb"
SETTLE=1
ATTACH_WAIT=20
measure() { loadgen -p $PROTO -P $PORT -r 0 -c 8 -d $SECS | sed -n 's/.* span_rate \([0-9.]*\) .*/\1/p'; }
part cost && for s in $SERVERS; do
	port=$(port_of $s)
	server_start $s $port || exit 1
	TARGET=$SRV_PID PROTO=$s PORT=$port
	rounds metrics-cost-$s "$CONFIGS" $ROUNDS
	server_stop
done
# An idle traced redis, a busy untraced one.
if part untraced; then
	server_start redis 6391 || exit 1
	TARGET=$SRV_PID
	IDLE=$SRV_PID
	server_start redis 6392 || exit 1
	PROTO=redis PORT=6392
	rounds metrics-untraced "$CONFIGS" $ROUNDS
	server_stop
	SRV_PID=$IDLE
	server_stop
fi

# --- report ---------------------------------------------------------------
# A part that neither ran now nor in an earlier run leaves its figures
# empty: null in the JSON, '-' in the table.
fit() {	# fit SERVER ROUND: "r2 slope" of that sweep's non-limit points
	[ -s "$ACC" ] || return 0
	awk -v s=$1 -v r=$2 '$1 == s && $2 == r && $3 > 0 { print $4, $5 }' "$ACC" | r2
}
col() {	# col SERVER TARGET COLUMN: that column over the rounds, one per line
	[ -s "$ACC" ] || return 0
	awk -v s=$1 -v t=$2 -v c=$3 '$1 == s && $3 == t { print $c }' "$ACC"
}
ratio() { [ -s "$2" ] && round_ratios "$@" | median; }	# ratio CONFIG RAW: the median over rounds
jnum() { printf '%s' "${1:-null}"; }			# jnum VALUE: for the JSON
tnum() { if [ -n "$2" ]; then printf "$1" "$2"; else printf -- -; fi; }	# tnum FORMAT VALUE: for the table
name_of() { case $1 in memcache) echo memcached ;; http) echo nginx ;; *) echo $1 ;; esac; }
echo "xprobectl metrics against loadgen: $ROUNDS rounds per server, $SECS s per point"
printf '%-10s %9s %9s %9s %8s %8s %10s %10s %11s %11s\n' server "R2 med" "R2 min" slope \
	"CV2 50" "CV2 max" "slack 50" "slack max" "cost views" "cost fb"
{
	printf '{"experiment":"metrics","rounds":%d,"secs_per_point":%s,"results":[' $ROUNDS $SECS
	first=1
	for s in $SERVERS; do
		fits=$(r=1; while [ $r -le $ROUNDS ]; do fit $s $r; r=$((r + 1)); done)
		r2m=$(echo "$fits" | awk '{ print $1 }' | median)
		r2lo=$(echo "$fits" | awk '{ print $1 }' | minimum)
		slope=$(echo "$fits" | awk '{ print $2 }' | median)
		cv_lo=$(col $s 50 6 | median)
		cv_hi=$(col $s 0 6 | median)
		sl_lo=$(col $s 50 8 | median)
		sl_hi=$(col $s 0 8 | median)
		limit=$(col $s 0 4 | median)
		cv=$(ratio metrics "$OUT/metrics-cost-$s.raw")
		cf=$(ratio metrics-fb "$OUT/metrics-cost-$s.raw")
		[ $first = 1 ] || printf ','
		first=0
		printf '{"server":"%s","r2_median":%s,"r2_min":%s,"slope_median":%s,"limit_rps":%s,' \
			$(name_of $s) $(jnum $r2m) $(jnum $r2lo) $(jnum $slope) $(jnum $limit)
		printf '"cv2_at_50":%s,"cv2_at_limit":%s,"slack_us_at_50":%s,"slack_us_at_limit":%s,' \
			$(jnum $cv_lo) $(jnum $cv_hi) $(jnum $sl_lo) $(jnum $sl_hi)
		printf '"throughput_ratio_views":%s,"throughput_ratio_fallback":%s}' $(jnum $cv) $(jnum $cf)
		printf '%-10s %9s %9s %9s %8s %8s %10s %10s %11s %11s\n' $(name_of $s) $(tnum %s "$r2m") \
			$(tnum %s "$r2lo") $(tnum %s "$slope") $(tnum %.3g "$cv_lo") $(tnum %.3g "$cv_hi") \
			$(tnum %.0f "$sl_lo") $(tnum %.0f "$sl_hi") $(tnum %.4f "$cv") $(tnum %.4f "$cf") >&2
	done
	uv=$(ratio metrics "$OUT/metrics-untraced.raw")
	uf=$(ratio metrics-fb "$OUT/metrics-untraced.raw")
	printf '],"untraced_redis_ratio_views":%s,"untraced_redis_ratio_fallback":%s}\n' \
		$(jnum $uv) $(jnum $uf)
} 2>&1 > "$OUT/metrics.json"
printf 'an untraced redis at its limit while metrics watches an idle one: views %s, fallback %s of none\n' \
	$(tnum %.4f "$uv") $(tnum %.4f "$uf")
echo "results: $OUT/metrics.json, raw: $ACC, $OUT/metrics-cost-*.raw"
