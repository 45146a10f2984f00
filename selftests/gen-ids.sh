#!/bin/sh
# Turn the uapi enums into shell variables for the tests (CMD_PEEK=8, A_PID=7, ...),
# so tests never hard-code numbers that could drift from the header.
awk '
	/^enum xprobes_(cmd|attr) / { n = 0; inenum = 1; next }
	inenum && /^};/ { inenum = 0; next }
	inenum && !/__XPROBES/ && match($0, /XPROBES_(CMD|A)_[A-Z0-9_]+/) {
		name = substr($0, RSTART + 8, RLENGTH - 8)
		print name "=" n
		n++
	}
' "$1"
