# Malformed generic netlink requests are refused with an extack message and
# change nothing; a well-formed one still works afterwards.
. /xp/selftests/tests/lib.sh

# refuse WHAT ERRNO MSG-PATTERN nlraw-args...
refuse() {
	local what=$1 errno=$2 pat=$3 out rc
	shift 3
	out=$(nlraw "$@")
	rc=$?
	[ $rc = 1 ] || fail "$what: expected a refusal, got rc $rc: $out"
	assert_match "$what errno" "^error $errno " "$out"
	assert_match "$what message" "$pat" "$out"
}

self=$$
refuse "unknown attribute" 22 "[Uu]nknown attribute" $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:str:schedule 200:u32:1
refuse "attribute type out of range" 22 "[Uu]nknown attribute|policy" $CMD_PEEK $A_PID:u32:$self 65000:u32:1
refuse "wrong type (u64 for u32)" 22 "length|policy|[Ii]nvalid" $CMD_PEEK $A_PID:u64:$self $A_SYMBOL:str:schedule
refuse "wrong type (u8 for u32)" 22 "length|policy|[Ii]nvalid" $CMD_PEEK $A_PID:u8:1 $A_SYMBOL:str:schedule
refuse "string without NUL" 22 "NUL|policy|[Ii]nvalid" $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:strn:schedule
refuse "missing attribute" 22 "[Mm]issing attribute" $CMD_PEEK $A_SYMBOL:str:schedule
refuse "pid zero" 34 "out of range" $CMD_PEEK $A_PID:u32:0 $A_SYMBOL:str:schedule
refuse "oversize length" 34 "out of range" $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:str:schedule $A_LEN:u32:100000
refuse "oversize symbol" 22 "policy|long|[Ii]nvalid" $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:fill:600
refuse "huge attribute" 22 "policy|long|[Ii]nvalid" $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:fill:60000
refuse "address and symbol" 22 "exactly one" $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:str:schedule $A_ADDR:u64:1
refuse "address outside text" 34 "not inside kernel or module text" $CMD_PEEK $A_PID:u32:$self $A_ADDR:u64:0xffff888000000000
refuse "unknown symbol" 2 "unknown kernel symbol" $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:str:no_such_function_xyz
refuse "nonexistent pid" 3 "no process with pid" $CMD_PEEK $A_PID:u32:4000000 $A_SYMBOL:str:schedule
refuse "kernel thread" 3 "no user address space" $CMD_PEEK $A_PID:u32:2 $A_SYMBOL:str:schedule
refuse "unknown command" 95 "" 99
refuse "truncated genl header" 22 "" -l 18 $CMD_STATUS

out=$(nlraw $CMD_PEEK $A_PID:u32:$self $A_SYMBOL:str:schedule $A_LEN:u32:32)
assert_match "well-formed peek answers" "^ok$" "$(printf '%s\n' "$out" | tail -n1)"
assert_match "peek returns 32 bytes" "attr $A_BYTES 32" "$out"
expect_rc "status still answers" 0 xprobectl status
