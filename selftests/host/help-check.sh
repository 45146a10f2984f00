#!/bin/sh
# Every option xprobectl takes is in its command's --help and in the
# top-level --help: the long options of each option table in ctl/*.c
# against the --help of the commands that file implements, and each option
# a command's --help lists (short or long form) against `xprobectl --help`.
# Also: each command's --help exits 0 and says what it does past its usage.
# usage: help-check.sh XPROBECTL CTL_SRC_DIR
X=$1 SRC=$2
bad=0
top=$("$X" --help) || { echo "not ok: xprobectl --help exits $?"; exit 1; }

# has TEXT OPT: OPT appears in TEXT as a whole option
has() { printf '%s\n' "$1" | grep -qE -- "(^|[^a-z-])$2([^a-z0-9-]|\$)"; }

# the commands each source file implements
for f in status:"status audit" view:view hook:hook uhook:uhook peek:"peek walk" \
	 trace:trace metrics:metrics latency:latency attach:attach; do
	file=${f%%:*} cmds=${f#*:}
	helps=
	for c in $cmds; do
		h=$("$X" $c --help) || { echo "not ok: xprobectl $c --help exits $?"; bad=1; }
		[ "$(printf '%s\n' "$h" | grep -cv '^usage:\|^ *xprobectl ')" -ge 2 ] ||
			{ echo "not ok: xprobectl $c --help says nothing past its usage"; bad=1; }
		helps="$helps
$h"
		# what it lists (short or long form) is in the top-level --help,
		# and the command with what it does
		while read -r a b; do
			[ -z "$a" ] || [ "$a" = -h ] || [ "$a" = --help ] || has "$top" "$a" ||
				{ [ -n "$b" ] && has "$top" "$b"; } ||
				{ echo "not ok: xprobectl --help lacks $c's $a${b:+ ($b)}"; bad=1; }
		done <<-EOF
		$(printf '%s\n' "$h" | sed -n 's/^  *\(-[a-zA-Z]\), \(--[a-z0-9-]*\).*/\1 \2/p; s/^  *\(--[a-z0-9-]*\).*/\1/p')
		EOF
		printf '%s\n' "$top" | grep -q "^$c: ." || { echo "not ok: xprobectl --help does not say what $c does"; bad=1; }
	done
	# long options of every table in the file ({ "name", has_arg, flag, 'c' }),
	# each with its short form where it has one
	table=$(sed -n '/struct option opts\[\]/,/};/p' "$SRC/$file.c")
	opts=$(printf '%s\n' "$table" | tr '}' '\n' |
		sed -n "s/.*{ *\"\([a-z0-9-]*\)\",[^,]*,[^,]*, *'\(.\)'.*/\1:\2/p; t; s/.*{ *\"\([a-z0-9-]*\)\".*/\1:/p")
	case $table in *COMMON_OPTS*) opts="$opts json:j" ;; esac
	[ -n "$opts" ] || { echo "not ok: no option table found in $file.c"; bad=1; }
	for o in $opts; do
		l=${o%%:*} c=${o#*:}
		[ $l = help ] && continue
		has "$helps" "--$l" || { echo "not ok: '$cmds --help' lacks --$l ($file.c takes it)"; bad=1; }
		has "$top" "--$l" || { [ -n "$c" ] && has "$top" "-$c"; } ||
			{ echo "not ok: xprobectl --help lacks --$l${c:+ (-$c)} ($file.c takes it)"; bad=1; }
	done
done
[ $bad = 0 ] && echo "ok: every option in its command's --help and in xprobectl --help"
exit $bad
