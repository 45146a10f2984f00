# Only a fully privileged caller may talk to xprobes: an unprivileged user and
# root without CAP_NET_ADMIN or without CAP_SYS_ADMIN get EPERM.
. /xp/selftests/tests/lib.sh

expect_rc "root may" 0 nlraw $CMD_STATUS

expect_rc "nobody: status" 1 dropcaps -u 65534 xprobectl status
assert_match "nobody: clear message" "permission denied.*CAP_NET_ADMIN" "$OUT"
expect_rc "nobody: raw" 1 dropcaps -u 65534 nlraw $CMD_STATUS
assert_match "nobody: EPERM" "^error 1 " "$OUT"
expect_rc "nobody: peek" 1 dropcaps -u 65534 nlraw $CMD_PEEK $A_PID:u32:1 $A_SYMBOL:str:schedule
assert_match "nobody: peek EPERM" "^error 1 " "$OUT"

expect_rc "root, no capabilities" 1 dropcaps -c nlraw $CMD_STATUS
assert_match "no caps: EPERM" "^error 1 " "$OUT"
expect_rc "root without CAP_NET_ADMIN" 1 dropcaps -k 12 nlraw $CMD_STATUS
assert_match "no NET_ADMIN: EPERM" "^error 1 " "$OUT"
expect_rc "root without CAP_SYS_ADMIN" 1 dropcaps -k 21 nlraw $CMD_STATUS
assert_match "no SYS_ADMIN: EPERM" "^error 1 " "$OUT"
expect_rc "root without an unrelated capability" 0 dropcaps -k 0 nlraw $CMD_STATUS
