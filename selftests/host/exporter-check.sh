#!/bin/sh
# xprobectl's exporter as people and attackers meet it (issue 40), on this
# host (metrics in fallback mode):
# - --listen: a port out of range is refused; :0 serves on the port the
#   kernel picked and says which; a port in use is one clear line;
# - a bounded, local slowloris (selftests/host/slowloris.c: 5000
#   connections from 127.0.0.2, each sending a header line every 2 s and
#   never the end) while /metrics is scraped from 127.0.0.1 every 100 ms:
#   every scrape is answered, the exporter keeps few descriptors, and its
#   log is a few lines, not one per connection (before: libmicrohttpd in
#   select() mode failed every scrape past fd 1023, and wrote 849 lines
#   for 1200 connections).
#   exporter-check.sh XPROBECTL DIR
set -u
CTL=$1 D=$2
HERE=$(dirname "$0")
rm -rf "$D" && mkdir -p "$D"
pids=
cleanup() { for p in $pids; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$D"/*.err; do echo "--- $f"; tail -n 5 "$f"; done; exit 1; }
${CC:-cc} -O2 -o "$D/slowloris" "$HERE/slowloris.c" || fail "cannot build slowloris"
sleep 600 < /dev/null > /dev/null 2>&1 &	# not holding the caller's pipe
T=$!
pids="$pids $T"

# serve PORTSPEC NAME: metrics --listen PORTSPEC in the background; its
# stderr in $D/NAME.err, its pid in $mp, the port it says it serves on in $port
serve() {
	"$CTL" metrics --no-views --listen "$1" "$T" > /dev/null 2> "$D/$2.err" &
	mp=$!
	pids="$pids $mp"
	i=0
	until port=$(sed -n 's|^xprobectl: serving http://[^ ]*:\([0-9]*\)/metrics$|\1|p' "$D/$2.err" 2> /dev/null) &&
		[ -n "$port" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] && kill -0 $mp 2> /dev/null || fail "$2: metrics did not serve"
		sleep 0.1
	done
}

for bad in :99999 :65536 :-1 :http; do
	"$CTL" metrics --no-views --listen "$bad" "$T" > /dev/null 2> "$D/bad.err"
	rc=$?
	[ $rc = 2 ] || fail "--listen $bad: exit $rc, not 2 (a usage error)"
	[ "$(wc -l < "$D/bad.err")" = 1 ] && grep -q "^xprobectl: bad --listen '$bad'" "$D/bad.err" ||
		fail "--listen $bad: $(cat "$D/bad.err")"
done
serve 127.0.0.1:0 zero
[ "$port" -gt 0 ] || fail ":0 served on port '$port'"
"$CTL" metrics --no-views --listen "127.0.0.1:$port" "$T" > /dev/null 2> "$D/inuse.err"
[ $? != 0 ] && [ "$(wc -l < "$D/inuse.err")" = 1 ] && grep -q "the port is in use" "$D/inuse.err" ||
	fail "a port in use: $(cat "$D/inuse.err")"

out=$("$D/slowloris" "$port" 5000 12 127.0.0.2) || fail "slowloris failed: $out"
echo "# $out"
fds=$(ls /proc/$mp/fd | wc -l)
kill -INT $mp
wait $mp || fail "metrics ended with $? after the slowloris"
asked=$(echo "$out" | sed -n 's/.*scrapes \([0-9]*\) of \([0-9]*\) answered/\2/p')
answered=$(echo "$out" | sed -n 's/.*scrapes \([0-9]*\) of \([0-9]*\) answered/\1/p')
held=$(echo "$out" | sed -n 's/.*held \([0-9]*\) at the end.*/\1/p')
[ "${asked:-0}" -ge 50 ] || fail "only ${asked:-0} scrapes made"
[ "$answered" = "$asked" ] || fail "$answered of $asked scrapes answered under the slowloris"
[ "$held" -le 16 ] || fail "the exporter kept $held of the slow connections (16 per address)"
[ "$fds" -lt 100 ] || fail "the exporter held $fds descriptors after the slowloris"
lines=$(grep -c '^xprobectl: http:' "$D/zero.err")
[ "$lines" -le 5 ] || fail "$lines lines of http messages for one slowloris"
echo "exporter: bad ports refused, :0 and a port in use said plainly; under 5000 slow connections $answered of $asked scrapes answered, $held held, $lines log lines"
