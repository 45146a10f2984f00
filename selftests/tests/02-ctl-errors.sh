# xprobectl's messages and exit codes: usage errors exit 2, runtime errors 1,
# and a missing module gets one line saying so and how to load it.
. /xp/selftests/tests/lib.sh

expect_rc "--version" 0 xprobectl --version
assert_match "--version text" "^xprobectl [0-9]+\.[0-9]+" "$OUT"
expect_rc "--help" 0 xprobectl --help
assert_match "--help lists status" "xprobectl status" "$OUT"
expect_rc "no command" 2 xprobectl
expect_rc "unknown command" 2 xprobectl frobnicate
assert_match "unknown command message" "unknown command 'frobnicate'" "$OUT"
expect_rc "unknown option" 2 xprobectl status --bogus
expect_rc "extra argument" 2 xprobectl status extra

unload_module
expect_rc "status without module" 1 xprobectl status
assert_eq "one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
assert_match "says not loaded" "module is not loaded" "$OUT"
assert_match "says how to load" "insmod xprobes.ko" "$OUT"
load_module
expect_rc "status after reload" 0 xprobectl status

# An xprobectl built from another uapi/xprobes.h than the module refuses to
# talk to it, in one line naming both interfaces; status, trace and a view
# alike (trace does not fall back to its mode without the module: that would
# hide the mismatch). The module's own xprobectl says which it speaks.
expect_rc "status names the interface" 0 xprobectl status
mine=$(printf '%s\n' "$OUT" | sed -n 's/^module: .*, interface \([0-9a-f]\{8\}\)$/\1/p')
assert_match "status names the interface" "^[0-9a-f]{8}$" "$mine"
# status learns the interface from the reply it prints: one STATUS request
# after the family's lookup, not one to check and one to show.
strace -f -e trace=sendmsg,sendto -o /tmp/02-status.strace xprobectl status > /dev/null ||
	fail "status under strace"
assert_eq "status: the family's lookup and one STATUS request" 2 \
	"$(grep -c -E '^([0-9]+ +)?send(msg|to)\(' /tmp/02-status.strace)"
for cmd in "status" "view list" "trace -d 1 -f xw_delay -- workload sleep -n 1 -t 5"; do
	expect_rc "another interface: $cmd" 1 xprobectl-otherabi $cmd
	assert_eq "another interface: $cmd: one line" 1 "$(printf '%s\n' "$OUT" | wc -l)"
	assert_match "another interface: $cmd: says so" \
		"module \(.*interface $mine\) was built from other sources than this xprobectl \(.*interface 00badab1\)" "$OUT"
	assert_match "another interface: $cmd: says what to do" "install both from one release" "$OUT"
done
# metrics and latency (a service after an upgrade, before the reload) say
# the same and run on in fallback mode, saying why.
for cmd in metrics latency; do
	expect_rc "another interface: $cmd runs on" 0 xprobectl-otherabi $cmd -d 1 $$
	assert_match "another interface: $cmd: says so" \
		"module \(.*interface $mine\) was built from other sources" "$OUT"
	assert_match "another interface: $cmd: fallback mode, saying why" \
		"fallback mode: xprobes module built from other sources \(reload it" "$OUT"
done
