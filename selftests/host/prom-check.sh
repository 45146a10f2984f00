#!/bin/sh
# xprobectl metrics --listen, scraped by the real engine: Debian's
# prometheus server scrapes the exporter every second while loadgen drives
# a redis-server on this host at a known rate (fallback mode: no module on
# the host); the requests/s series, queried through Prometheus's HTTP API
# the way docs/metrics.md says (1 / mean time between responses, from the
# two gap counters), is within 5% of loadgen's own rate at every step of
# the load. Also: /metrics answers in the 0.0.4 text format, other paths
# 404, and --textfile writes the same metrics.
#   prom-check.sh XPROBECTL LOADGEN JSONQ DIR
set -u
CTL=$1 LG=$2 JQ=$3 D=$4
RATE=400 SECS=10
rm -rf "$D" && mkdir -p "$D/tsdb" "$D/text"
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$D"/*.log; do echo "--- $f"; tail -n 5 "$f"; done; exit 1; }

# free TCP ports on loopback, from the kernel
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RP=$(port) EP=$(port) PP=$(port) LP=$(port)
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no > "$D/redis.log" 2>&1 &
pids="$pids $!"
RPID=$!
i=0
until redis-cli -p "$RP" ping > /dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "redis-server did not start"; sleep 0.1
done
"$CTL" metrics --no-views --listen "127.0.0.1:$EP" --textfile "$D/text" "$RPID" \
	> "$D/metrics.log" 2>&1 &
pids="$pids $!"
# and latency --listen: its histograms, read by the same server
"$CTL" latency --no-views -q --listen "127.0.0.1:$LP" "$RPID" > "$D/latency.log" 2>&1 &
pids="$pids $!"
cat > "$D/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: xprobes
    static_configs:
      - targets: ['127.0.0.1:$EP', '127.0.0.1:$LP']
EOF
prometheus --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/tsdb" \
	--web.listen-address="127.0.0.1:$PP" > "$D/prometheus.log" 2>&1 &
pids="$pids $!"
i=0
until curl -sf "http://127.0.0.1:$PP/-/ready" > /dev/null 2>&1 &&
      curl -sf "http://127.0.0.1:$EP/metrics" > /dev/null 2>&1 &&
      curl -sf "http://127.0.0.1:$LP/metrics" > /dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "prometheus or the exporter did not come up"; sleep 0.1
done

curl -s -D "$D/h.txt" -o "$D/m.txt" "http://127.0.0.1:$EP/metrics"
grep -qi '^content-type: text/plain; version=0.0.4' "$D/h.txt" || fail "content type: $(cat "$D/h.txt")"
for m in xprobes_responses_total xprobes_requests_total xprobes_response_gaps_total \
	 xprobes_response_gap_seconds_total xprobes_wait_seconds_total; do
	grep -q "^# TYPE $m counter" "$D/m.txt" || fail "no counter $m in /metrics"
	grep -q "^$m{pid=\"$RPID\",comm=\"redis-server\",mode=\"fallback\"} " "$D/m.txt" ||
		fail "no sample of $m with pid, comm and mode labels"
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EP/")" = 404 ] || fail "/ is not 404"

# Prometheus hands its first targets to the scrapers after up to 5 s
# (discovery's update interval): load only once it has scraped twice.
i=0
while :; do
	curl -sG "http://127.0.0.1:$PP/api/v1/query" \
		--data-urlencode 'query=count_over_time(up{job="xprobes"}[1m])' > "$D/up.json" 2>/dev/null
	c=$("$JQ" "$D/up.json" 'data.result.[1].value.[1]' 2>/dev/null || echo 0)
	[ "${c:-0}" -ge 2 ] 2>/dev/null &&
		c=$("$JQ" "$D/up.json" 'data.result.[0].value.[1]' 2>/dev/null || echo 0)
	[ "${c:-0}" -ge 2 ] 2>/dev/null && break
	i=$((i + 1)); [ $i -lt 150 ] || fail "prometheus did not scrape the exporter: $(head -c 300 "$D/up.json")"
	sleep 0.1
done

t0=$(date +%s)
"$LG" -p redis -P "$RP" -r $RATE -d $SECS > "$D/loadgen.log" 2>&1 || fail "loadgen"
t1=$(date +%s)
sleep 3	# the last scrapes
actual=$(sed -n 's/.* span_rate \([0-9.]*\).*/\1/p' "$D/loadgen.log")
[ -n "$actual" ] || fail "loadgen printed no rate"
q='1/(rate(xprobes_response_gap_seconds_total[4s])/rate(xprobes_response_gaps_total[4s]))'
curl -sG "http://127.0.0.1:$PP/api/v1/query_range" --data-urlencode "query=$q" \
	--data-urlencode "start=$((t0 + 5))" --data-urlencode "end=$((t1 - 1))" \
	--data-urlencode "step=1" > "$D/q.json" || fail "query"
[ "$("$JQ" "$D/q.json" status)" = success ] || fail "query: $(head -c 300 "$D/q.json")"
n=$("$JQ" "$D/q.json" 'data.result.[0].values.#') || fail "no series: $(head -c 300 "$D/q.json")"
[ "$n" -ge 3 ] || fail "only $n points in the series"
bad=0 k=0 vals=
while [ $k -lt "$n" ]; do
	v=$("$JQ" "$D/q.json" "data.result.[0].values.[$k].[1]")
	vals="$vals $v"
	awk -v v="$v" -v a="$actual" 'BEGIN { exit !(v > a * 0.95 && v < a * 1.05) }' || bad=$((bad + 1))
	k=$((k + 1))
done
echo "requests/s through Prometheus:$vals; loadgen: $actual"
[ $bad = 0 ] || fail "$bad of $n points more than 5% off loadgen's $actual req/s"
grep -q "^xprobes_responses_total{pid=\"$RPID\"" "$D/text/xprobes_metrics_$RPID.prom" ||
	fail "--textfile: no xprobes_responses_total in $D/text"
# latency's histograms as Prometheus takes them: a histogram in its
# metadata, and the request reads' rate and median through its functions
curl -sG "http://127.0.0.1:$PP/api/v1/metadata" --data-urlencode "metric=xprobes_syscall_duration_seconds" \
	> "$D/meta.json" || fail "metadata query"
[ "$("$JQ" "$D/meta.json" 'data.xprobes_syscall_duration_seconds.[0].type')" = histogram ] ||
	fail "xprobes_syscall_duration_seconds is not a histogram to Prometheus: $(head -c 300 "$D/meta.json")"
lq() {	# lq PROMQL: its value at the end of the load
	curl -sG "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" \
		--data-urlencode "time=$((t1 - 1))" > "$D/lq.json" &&
		"$JQ" "$D/lq.json" 'data.result.[0].value.[1]'
}
reads=$(lq 'sum(rate(xprobes_syscall_duration_seconds_count{syscall="read"}[4s]))') ||
	fail "no read rate: $(head -c 300 "$D/lq.json")"
p50=$(lq 'histogram_quantile(0.5, sum by (le) (rate(xprobes_syscall_duration_seconds_bucket{syscall="read"}[4s])))') ||
	fail "no read median: $(head -c 300 "$D/lq.json")"
echo "latency through Prometheus: reads/s $reads, median read ${p50}s"
# redis reads each request once (and a read that finds nothing, EAGAIN,
# at most as often); a median read of a request in memory is well under 1 ms
awk -v r="$reads" -v a="$actual" 'BEGIN { exit !(r >= a * 0.95 && r <= a * 2.1) }' ||
	fail "reads/s $reads against $actual requests/s"
awk -v p="$p50" 'BEGIN { exit !(p > 0 && p < 0.001) }' || fail "median read ${p50}s"
echo "prometheus scraped xprobectl metrics --listen: $n points of requests/s within 5% of loadgen's $actual; latency --listen: reads/s $reads, median read ${p50}s"
