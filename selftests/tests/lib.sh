# Shared helpers for the guest selftests (sourced by each test).
# A test prints what it checks, exits 0 on pass, 1 on failure, 4 to skip.

KO=/xp/xprobes.ko

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 4; }
note() { echo "$*"; }

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	note "ok: $1 = '$3'"
}

# assert_match WHAT PATTERN TEXT   (grep -E pattern)
assert_match() {
	printf '%s\n' "$3" | grep -Eq -- "$2" || fail "$1: '$3' does not match /$2/"
	note "ok: $1 matches /$2/"
}

# expect_rc WHAT EXPECTED_RC CMD...   runs CMD, output in $OUT, checks the exit code
expect_rc() {
	local what=$1 want_rc=$2 rc
	shift 2
	OUT=$("$@" 2>&1)
	rc=$?
	[ "$rc" = "$want_rc" ] || fail "$what: '$*' exited $rc, expected $want_rc; output: $OUT"
	note "ok: $what (exit $rc)"
}

module_loaded() { lsmod | grep -q '^xprobes '; }
load_module() { module_loaded || insmod $KO || fail "insmod failed"; }
unload_module() { ! module_loaded || rmmod xprobes || fail "rmmod failed"; }

# meminfo FIELD -> value in kB
meminfo() { awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo; }

# Kernel memory that a leak in the module would grow: slab, vmalloc, per-cpu.
kmem_kb() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	echo $(( $(meminfo Slab) + $(meminfo VmallocUsed) + $(meminfo Percpu) ))
}

# json_get JSON KEY -> scalar value of the first "KEY": in JSON (no nesting awareness)
json_get() {
	printf '%s' "$1" | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|[^,}]*\).*/\1/p" | tr -d '"'
}

# Command and attribute numbers from the uapi header (CMD_PEEK, A_PID, ...).
. /xp/selftests/ids.sh
