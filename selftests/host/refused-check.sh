#!/bin/sh
# Functions the kernel's uprobes refuse, traced with others in fallback
# mode on the host kernel (issue 40): rf_lock (a lock prefix, which trace
# sees from its bytes) and rf_cli (cli, which only the kernel's table
# knows: one refusal of the file's uprobe_multi link, halved until the
# function is alone) are left out, each named; rf_work keeps uprobe_multi
# links, no probe of its own (each of those costs a grace period to
# detach: 26 s to end a trace of c:_IO_* and pthread_spin_lock), and its
# calls are exact; the program's output is the same as untraced.
#   refused-check.sh XPROBECTL DIR
set -eu
CTL=$1 D=$2
HERE=$(dirname "$0")
mkdir -p "$D"
${CC:-cc} -O2 -o "$D/refused" "$HERE/refused.c"
want=$("$D/refused" 1000)
rm -f "$D/go" "$D/err"	# a line from an earlier run would end the wait below
"$CTL" trace --no-views -f 'rf_*' -- "$D/refused" 1000 "$D/go" > "$D/out" 2> "$D/err" &
tp=$!
i=0
until grep -q "^xprobectl: tracing" "$D/err" 2> /dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] && kill -0 $tp 2> /dev/null || { echo "trace did not start:"; cat "$D/err"; kill $tp 2> /dev/null; exit 1; }
	sleep 0.1
done
# trace's uprobes, as the kernel holds them: bpf links of their types, and
# perf events (one probe each, the way without uprobe_multi)
ls -l /proc/$tp/fd > "$D/fds" 2>&1
cat /proc/$tp/fdinfo/* > "$D/fdinfo" 2>&1 || true
perf=$(grep -c 'perf_event' "$D/fds" || true)
multi=$(grep -c 'link_type:.*uprobe_multi' "$D/fdinfo" || true)
touch "$D/go"
wait $tp || { echo "trace failed:"; cat "$D/err"; exit 1; }
fail() { echo "$*"; cat "$D/err"; exit 1; }
[ "$(grep '^refused ok' "$D/out")" = "$want" ] || fail "traced, it printed: $(grep '^refused' "$D/out")"
grep -q "not probing 1 function whose first instruction has a lock or segment prefix.*(rf_lock)" "$D/err" ||
	fail "trace did not say it left rf_lock out"
grep -q "cannot probe rf_cli in .*error 524); left out" "$D/err" || fail "trace did not say it left rf_cli out"
calls=$(awk '$1 == "rf_work" { print $2 }' "$D/out")
[ "$calls" = 1000 ] || fail "rf_work: $calls calls, not 1000"
# uprobe_multi came in 6.6: from there, no link is a failure
v=$(uname -r | cut -d- -f1)
maj=${v%%.*} min=$(echo "$v" | cut -d. -f2)
[ "$multi" -gt 0 ] || [ "$maj" -lt 6 ] || { [ "$maj" = 6 ] && [ "$min" -lt 6 ]; } ||
	fail "trace held no uprobe_multi link on $(uname -r) ($perf perf events)"
if [ "$multi" -gt 0 ]; then
	[ "$perf" = 0 ] || fail "trace held $perf perf events (a probe each) beside $multi uprobe_multi links"
	[ "$multi" -le 4 ] || fail "trace held $multi uprobe_multi links for one function"
	echo "refused: both left out and named, rf_work's 1000 calls exact on $multi uprobe_multi links, no single probe"
else
	echo "refused: both left out and named, rf_work's 1000 calls exact (no uprobe_multi on $(uname -r): $perf perf events)"
fi
