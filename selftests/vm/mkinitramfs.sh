#!/bin/bash
# Build the test VM's base initramfs: busybox, the guest init, the module,
# xprobectl, BPF objects, selftests, the kernel modules the harness needs, the
# host binaries listed in guest-bins, and every shared library they load.
#
# usage: mkinitramfs.sh OUT.cpio.gz KMODDIR [FILE=DEST ...]
#   KMODDIR   lib/modules/<release> of the target kernel
#   FILE=DEST extra files copied to DEST inside the guest (relative to /)
set -euo pipefail

OUT=$1
KMODDIR=$2
shift 2
HERE=$(dirname "$(readlink -f "$0")")
ROOT=$(mktemp -d)
chmod 755 "$ROOT"
trap 'rm -rf "$ROOT"' EXIT

mkdir -p "$ROOT"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,mnt/share,xp/bin,xp/kmod,usr/bin,usr/sbin,lib64}
cp /bin/busybox "$ROOT/bin/busybox"
for a in $("$ROOT/bin/busybox" --list); do
	[ -e "$ROOT/bin/$a" ] || ln -s busybox "$ROOT/bin/$a"
done
install -m 755 "$HERE/init" "$ROOT/init"
echo "root:x:0:0:root:/root:/bin/sh" > "$ROOT/etc/passwd"
echo "nobody:x:65534:65534:nobody:/nonexistent:/bin/sh" >> "$ROOT/etc/passwd"
printf "root:x:0:\nnogroup:x:65534:\n" > "$ROOT/etc/group"
echo "127.0.0.1 localhost xpvm" > "$ROOT/etc/hosts"

# Kernel modules the harness itself needs (9p for VM_SHARE, and virtio where
# it is modules, as on Debian's 6.1; null_blk, a disk
# with a set latency, for the trace tests; fuse where it is not built in,
# for selftest 46; ext4 and its own modules, and brd, a RAM disk, for
# 56-view-ext4's hooks in a real file system's module), uncompressed so
# busybox insmod can load them.
for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
	drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci fs/netfs/netfs fs/fscache/fscache net/9p/9pnet \
	net/9p/9pnet_virtio fs/9p/9p \
	fs/configfs/configfs drivers/block/null_blk/null_blk fs/fuse/fuse \
	crypto/crc32c_generic lib/crc16 fs/mbcache fs/jbd2/jbd2 fs/ext4/ext4 drivers/block/brd; do
	src=$KMODDIR/kernel/$m.ko
	if [ -f "$src.xz" ]; then
		xz -dc "$src.xz" > "$ROOT/xp/kmod/$(basename "$m").ko"
	elif [ -f "$src" ]; then
		cp "$src" "$ROOT/xp/kmod/"
	fi
done

elfs=()
for spec in "$@"; do
	src=${spec%%=*}
	dst=$ROOT/${spec#*=}
	mkdir -p "$(dirname "$dst")"
	cp -a "$src" "$dst"
done
# Host programs the tests and benchmarks use, when the host has them.
while read -r bin; do
	[ -n "$bin" ] && [ "${bin#\#}" = "$bin" ] || continue
	[ -x "$bin" ] || continue
	mkdir -p "$ROOT$(dirname "$bin")"
	cp -L "$bin" "$ROOT$bin"
done < "$HERE/guest-bins"

# Every dynamically linked ELF inside gets its libraries.
while IFS= read -r f; do
	# No pipe into grep -q: it quits at its match, and a SIGPIPE to file
	# would fail the pipeline (pipefail) and silently leave the ELF out.
	case $(file -b "$f") in *ELF*dynamically\ linked*) elfs+=("$f") ;; esac
done < <(find "$ROOT" -type f -perm -u+x ! -path "$ROOT/xp/kmod/*")
# And the libraries xprobectl loads when a command first needs them
# (ctl/dso.h), with theirs.
dsos=()
for so in libZydis.so.4.0 libmicrohttpd.so.12; do
	# awk reads to the end: quitting early would kill ldconfig with
	# SIGPIPE, which pipefail turns into this script's failure.
	lib=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ && !n++ { print $NF }')
	[ -n "$lib" ] || { echo "mkinitramfs: no $so on this host (make deps)" >&2; exit 1; }
	dsos+=("$lib")
done
for f in "${elfs[@]}" "${dsos[@]}"; do
	ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'
done | cat - <(printf '%s\n' "${dsos[@]}") | sort -u | while read -r lib; do
	# ours, beside the program that needs it (tailx's, by its RUNPATH \$ORIGIN)
	case $lib in "$ROOT"/*) continue ;; esac
	mkdir -p "$ROOT$(dirname "$lib")"
	cp -L "$lib" "$ROOT$lib"
done

(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
