# trace of every function of redis-server (views mode: user hooks with
# records where the module allows, uprobes on the rest), fully attached
# before the load: each command redis-benchmark sends is counted exactly,
# against Redis's own INFO commandstats (issue 41 asks for this check).
#
# Until 2026-11-30 a call was lost now and then in records mode (1499 of
# 1500 in 3 of 8 sessions), with as many abandoned frames as unmatched
# returns (7-18 a session), and the test was skipped. The pairs were
# uprobe'd functions tail-calling user-hooked ones (sdsempty() into
# _sdsnewlen()): the records reached BPF after the uprobes' events, and
# the records routine cannot tell a tail call from a slot holding the
# uretprobe trampoline. Now the view hands a thread's records over where
# the uprobe handlers run, and a record's entry at a uprobe frame's sp is
# its tail call: 0 pairs on 6.12 and 6.1. Each pair is a call that could
# be lost, so there must be none.
# A return with no entry while the probes were still going in (Redis's
# timer runs during the attach; a file's return probes go in before its
# entry probes) is counted as early, not unmatched, since 2026-11-30: make
# check failed on one such return (unmatched 1, abandoned 0) in 2 of 4
# sessions on 6.12 that day; 10 sessions under load after the change had
# early 1 in 5, unmatched 0 in all.
#
# Then more functions than trace took until 2026-12-07 (4096: a bit of the
# records cookie said "no returns", and records carried 13 bits of it):
# manyfn's 10000, each called N % 3 + 1 times, every count exact, the ones
# past 4096 too (no sums in the process there: the module folds their
# calls) and past 8192.
. /xp/selftests/tests/lib.sh
. /xp/selftests/servers.sh
for b in redis-server redis-benchmark; do
	command -v $b > /dev/null || fail "$b is not in the VM image (make deps installs it)"
done
N=$(scaled 1500 300)
PORT=6391
CMDS="set get incr lpush sadd hset"

# redis_cmd COMMAND...: one inline command to the server, its reply
redis_cmd() { printf '%s\r\n' "$*" | nc -w 2 127.0.0.1 $PORT | tr -d '\r'; }

server_start redis $PORT || fail "cannot start redis-server"
R=$SRV_PID
trap 'server_stop' EXIT
redis_cmd CONFIG RESETSTAT | grep -q '^+OK' || fail "CONFIG RESETSTAT"
xprobectl trace --json $R > /tmp/all.json 2> /tmp/all.err &
T=$!
wait_for /tmp/all.err '^xprobectl: tracing' "trace did not attach" 3000
note "$(grep '^xprobectl: tracing' /tmp/all.err)"
uh=$(sed -n 's/^xprobectl: tracing .*, \([0-9]*\) through user hooks.*/\1/p' /tmp/all.err)
assert_ge "functions through user hooks" "${uh:-0}" 1000
redis-benchmark -p $PORT -c 2 -n $N -t $(echo $CMDS | tr ' ' ,) -q > /tmp/rb.out 2>&1 ||
	fail "redis-benchmark: $(tail -n 3 /tmp/rb.out)"
kill -INT $T
wait $T || fail "trace ended with $?: $(tail -n 3 /tmp/all.err)"
redis_cmd INFO commandstats > /tmp/cs.txt
note "records $(jsonq /tmp/all.json counters.records), calls summed by Redis itself $(jsonq /tmp/all.json counters.calls_summed), unmatched $(jsonq /tmp/all.json counters.unmatched), abandoned $(jsonq /tmp/all.json counters.abandoned), early $(jsonq /tmp/all.json counters.early) (calls in flight when the probes went in)"
# Most calls nest in a caller whose entry is still in the CPU's buffer: the
# process sums them itself (XPROBES_F_SUMS), and the counts below must hold.
assert_ge "calls Redis summed itself" "$(jsonq /tmp/all.json counters.calls_summed)" $((N * 10))
assert_eq "returns that matched no open call" 0 "$(jsonq /tmp/all.json counters.unmatched)"
assert_eq "calls abandoned (nothing here unwinds past a frame)" 0 "$(jsonq /tmp/all.json counters.abandoned)"
for c in $CMDS; do
	want=$(sed -n "s/^cmdstat_$c:calls=\([0-9]*\),.*/\1/p" /tmp/cs.txt)
	assert_eq "Redis counted $N ${c}s" $N "$want"
	assert_eq "trace's ${c}Command calls, as Redis counted them" "$want" \
		"$(jsonq /tmp/all.json "functions.[name=${c}Command].calls")"
done

server_stop
trap - EXIT

# manyfn: 10000 functions (and the program's own), on user hooks with
# records; its table (the same figures as --json, read with one awk, where
# 10000 jsonq lookups take minutes in the VM)
rm -f /tmp/mf.go
xprobectl trace -n 20000 -f '*' -- manyfn /tmp/mf.go > /tmp/mf.txt 2> /tmp/mf.err &
T=$!
wait_for /tmp/mf.err '^xprobectl: tracing' "trace of manyfn did not attach" 3000
note "$(grep '^xprobectl: tracing' /tmp/mf.err)"
nf=$(sed -n 's/^xprobectl: tracing \([0-9]*\) functions.*/\1/p' /tmp/mf.err)
assert_ge "functions traced" "${nf:-0}" 10000
uh=$(sed -n 's/^xprobectl: tracing .*, \([0-9]*\) through user hooks.*/\1/p' /tmp/mf.err)
assert_ge "manyfn's functions through user hooks" "${uh:-0}" 9000
touch /tmp/mf.go
wait $T || fail "trace -- manyfn ended with $?: $(tail -n 3 /tmp/mf.err)"
grep -q '^manyfn: 10000 functions called' /tmp/mf.err || fail "manyfn did not run: $(tail -n 3 /tmp/mf.err)"
# FUNCTION CALLS ...: mf_N must show N % 3 + 1 calls, each N once
out=$(awk '$1 ~ /^mf_[0-9]+$/ { n = substr($1, 4) + 0; f++; t += $2; seen[n]++
		if ($2 != n % 3 + 1 && !bad++) first = $1 ": " $2 " calls, not " n % 3 + 1 }
	END { for (n = 1000; n < 11000; n++) if (seen[n] != 1 && !miss++) m = "mf_" n
		print f + 0, t + 0, bad + 0, miss + 0, (first ? first : "-"), (m ? m : "-") }' /tmp/mf.txt)
set -- $out
assert_eq "manyfn's functions in the table" 10000 "$1"
assert_eq "manyfn's calls counted" 20000 "$2"
assert_eq "manyfn's functions with a wrong count (first: $5)" 0 "$3"
assert_eq "manyfn's functions missing or twice (first: $6)" 0 "$4"
unm=$(sed -n 's/^# events: .* unmatched=\([0-9]*\) .*/\1/p' /tmp/mf.txt)
assert_eq "manyfn: returns that matched no open call" 0 "$unm"
note "manyfn: 10000 functions exact; $(grep -o 'records=[0-9]*' /tmp/mf.txt), $(grep -o 'calls_summed=[0-9]*' /tmp/mf.txt)"
