#!/bin/bash
# Build the debug kernel (KUnit, KASAN, KFENCE, lockdep, kmemleak) from
# Debian's linux-source-6.12 with the fragment debug.config on top of
# allnoconfig. Incremental: does nothing when the fragment, this script and
# the source package version are those of the last build.
#
# usage: build-kernel.sh BUILD_DIR
# Leaves BUILD_DIR/debug/obj (a KDIR, arch/x86/boot/bzImage) and
# BUILD_DIR/debug/build.time (seconds the last build took).
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
BUILD=$(realpath -m "${1:?build dir}")
FRAG=$HERE/debug.config
D=$BUILD/debug
SRC=$D/linux-source-6.12
OBJ=$D/obj
TARBALL=/usr/src/linux-source-6.12.tar.xz
LOG=$D/build.log

[ -f "$TARBALL" ] || { echo "debug-kernel: $TARBALL is missing: make deps-debug (apt install linux-source-6.12)" >&2; exit 1; }
version=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key="$version $(cat "$FRAG" "$0" | sha256sum | cut -c1-16)"
if [ -f "$D/.stamp" ] && [ "$(cat "$D/.stamp")" = "$key" ] && [ -f "$OBJ/arch/x86/boot/bzImage" ]; then
	echo "debug-kernel: up to date ($OBJ, built in $(cat "$D/build.time" 2>/dev/null || echo ?)s)"
	exit 0
fi

start=$SECONDS
mkdir -p "$D" "$OBJ"
if [ "$(cat "$D/.source" 2>/dev/null)" != "$version" ] || [ ! -f "$SRC/Makefile" ]; then
	echo "debug-kernel: unpacking linux-source-6.12 $version"
	rm -rf "$SRC"
	tar -C "$D" -xJf "$TARBALL"
	echo "$version" > "$D/.source"
fi

echo "debug-kernel: configuring (allnoconfig + $(basename "$FRAG"))"
make -s -C "$SRC" O="$OBJ" KCONFIG_ALLCONFIG="$FRAG" allnoconfig > "$LOG" 2>&1 ||
	{ tail -n 30 "$LOG" >&2; exit 1; }
# Every line of the fragment must have stuck: a dependency Kconfig did not
# meet silently drops an option (and with it, say, KASAN).
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) grep -qxF "$line" "$OBJ/.config" || { echo "debug-kernel: '$line' did not stick" >&2; bad=1; } ;;
	"# CONFIG_"*" is not set") ! grep -q "^${line:2:-11}=" "$OBJ/.config" ||
		{ echo "debug-kernel: '$line' did not stick" >&2; bad=1; } ;;
	esac
done < "$FRAG"
[ $bad = 0 ] || exit 1

# With ccache installed (not by the deps: a fresh CI machine has no cache to
# hit), a rebuild compiles again only the files whose preprocessed text
# changed: little for an option few headers read, nearly everything for
# one in a common structure (CONFIG_SECCOMP is in task_struct: no hit).
cc=()
command -v ccache > /dev/null && cc=(CC="ccache gcc")
echo "debug-kernel: building with $(nproc) jobs${cc:+ through ccache} (log: $LOG)"
if ! make -C "$SRC" O="$OBJ" -j"$(nproc)" "${cc[@]}" all >> "$LOG" 2>&1; then
	grep -E 'error|Error' "$LOG" | head -n 20 >&2
	tail -n 20 "$LOG" >&2
	exit 1
fi
echo $((SECONDS - start)) > "$D/build.time"
echo "$key" > "$D/.stamp"
echo "debug-kernel: $(cat "$OBJ/include/config/kernel.release") built in $((SECONDS - start))s"
