# Experiment 3: what a view costs. Memory: the module's own accounting
# (status memory_bytes) for a view with no hook, then with hooks on 1..8
# functions on distinct text pages; per view and per hooked page. Time: view
# creation and deletion, hook addition and deletion, against opening and
# closing a kprobe perf event (register_kprobe and unregister_kprobe), N each
# (opcost), medians.
. /xp/bench/lib.sh
N=${N:-50}
FUNCS="__x64_sys_getppid __x64_sys_getpid vfs_read vfs_write do_sys_poll __x64_sys_nanosleep do_exit schedule"

start_ready /tmp/A.out sysloop -g -n 1 getppid
A=$BG
mem() { xprobectl status | awk '$1 == "memory:" { print $2 }'; }
pages() { xprobectl view list | awk -v p=$A '$1 == p { print $4 }'; }

m0=$(mem)
xprobectl view add $A > /dev/null || exit 1
m1=$(mem)
json="{\"experiment\":\"op-cost\",\"memory\":{\"module_idle_bytes\":$m0,\"view_bytes\":$((m1 - m0)),\"hooks\":["
echo "memory: module idle $m0 B, empty view $((m1 - m0)) B"
printf '%6s %6s %12s\n' hooks pages "view bytes"
k=0 first=1
for f in $FUNCS; do
	xprobectl hook add $A $f > /dev/null || { echo "bench: cannot hook $f" >&2; continue; }
	k=$((k + 1))
	m=$(mem) p=$(pages)
	printf '%6d %6d %12d\n' $k $p $((m - m0))
	[ $first = 1 ] || json="$json,"
	first=0
	json="$json{\"hooks\":$k,\"pages\":$p,\"bytes\":$((m - m0))}"
done
# Least-squares slope of bytes over pages: memory per hooked page.
per_page=$(echo "$json" | sed 's/},{/}\n{/g' | sed -n 's/.*"pages":\([0-9]*\),"bytes":\([0-9]*\).*/\1 \2/p' |
	awk '{ n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
	     END { d = n * sxx - sx * sx; if (d) printf "%.0f", (n * sxy - sx * sy) / d; else print 0 }')
echo "memory per hooked page: $per_page B"
xprobectl view del $A
json="$json],\"bytes_per_hooked_page\":$per_page},\"time_us\":{"

echo "time per operation (median of $N, microseconds; min - max)"
first=1
opcost $A __x64_sys_getppid $N > /tmp/opcost.out || { cat /tmp/opcost.out; exit 1; }
while read -r op med lo hi; do
	printf '  %-14s %10.1f   %.1f - %.1f\n' $op $med $lo $hi
	[ $first = 1 ] || json="$json,"
	first=0
	json="$json\"$op\":{\"median\":$med,\"min\":$lo,\"max\":$hi}"
done < /tmp/opcost.out
echo "$json}}" > "$OUT/op-cost.json"
kill $A
echo "results: $OUT/op-cost.json"
