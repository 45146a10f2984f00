#!/bin/bash
# Write the ELF vmlinux inside a bzImage to stdout: find the payload by its
# compression magic (zstd, xz, gzip) and decompress it.
# usage: extract-vmlinux.sh BZIMAGE > vmlinux
set -euo pipefail
img=$1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
try() {	# try MAGIC-AS-\x-ESCAPES DECOMPRESSOR...
	local magic=$1 off
	shift
	for off in $(LC_ALL=C grep -obUaP "$magic" "$img" | cut -d: -f1 | head -n 5); do
		tail -c +$((off + 1)) "$img" | "$@" > "$tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
			cat "$tmp"
			exit 0
		fi
	done
}
try '\x28\xb5\x2f\xfd' zstd -dc
try '\xfd\x37\x7a\x58\x5a\x00' xz -dc
try '\x1f\x8b\x08' gzip -dc
echo "extract-vmlinux: no vmlinux found in $img" >&2
exit 1
