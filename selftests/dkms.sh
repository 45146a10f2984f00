#!/bin/bash
# make check-dkms: the Debian packages as a user installs them. On this host
# (which cannot load modules): install the kernel headers of each test kernel,
# then xprobes-dkms and xprobectl with apt; DKMS must have built and installed
# xprobes.ko for every one of those kernels. Then boot each kernel in the VM
# with the module DKMS built and the packaged xprobectl, and run a smoke
# subset of the selftests. The packages are purged at the end (DKMS must
# remove its modules); the headers stay.
#
# usage: dkms.sh DEB_DIR TREE=IMAGE...   (a kernel tree as fetch-kernel.sh leaves
#        it, and the test image make built for it)
set -u
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(readlink -f "$HERE/..")
BUILD=${XP_BUILD:-$TOP/build}
DEB=$1
shift
OUT=$BUILD/check-dkms
mkdir -p "$OUT"
# What the installed packages must do on each kernel: load, answer, hook,
# survive a fork, trace. 18-view-calls (about 55 s a boot) left this list on
# 2026-11-29: its call hooks are the same source built the same way, and
# make check runs it on six boots of the same two kernels.
SMOKE=${XP_DKMS_TESTS:-"status ctl-errors view-hits life-fork trace-views"}
export DEBIAN_FRONTEND=noninteractive

. "$HERE/tap.sh"
rels=
for k in "$@"; do
	rels="$rels $(basename "$(readlink -f "${k%%=*}")")"
done
# Headers of exactly the images the VM boots (vermagic must match).
hdrs=
for r in $rels; do hdrs="$hdrs linux-headers-$r"; done
if apt-get install -y -q $hdrs > "$OUT/headers.log" 2>&1 ||
   { apt-get update -q > /dev/null && apt-get install -y -q $hdrs > "$OUT/headers.log" 2>&1; }; then
	record ok "headers-installed" "$(echo $rels)"
else
	tail -n 5 "$OUT/headers.log" | sed 's/^/# /'
	record "not ok" "headers-installed"
fi

apt-get purge -y -q xprobes-dkms xprobectl > /dev/null 2>&1
if apt-get install -y -q "$DEB"/xprobes-dkms_*_all.deb "$DEB"/xprobectl_*_amd64.deb > "$OUT/install.log" 2>&1; then
	record ok "packages-installed"
else
	tail -n 20 "$OUT/install.log" | sed 's/^/# /'
	record "not ok" "packages-installed"
fi
grep -i "building\|installing\|error" "$OUT/install.log" | head -n 20 | sed 's/^/# /'
dkms status xprobes 2> /dev/null | sed 's/^/# dkms status: /'

for r in $rels; do
	ko=$(ls /lib/modules/"$r"/updates/dkms/xprobes.ko* 2>/dev/null | head -n 1)
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{ print $1 }')
	# Signed with DKMS's machine owner key (what Secure Boot needs enrolled).
	signer=$(modinfo -F signer "$ko" 2>/dev/null)
	if [ -n "$ko" ] && [ "$vm" = "$r" ] && [ -n "$signer" ] &&
	   dkms status xprobes -k "$r" 2> /dev/null | grep -q installed; then
		record ok "dkms-built[$r]" "$ko, signed by '$signer'"
	else
		record "not ok" "dkms-built[$r]" "module '${ko:-none}', vermagic '$vm', signer '$signer'"
	fi
done
if [ -x /usr/sbin/xprobectl ] && /usr/sbin/xprobectl --version | grep -q '^xprobectl '; then
	record ok "xprobectl-installed" "$(/usr/sbin/xprobectl --version)"
else
	record "not ok" "xprobectl-installed"
fi
# The exporter's unit for systemd (docs/metrics.md), checked by systemd's own
# parser (no systemd runs on this host to start it).
u=/lib/systemd/system/xprobes-metrics@.service
if [ -f $u ] && grep -q '^ExecStart=/usr/sbin/xprobectl metrics ' $u &&
   out=$(systemd-analyze verify "${u%@.service}@redis-server.service" 2>&1 | grep -v "^$" | grep -v "Command 'man "; exit 0) && [ -z "$out" ]; then
	record ok "systemd-unit-installed" "$u"
else
	echo "${out:-no unit at $u}" | head -n 5 | sed 's/^/# /'
	record "not ok" "systemd-unit-installed"
fi

# Each DKMS-built module in its own kernel, driven by the packaged
# xprobectl: the boots side by side (each VM is one TCG thread; the host has
# two cores), their results recorded in order once both have ended.
boots=
for k in "$@"; do
	tree=${k%%=*} base=${k#*=}
	r=$(basename "$(readlink -f "$tree")")
	boots="$boots $r"
	rm -f "$OUT/smoke-$r.why" "$OUT/smoke-$r.rc"
	ko=$(ls /lib/modules/"$r"/updates/dkms/xprobes.ko* 2>/dev/null | head -n 1)
	[ -n "$ko" ] || { echo "no module" > "$OUT/smoke-$r.why"; continue; }
	case $ko in
	*.xz) xz -dc "$ko" > "$OUT/xprobes-$r.ko" ;;
	*.zst) zstd -qdc "$ko" > "$OUT/xprobes-$r.ko" ;;
	*) cp "$ko" "$OUT/xprobes-$r.ko" ;;
	esac
	initrd=$OUT/initrd-$r.cpio.gz
	# The test image of this kernel, its module and xprobectl replaced.
	[ -f "$base" ] || { echo "no test image $base" > "$OUT/smoke-$r.why"; continue; }
	work=$(mktemp -d)
	mkdir -p "$work/xp/bin"
	cp "$OUT/xprobes-$r.ko" "$work/xp/xprobes.ko"
	cp /usr/sbin/xprobectl "$work/xp/bin/xprobectl"
	(cd "$work" && find xp | cpio -o -H newc --quiet | gzip -1) > "$OUT/overlay-$r.cpio.gz"
	rm -rf "$work"
	cat "$base" "$OUT/overlay-$r.cpio.gz" > "$initrd"
	{
		bash "$HERE/vm/run-vm.sh" --timeout 900 --kernel "$tree/vmlinuz" --initrd "$initrd" \
			--log "$OUT/console-$r.log" -- \
			"modinfo -F vermagic /xp/xprobes.ko | sed 's/^/# module: /'; sh /xp/selftests/run.sh $SMOKE" \
			> "$OUT/smoke-$r.txt" 2>&1
		echo $? > "$OUT/smoke-$r.rc"
	} &
done
wait
for r in $boots; do
	if [ -f "$OUT/smoke-$r.why" ]; then
		record "not ok" "smoke[$r]" "$(cat "$OUT/smoke-$r.why")"
		continue
	fi
	rc=$(cat "$OUT/smoke-$r.rc" 2>/dev/null || echo "?")
	grep '^# module:' "$OUT/smoke-$r.txt"
	bad=$(grep -c '^not ok' "$OUT/smoke-$r.txt")
	good=$(grep -c '^ok' "$OUT/smoke-$r.txt")
	if [ "$rc" = 0 ] && [ "$bad" = 0 ] && [ "$good" -gt 0 ]; then
		record ok "smoke[$r]" "$good tests"
	else
		grep '^not ok\|FAIL' "$OUT/smoke-$r.txt" | head -n 10 | sed 's/^/# /'
		record "not ok" "smoke[$r]" "run-vm exited $rc, $bad failed; see $OUT/smoke-$r.txt"
	fi
done

# Removal: DKMS takes its modules back.
apt-get purge -y -q xprobes-dkms xprobectl > "$OUT/purge.log" 2>&1
left=$(ls /lib/modules/*/updates/dkms/xprobes.ko* 2>/dev/null)
if [ -z "$left" ] && [ ! -e /usr/sbin/xprobectl ]; then
	record ok "packages-purged"
else
	record "not ok" "packages-purged" "left: $left"
fi
tap_end
