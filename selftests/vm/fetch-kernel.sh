#!/bin/bash
# Fetch the target kernel (image + headers) from Debian's archive and unpack it
# under the build tree. The version is resolved from the meta package at run
# time, never hard-coded. Nothing is installed into the host's /boot.
#
# usage: fetch-kernel.sh BUILD_DIR [SERIES]      (SERIES defaults to 6.12)
# Leaves BUILD_DIR/kernel/current -> BUILD_DIR/kernel/<release>, containing
#   vmlinuz, config, System.map, headers/ (a KDIR), modules/ (lib/modules/<release>)
set -euo pipefail

BUILD=$(realpath -m "${1:?build dir}")
SERIES=${2:-6.12}
META=linux-image-$SERIES-amd64
KROOT=$BUILD/kernel

resolve() {	# meta package -> the versioned package it depends on
	apt-cache depends "$1" 2>/dev/null |
		awk -v pre="$2" '$1 == "Depends:" && index($2, pre) == 1 { print $2; exit }'
}

img=$(resolve "$META" linux-image-)
if [ -z "$img" ]; then
	apt-get update -q >/dev/null
	img=$(resolve "$META" linux-image-)
fi
[ -n "$img" ] || { echo "fetch-kernel: cannot resolve $META from apt" >&2; exit 1; }
release=${img#linux-image-}				# e.g. 6.12.117+deb12-amd64
version=$(apt-cache policy "$img" | awk '/Candidate:/ { print $2 }')
dest=$KROOT/$release

if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$version" ]; then
	ln -sfn "$release" "$KROOT/current"
	echo "fetch-kernel: $release ($version) already unpacked"
	exit 0
fi

echo "fetch-kernel: fetching $img $version"
rm -rf "$dest"
mkdir -p "$dest/debs" "$dest/root"
hdr=linux-headers-$release
common=$(apt-cache depends "$hdr" | awk '$1 == "Depends:" && $2 ~ /^linux-headers-.*-common$/ { print $2; exit }')
kbuild=$(apt-cache depends "$hdr" | awk '$1 == "Depends:" && $2 ~ /^linux-kbuild-/ { print $2; exit }')
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
[ -d "$cdir" ] || cdir=$(ls -d "$dest"/root/usr/src/linux-headers-*-common | head -n1)
sed -i "s|^include /usr/src/linux-headers-[^ ]*-common/Makefile|include $cdir/Makefile|" "$hdir/Makefile"
grep -q "^include $cdir/Makefile" "$hdir/Makefile" ||
	{ echo "fetch-kernel: unexpected Makefile in $hdir" >&2; exit 1; }

ln -sfn "root/boot/vmlinuz-$release" "$dest/vmlinuz"
ln -sfn "root/boot/config-$release" "$dest/config"
ln -sfn "root/boot/System.map-$release" "$dest/System.map"
ln -sfn "root/usr/src/linux-headers-$release" "$dest/headers"
ln -sfn "root/lib/modules/$release" "$dest/modules"
rm -rf "$dest/debs"
echo "$version" > "$dest/.complete"
ln -sfn "$release" "$KROOT/current"
echo "fetch-kernel: $release ready in $dest"
