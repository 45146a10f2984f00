. /xp/selftests/tests/lib.sh
redis-server --port 6379 --save '' --appendonly no --daemonize no > /tmp/redis.log 2>&1 &
R=$!
sleep 1
for round in 1 2; do
redis-cli -p 6379 config resetstat > /dev/null
xprobectl trace --json $R > /tmp/t$round.json 2> /tmp/t$round.err &
T=$!
i=0
until grep -q "^xprobectl: tracing" /tmp/t$round.err; do i=$((i+1)); [ $i -lt 1200 ] || fail "no attach: $(cat /tmp/t$round.err)"; sleep 0.1; done
note "$(grep '^xprobectl: tracing' /tmp/t$round.err)"
sleep 2
redis-benchmark -p 6379 -c 2 -n 1500 -t get,set,incr,lpush,sadd,hset -q > /tmp/rb.out 2>&1
sleep 1
kill -INT $T; wait $T
redis-cli -p 6379 info commandstats | tr -d '\r' > /tmp/cs.txt
cat /tmp/cs.txt
for f in setCommand getCommand incrCommand lpushCommand saddCommand hsetCommand; do
	echo "round $round $f: trace $(jsonq /tmp/t$round.json "functions.[name=$f].calls")"
done
grep -i "counters" -A0 /tmp/t$round.json | head -1
jsonq /tmp/t$round.json counters
done
kill $R
