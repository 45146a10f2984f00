# PIDs are resolved in the caller's pid namespace, both ways: a request from
# inside a namespace names that namespace's processes, and replies number
# views as the asker sees them. Nothing an unprivileged user can read from
# the module (kernel log, sysfs, /proc) carries a kernel address.
. /xp/selftests/tests/lib.sh

# --- pid namespaces ---------------------------------------------------------
rm -f /tmp/ns.*
unshare -p -f --mount-proc sh -c '
	sleep 1000 &
	echo $! > /tmp/ns.inner
	xprobectl view add $! > /tmp/ns.add 2>&1; echo $? > /tmp/ns.add.rc
	xprobectl view add '$$' > /tmp/ns.outer 2>&1; echo $? > /tmp/ns.outer.rc
	xprobectl view list > /tmp/ns.list 2>&1
	touch /tmp/ns.done
	wait' > /dev/null 2>&1 &
ns_pid=$!
i=0
while [ ! -f /tmp/ns.done ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "the namespace job did not finish"; sleep 0.1
done
inner=$(cat /tmp/ns.inner)
assert_eq "the sleeper's pid inside its namespace" 2 "$inner"
assert_eq "view add 2 inside the namespace" 0 "$(cat /tmp/ns.add.rc)"
# Its number out here: the NSpid line of /proc/PID/status lists both.
global=$(grep -l '^NSpid:.*[[:space:]]2$' /proc/[0-9]*/status 2>/dev/null |
	while read -r f; do grep -q '^Name:.*sleep' "$f" && basename "$(dirname "$f")"; done | head -n1)
[ -n "$global" ] || fail "cannot find the sleeper's global pid"
note "sleeper: pid $inner inside, $global outside"
assert_match "the view is the sleeper's, seen from outside" "^$global " "$(xprobectl view list | tail -n +2)"
case " $(xprobectl view list | awk 'NR > 1 { printf "%s ", $1 }')" in
*" 2 "*) fail "kthreadd (global pid 2) got a view" ;;
esac
assert_match "the view is numbered 2 inside the namespace" "^2 " "$(tail -n +2 /tmp/ns.list)"
assert_eq "a pid only the outside has is refused inside" 1 "$(cat /tmp/ns.outer.rc)"
assert_match "refusal names the pid" "no process with pid $$" "$(cat /tmp/ns.outer)"
kill -9 "$global" 2>/dev/null
kill "$ns_pid" 2>/dev/null
wait "$ns_pid" 2>/dev/null
i=0
while [ "$(status_field views)" != 0 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the namespace's view did not end"; sleep 0.1
done
note "ok: the view ended with its process"

# --- nothing readable leaks a kernel address ---------------------------------
# A kernel address: ffff... (direct map, image, modules), or any other long
# non-zero hex number.
ADDR='ffff[0-9a-f]{8,}|0x0*[1-9a-f][0-9a-f]{7,}'
# The module's own log lines, with the log made readable to everyone.
restrict=$(cat /proc/sys/kernel/dmesg_restrict)
echo 0 > /proc/sys/kernel/dmesg_restrict
rmmod xprobes && insmod $KO || fail "reload"
log=$(dropcaps -u 65534 dmesg 2>&1 | grep 'xprobes')
echo "$restrict" > /proc/sys/kernel/dmesg_restrict
[ -n "$log" ] || fail "an unprivileged reader should see the module's log lines here"
if printf '%s\n' "$log" | grep -Eiq "$ADDR"; then
	fail "a kernel address in the log: $(printf '%s\n' "$log" | grep -Ei "$ADDR" | head -n 3)"
fi
note "ok: the module's log lines carry no address"
# Everything under /sys/module/xprobes, /proc/modules and /proc/kallsyms as nobody.
dropcaps -u 65534 sh -c '
	find /sys/module/xprobes -type f 2>/dev/null | while read -r f; do
		cat "$f" 2>/dev/null | tr -d "\0" | sed "s|^|$f: |"
	done
	grep xprobes /proc/modules
	grep "\[xprobes\]" /proc/kallsyms' > /tmp/unpriv.read 2>&1
n=$(wc -l < /tmp/unpriv.read)
[ "$n" -gt 10 ] || fail "nobody read too little to judge ($n lines)"
if grep -Eiq "$ADDR" /tmp/unpriv.read; then
	fail "a kernel address readable by nobody: $(grep -Ei "$ADDR" /tmp/unpriv.read | head -n 3)"
fi
note "ok: $n lines readable by nobody, no kernel address among them"
# xprobectl as nobody says what is wrong, and nothing more.
expect_rc "nobody: view list" 1 dropcaps -u 65534 xprobectl view list
if printf '%s\n' "$OUT" | grep -Eiq "$ADDR"; then fail "xprobectl leaked: $OUT"; fi
note "ok: nobody is refused without an address"
