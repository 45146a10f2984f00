#!/bin/bash
# Install the Debian packages the build, the VM harness and the tests need.
# Idempotent: asks apt only for what dpkg says is missing.
set -euo pipefail

PKGS=(
	build-essential gcc-12 make bc flex bison kmod cpio xz-utils zstd gzip file binutils
	ccache	# module builds (the Makefile's KBUILD_CC): a fresh clone reuses objects
	clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev dwarves
	libnl-3-dev libnl-genl-3-dev pkg-config
	libprotobuf-c-dev protobuf-c-compiler	# trace --pprof's profile.proto
	golang-go	# go tool pprof reads it (make check, host-trace-pprof); selftest 49's Go
	rustc		# selftest 49's Rust program (panics caught by catch_unwind)
	libmicrohttpd-dev	# metrics --listen serves /metrics
	libzydis-dev	# uhook add decodes the function's file (ctl/branches.c)
	libcapstone-dev	# ... checked against Capstone's decoding (host-uhook-branches)
	prometheus curl	# which Prometheus scrapes (make check, host-metrics-prometheus)
	qemu-system-x86 busybox-static
	socat	# run-vm.sh --singlestep talks to the QEMU monitor (90-preempt)
	python3
	redis-server nginx	# servers the metrics tests load (loopback, in the VM)
)
# 'deps.sh debug': also what building the debug kernel takes (make kunit).
KBUILD=(build-essential gcc-12 make bc flex bison xz-utils dwarves libelf-dev libssl-dev linux-source-6.12)
[ "${1:-}" = debug ] && PKGS+=("${KBUILD[@]}")
# 'deps.sh kbuild': only those, so that CI starts the debug kernel's build
# before the large packages (clang, rustc, golang, qemu) are in.
[ "${1:-}" = kbuild ] && PKGS=("${KBUILD[@]}")
# 'deps.sh deb': what make deb and make check-dkms take.
[ "${1:-}" = deb ] && PKGS=(debhelper dh-dkms dkms dpkg-dev git clang llvm bpftool libbpf-dev \
	libelf-dev zlib1g-dev libnl-3-dev libnl-genl-3-dev pkg-config libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev libzydis-dev)
# 'deps.sh bench': the servers, load generators and plotter make bench uses.
[ "${1:-}" = bench ] && PKGS=(memcached libmemcached-tools redis-server redis-tools gnuplot-nox)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all packages present"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run 'make deps' as root" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The servers are for the VM: keep the host from running them as services.
if command -v systemctl > /dev/null; then
	systemctl disable --now memcached redis-server nginx prometheus > /dev/null 2>&1 || true
fi
