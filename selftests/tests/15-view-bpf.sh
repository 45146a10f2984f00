# (f) A BPF raw tracepoint program on xprobes_hook (loaded with libbpf) counts
# exactly A's calls, attributed to A's process, and nothing for B: through an
# int3 hook and through a call hook (the program runs in both contexts).
. /xp/selftests/tests/lib.sh
N=1000
F=__x64_sys_getppid

hookcount > /tmp/hc.out &
HC=$!
wait_for /tmp/hc.out attached "hookcount did not attach"
start_loop /tmp/a.out -e -n $N getppid
A=$LOOP_PID
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A $F --cookie 77) || fail "hook add"
off=10 cid=
while [ $off -lt 48 ] && [ -z "$cid" ]; do
	if j=$(xprobectl hook add --json $A $F+$off 2>/dev/null); then
		case $j in
		*'"kind":"call"'*) cid=$(json_get "$j" id) ;;
		*) xprobectl hook del $(json_get "$j" id) ;;
		esac
	fi
	off=$((off + 1))
done
[ -n "$cid" ] || fail "no call hook in $F"
go_loop $A /tmp/a.out
sysloop -n $N getppid			# B, untraced
kill -USR1 $HC
wait $HC
note "hookcount: $(tr '\n' ';' < /tmp/hc.out)"
assert_eq "BPF count for A" $N "$(awk -v id=$id -v a=$A '$1 == id && $2 == a { print $3 }' /tmp/hc.out)"
assert_eq "BPF count for A, call hook" $N "$(awk -v id=$cid -v a=$A '$1 == id && $2 == a { print $3 }' /tmp/hc.out)"
assert_eq "BPF events from other processes" 0 "$(awk -v a=$A 'NF == 3 && $2 != a { n += $3 } END { print n + 0 }' /tmp/hc.out)"
assert_eq "module count agrees" $N "$(hook_col $id 5)"
assert_eq "module count agrees, call hook" $N "$(hook_col $cid 5)"
xprobectl view del $A
end_loop $A /tmp/a.out
