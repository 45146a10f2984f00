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
