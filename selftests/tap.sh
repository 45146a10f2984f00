# TAP for the host-side suites beside make check (selftests/dkms.sh,
# selftests/flavours.sh): record each result, print the plan and the
# summary line, and say whether all passed. Sourced.
pass=0 fail=0 n=0
echo "TAP version 13"

record() {	# record ok|"not ok" NAME [COMMENT]
	n=$((n + 1))
	if [ "$1" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	echo "$1 $n $2${3:+ # $3}"
}

tap_end() {	# the plan, the summary line; the exit status
	echo "1..$n"
	echo "$pass passed, $fail failed, 0 skipped"
	[ $fail = 0 ]
}
