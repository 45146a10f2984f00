#!/bin/bash
# Pick the QEMU accelerator: KVM when a quick probe shows it can boot the target
# kernel to userspace, TCG otherwise. The answer is cached per kernel in CACHE.
# usage: accel.sh VMLINUZ CACHE
set -u
KERNEL=$1
CACHE=$2
if [ -n "${XP_ACCEL:-}" ]; then echo "$XP_ACCEL"; exit 0; fi
if [ -f "$CACHE" ] && [ "$CACHE" -nt "$KERNEL" ]; then cat "$CACHE"; exit 0; fi
mkdir -p "$(dirname "$CACHE")"
if [ ! -w /dev/kvm ]; then echo tcg | tee "$CACHE"; exit 0; fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/root/bin"
cp /bin/busybox "$dir/root/bin/"
printf '#!/bin/busybox sh\n/bin/busybox echo XP-KVM-OK\n/bin/busybox poweroff -f\n' > "$dir/root/init"
chmod +x "$dir/root/init"
(cd "$dir/root" && find . | cpio -o -H newc --quiet) > "$dir/probe.cpio"

qemu-system-x86_64 -accel kvm -cpu host -m 512M -smp 1 -nodefaults -display none \
	-no-reboot -serial "file:$dir/out" -kernel "$KERNEL" -initrd "$dir/probe.cpio" \
	-append "console=ttyS0 panic=-1 quiet" > "$dir/qemu.err" 2>&1 &
pid=$!
result=tcg
for _ in $(seq 1 150); do	# up to 30 s
	if grep -q XP-KVM-OK "$dir/out" 2>/dev/null; then result=kvm; break; fi
	if ! kill -0 $pid 2>/dev/null || grep -q 'KVM internal error\|emulation failure' "$dir/qemu.err"; then
		break
	fi
	sleep 0.2
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
echo $result | tee "$CACHE"
