# (f) A BPF raw tracepoint program on xprobes_hook (loaded with libbpf) counts
# exactly A's calls, attributed to A's process, and nothing for B: through an
# int3 hook and through a call hook (the program runs in both contexts); a
# hook on a function the program calls is a nested hit, dropped and counted.
. /xp/selftests/tests/lib.sh
N=1000
F=__x64_sys_getppid

rm -f /tmp/hc.out	# not another test's (the wait below could read it first)
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

# A hook on a function the BPF program itself calls (bpf_get_current_pid_tgid)
# hits again inside the dispatch of the first hook: that nested hit is counted
# as nested, fires nothing (no recursion), and its instruction still runs
# (the program still gets the pid). Through calls, then through traps.
H=bpf_get_current_pid_tgid
hookcount > /tmp/hc2.out &
HC=$!
wait_for /tmp/hc2.out attached "hookcount did not attach"
for kind in call trap; do
	start_loop /tmp/n.out -e -n $N getppid
	A=$LOOP_PID
	xprobectl view add $A > /dev/null || fail "view add"
	flag=
	[ $kind = trap ] && flag=--trap
	id=$(xprobectl hook add $flag $A $F) || fail "hook add $F"
	nid=$(xprobectl hook add $flag $A $H) || fail "hook add $H"
	go_loop $A /tmp/n.out
	note "$kind: $(xprobectl hook list $A | tail -n 2 | tr -s ' ' | tr '\n' ';')"
	assert_eq "$kind: hits of $F" $N "$(hook_col $id 5)"
	assert_eq "$kind: nested hits of $H" $N "$(hook_col $nid 7)"
	assert_eq "$kind: hits of $H (it fires only nested)" 0 "$(hook_col $nid 5)"
	xprobectl view del $A
	end_loop $A /tmp/n.out
	eval "id_$kind=$id"
done
kill -USR1 $HC
wait $HC
assert_eq "BPF count through nested hooks (call)" $N "$(awk -v id=$id_call '$1 == id { n += $3 } END { print n + 0 }' /tmp/hc2.out)"
assert_eq "BPF count through nested hooks (trap)" $N "$(awk -v id=$id_trap '$1 == id { n += $3 } END { print n + 0 }' /tmp/hc2.out)"
