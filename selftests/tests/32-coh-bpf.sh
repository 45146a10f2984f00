# Coherence with BPF trampolines: attach and detach a BPF fentry program on a
# function in A's private copy 100 times while A calls it hot. A's calls are
# counted while attached (its copy calls the trampoline), and once a
# trampoline is freed A never calls it again (no crash); audit clean.
. /xp/selftests/tests/lib.sh
trap reset_tracing EXIT
F=__x64_sys_getppid

sysloop -n 0 getppid &
A=$!
xprobectl view add $A > /dev/null || fail "view add"
id=$(xprobectl hook add $A $F) || fail "hook add"
jump_among $id
R=$(scaled 100)
fentryloop -p $A -n $R -m 30 > /tmp/fl.out || fail "fentryloop: $(tail -n 3 /tmp/fl.out)"
rounds=$(awk '$2 > 0' /tmp/fl.out | wc -l)
note "rounds in which fentry counted A: $rounds of $R"
[ "$rounds" -ge $((R * 9 / 10)) ] || fail "A's calls were not seen by fentry in $((R - rounds)) rounds"
sleep 0.5
kill -0 $A || fail "A died"
[ "$(hook_col $id 5)" -gt 0 ] || fail "the hook stopped counting"
assert_match "audit" "^0 private page" "$(xprobectl audit)"
assert_eq "audit mismatches" 0 "$(status_field audit_mismatches)"
xprobectl view del $A
kill $A; wait $A
