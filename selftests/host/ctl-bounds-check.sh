#!/bin/sh
# xprobectl's bounds and validation (issue 40), on this host: each a
# one-line error with the right exit status (2 usage, 1 runtime), at once,
# never a flood or a wait:
# - metrics/trace -i below 0.01 s (metrics -i 1e-9 printed 134 000 lines
#   in 2 s);
# - metrics and latency of a kernel thread (PID 2: they reported zeros);
# - --cgroup naming a path outside the cgroup2 mount, or a file (it waited
#   forever "for it to exist");
# - trace --pprof - (it wrote a file named "-");
# - --list-functions -f c:malloc of a command not run yet names libc.so.6,
#   not the linker script libc.so;
# - aliased library functions: write and close share their addresses with
#   __write and __close; -f c:write said "no function matches -f in
#   /usr/bin/..." (the program, not libc) and -f c:close -f c:read traced
#   read alone. Every name of an address matches, and the message names
#   the files searched.
#   ctl-bounds-check.sh XPROBECTL DIR
set -u
CTL=$1 D=$2
mkdir -p "$D"
fail() { echo "FAIL: $*"; exit 1; }

# one WANT-STATUS PATTERN ARGS...: exits WANT-STATUS within 10 s, its
# stderr one line matching PATTERN
one() {
	want=$1 pat=$2
	shift 2
	timeout 10 "$CTL" "$@" > "$D/out" 2> "$D/err" < /dev/null
	rc=$?
	[ $rc = "$want" ] || fail "xprobectl $*: exit $rc, not $want: $(head -c 300 "$D/err")"
	[ "$(wc -l < "$D/err")" = 1 ] && grep -q "$pat" "$D/err" ||
		fail "xprobectl $*: said $(head -c 300 "$D/err")"
	[ ! -s "$D/out" ] || fail "xprobectl $*: printed $(head -c 200 "$D/out")"
}

one 2 "bad interval '1e-9' (seconds, 0.01 at least)" metrics --no-views -i 1e-9 1
one 2 "bad interval '0.001'" trace --no-views -i 0.001 -- true
# a kernel thread: kthreadd, pid 2 outside a pid namespace
if [ "$(cat /proc/2/comm 2> /dev/null)" = kthreadd ]; then
	one 1 "pid 2 is a kernel thread" metrics --no-views 2
	one 1 "pid 2 is a kernel thread" latency --no-views 2
fi
mp=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$mp" ]; then	# without cgroup v2, --cgroup says so first
	one 2 "a path outside the cgroup2 mount" metrics --no-views --cgroup /etc
	one 2 "a path outside the cgroup2 mount" latency --no-views --cgroup /etc/passwd
	one 2 "a file, not a cgroup" metrics --no-views --cgroup "$mp/cgroup.procs"
	one 2 "the root cgroup is the whole machine" metrics --no-views --cgroup /
fi
one 2 "writes a file, not stdout" trace --no-views --pprof - -- true
[ ! -e ./- ] || fail "trace --pprof - left a file named '-'"
"$CTL" trace --list-functions -f c:malloc -- /bin/true > "$D/list" 2> "$D/err" ||
	fail "--list-functions -f c:malloc: $(cat "$D/err")"
grep -q "/libc\.so\.6 malloc " "$D/list" || fail "--list-functions -f c:malloc: $(head -n 3 "$D/list")"
"$CTL" trace --list-functions -f c:write -f c:close -- /bin/true > "$D/list" 2> "$D/err" ||
	fail "--list-functions -f c:write -f c:close: $(cat "$D/err")"
grep -q "/libc\.so\.6 write " "$D/list" && grep -q "/libc\.so\.6 close " "$D/list" ||
	fail "--list-functions -f c:write -f c:close: $(cat "$D/list")"
one 1 "no function matches -f in /.*libc\.so\.6 (see --list-functions)" \
	trace --no-views -f c:no_such_function -- /bin/true
"$CTL" trace --no-views -f c:close -f c:read -- /bin/cat /proc/self/stat > "$D/out" 2> "$D/err" ||
	fail "trace -f c:close -f c:read: $(cat "$D/err")"
for fn in close read; do
	n=$(awk -v f="libc.so.6:$fn" '$1 == f { print $2 }' "$D/out")
	[ "${n:-0}" -ge 1 ] || fail "trace -f c:close -f c:read: no calls of $fn: $(cat "$D/out")"
done
echo "ctl bounds: -i floors, kernel threads, --cgroup paths and files, --pprof -, c:malloc in libc.so.6: each one line, at once; aliases (write, close) matched"
