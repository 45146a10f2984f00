#!/bin/bash
# Fetch the target kernel (image + headers) from Debian's archive and unpack it
# under the build tree. The version is resolved from the meta package at run
# time, never hard-coded. Nothing is installed into the host's /boot.
#
# usage: fetch-kernel.sh BUILD_DIR [SERIES [FLAVOUR]]
#   SERIES  6.12 (default) or 6.1; FLAVOUR amd64 (default), cloud-amd64, rt-amd64
# Leaves BUILD_DIR/kernel/<series>[-<flavour>] -> BUILD_DIR/kernel/<release>,
# containing vmlinuz, config, System.map, headers/ (a KDIR) and modules/
# (lib/modules/<release>). BUILD_DIR/kernel/current names the default 6.12.
set -euo pipefail

BUILD=$(realpath -m "${1:?build dir}")
SERIES=${2:-6.12}
FLAVOUR=${3:-amd64}
KROOT=$BUILD/kernel
LINK=$SERIES
[ "$FLAVOUR" = amd64 ] || LINK=$SERIES-${FLAVOUR%-amd64}

resolve() {	# meta package -> the versioned package it depends on
	apt-cache depends "$1" 2>/dev/null |
		awk -v pre="$2" '$1 == "Depends:" && index($2, pre) == 1 && !n++ { print $2 }'
}

# Debian 12 names its opt-in kernels by series (linux-image-6.12-amd64); its
# own 6.1 is the plain meta package (linux-image-amd64).
find_image() {
	local meta
	for meta in "linux-image-$SERIES-$FLAVOUR" "linux-image-$FLAVOUR"; do
		img=$(resolve "$meta" "linux-image-$SERIES.")
		[ -n "$img" ] && return 0
	done
	return 1
}
if ! find_image; then
	apt-get update -q >/dev/null
	find_image || { echo "fetch-kernel: no $SERIES $FLAVOUR kernel in apt's sources" >&2; exit 1; }
fi
release=${img#linux-image-}				# e.g. 6.12.117+deb12-amd64
version=$(apt-cache policy "$img" | awk '/Candidate:/ { print $2 }')
dest=$KROOT/$release
link() {
	ln -sfn "$release" "$KROOT/$LINK"
	[ "$LINK" != 6.12 ] || ln -sfn "$release" "$KROOT/current"
}

if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$version" ]; then
	link
	echo "fetch-kernel: $release ($version) already unpacked"
	exit 0
fi

echo "fetch-kernel: fetching $img $version"
rm -rf "$dest"
mkdir -p "$dest/debs" "$dest/root"
hdr=linux-headers-$release
common=$(apt-cache depends "$hdr" | awk '$1 == "Depends:" && $2 ~ /^linux-headers-.*-common(-rt)?$/ && !n++ { print $2 }')
kbuild=$(apt-cache depends "$hdr" | awk '$1 == "Depends:" && $2 ~ /^linux-kbuild-/ && !n++ { print $2 }')
[ -n "$common" ] && [ -n "$kbuild" ] || { echo "fetch-kernel: cannot resolve dependencies of $hdr" >&2; exit 1; }

(cd "$dest/debs" && apt-get download "$img=$version" "$hdr=$version" "$common" "$kbuild" 2>&1 |
	grep -v 'Download is performed unsandboxed' || true)
for d in "$dest"/debs/*.deb; do
	dpkg-deb -x "$d" "$dest/root"
done

# The headers package includes its -common half by absolute path; point it into
# our tree instead so that nothing needs to live under /usr/src on the host.
hdir=$dest/root/usr/src/linux-headers-$release
cdir=$dest/root/usr/src/$common
[ -d "$cdir" ] || cdir=$(ls -d "$dest"/root/usr/src/linux-headers-*-common* | head -n1)
sed -i "s|^include /usr/src/linux-headers-[^ ]*-common[^ /]*/Makefile|include $cdir/Makefile|" "$hdir/Makefile"
grep -q "^include $cdir/Makefile" "$hdir/Makefile" ||
	{ echo "fetch-kernel: unexpected Makefile in $hdir" >&2; exit 1; }

ln -sfn "root/boot/vmlinuz-$release" "$dest/vmlinuz"
ln -sfn "root/boot/config-$release" "$dest/config"
ln -sfn "root/boot/System.map-$release" "$dest/System.map"
ln -sfn "root/usr/src/linux-headers-$release" "$dest/headers"
ln -sfn "root/lib/modules/$release" "$dest/modules"
rm -rf "$dest/debs"
echo "$version" > "$dest/.complete"
link
echo "fetch-kernel: $release ready in $dest"
