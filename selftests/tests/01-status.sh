# genl STATUS round trip: the module answers with its version and counters,
# in text and JSON, and the version is the module's own (modinfo).
. /xp/selftests/tests/lib.sh

want=$(cat /sys/module/xprobes/version)
expect_rc "status" 0 xprobectl status
assert_match "status text" "module: +loaded, version $want" "$OUT"
assert_match "status mode" "mode: +views" "$OUT"

expect_rc "status --json" 0 xprobectl status --json
js=$OUT
assert_eq "json loaded" true "$(json_get "$js" loaded)"
assert_eq "json version" "$want" "$(json_get "$js" version)"
assert_eq "json mode" views "$(json_get "$js" mode)"
assert_eq "json views" 0 "$(json_get "$js" views)"
assert_eq "json hooks" 0 "$(json_get "$js" hooks)"
