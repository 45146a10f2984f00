#!/bin/bash
# Build the debug kernel (KUnit, KASAN, KFENCE, lockdep, kmemleak) from
# Debian's linux-source-6.12 with the fragment debug.config on top of
# allnoconfig. Incremental: does nothing when the fragment, this script and
# the source package version are those of the last build.
#
# usage: build-kernel.sh BUILD_DIR
# Leaves BUILD_DIR/debug/obj (a KDIR, arch/x86/boot/bzImage) and
# BUILD_DIR/debug/build.time (seconds the last build took).
#
# The kernel is an input of the tests, built from Debian's source and the
# fragment, not the code under test: where it can (root), this script keeps
# its source and objects in one directory of the machine, XP_DEBUG_CACHE
# (default /var/cache/xprobes/debug-kernel; empty: in the clone), and
# BUILD_DIR/debug/obj and the stamp are links to it. Every clone on the
# machine then shares one build, the way ccache would share objects: CI
# clones afresh on the machine of the session that submits (docs/ci.md),
# which has built this kernel, and a cold build is 15-18 of CI's minutes.
# A build holds the directory's lock; the key (the source version, this
# script, the fragment) says which build is there, and any other is redone
# in place, incrementally.
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
BUILD=$(realpath -m "${1:?build dir}")
FRAG=$HERE/debug.config
D=$BUILD/debug
CACHE=${XP_DEBUG_CACHE-/var/cache/xprobes/debug-kernel}
K=$D
if [ -n "$CACHE" ] && mkdir -p "$CACHE" 2> /dev/null && [ -w "$CACHE" ]; then
	K=$(realpath "$CACHE")
fi
SRC=$K/linux-source-6.12
OBJ=$K/obj
TARBALL=/usr/src/linux-source-6.12.tar.xz
LOG=$K/build.log

# link_build: the clone's names for the shared build
link_build() {
	[ "$K" != "$D" ] || return 0
	mkdir -p "$D"
	local f
	for f in obj linux-source-6.12 .stamp build.time build.log; do
		# a build of the clone's own, from before the shared one, goes
		[ -L "$D/$f" ] || rm -rf "${D:?}/$f"
		ln -sfn "$K/$f" "$D/$f"
	done
}

[ -f "$TARBALL" ] || { echo "debug-kernel: $TARBALL is missing: make deps-debug (apt install linux-source-6.12)" >&2; exit 1; }
version=$(dpkg-query -W -f='${Version}' linux-source-6.12)
# the compiler too: the modules are built with it, and kbuild warns when
# it is not the kernel's (a warning fails the debug module builds)
key="$version $(gcc --version | head -n 1) $(cat "$FRAG" "$0" | sha256sum | cut -c1-16)"
mkdir -p "$K"
exec 9> "$K/.lock"
flock 9
if [ -f "$K/.stamp" ] && [ "$(cat "$K/.stamp")" = "$key" ] && [ -f "$OBJ/arch/x86/boot/bzImage" ]; then
	link_build
	echo "debug-kernel: up to date ($OBJ, built in $(cat "$K/build.time" 2>/dev/null || echo ?)s)"
	exit 0
fi

start=$SECONDS
rm -f "$K/.stamp"
mkdir -p "$OBJ"
if [ "$(cat "$K/.source" 2>/dev/null)" != "$version" ] || [ ! -f "$SRC/Makefile" ]; then
	echo "debug-kernel: unpacking linux-source-6.12 $version into $K"
	rm -rf "$SRC"
	tar -C "$K" -xJf "$TARBALL"
	echo "$version" > "$K/.source"
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
echo $((SECONDS - start)) > "$K/build.time"
echo "$key" > "$K/.stamp"
link_build
echo "debug-kernel: $(cat "$OBJ/include/config/kernel.release") built in $((SECONDS - start))s"
