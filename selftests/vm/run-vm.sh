#!/bin/bash
# Boot the test VM, run a job as root inside it, stream the job's output,
# exit with the job's status.
#
# usage: run-vm.sh [options] -- COMMAND...    (COMMAND runs under /bin/sh)
#        run-vm.sh [options] --script FILE
# options:
#   --kernel F    kernel image (default: build/kernel/current/vmlinuz)
#   --initrd F    base initramfs (default: build/vm/base.cpio.gz)
#   --share DIR   make DIR visible in the guest at /mnt/share (9p)
#   --timeout S   kill the guest after S seconds (default 600): exit 124
#   --log F       console log (default: build/vm/console.log)
#   --no-module   do not insmod xprobes.ko at boot
#   --append S    extra kernel command line
#   --cpu S, --smp N, --mem M   machine shape (default: max, 2, 2G)
#   --no-splat-check   do not fail on kernel splats in the console log
#   --singlestep  let the job switch QEMU to one guest instruction per
#                 translation block and back (TCG only): a line
#                 "XP-SINGLESTEP: on" or "off" written to /dev/ttyS1 is sent
#                 to the monitor as "singlestep on|off"; the guest sees
#                 xp.singlestep=1 on its command line. Booting that way would
#                 take minutes, so the job turns it on once it is set up.
# Environment: XP_ICOUNT=N runs under -icount shift=N; XP_QEMU_ARGS adds
# QEMU arguments (word-split), e.g. a TCG plugin (bench/tbprof/README).
# The guest's console (kernel log) goes to the log file; a run whose log holds
# a kernel splat (see splat.sh) exits 125 even when the job succeeded.
set -u
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(readlink -f "$HERE/../..")
BUILD=${XP_BUILD:-$TOP/build}
KERNEL=$BUILD/kernel/current/vmlinuz
INITRD=$BUILD/vm/base.cpio.gz
LOG=$BUILD/vm/console.log
SHARE= TIMEOUT=600 MODULE=1 APPEND= CPU=max SMP=2 MEM=2G SCRIPT= SPLAT=1 SSTEP=0

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=$2; shift 2 ;;
	--initrd) INITRD=$2; shift 2 ;;
	--share) SHARE=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--log) LOG=$2; shift 2 ;;
	--no-module) MODULE=0; shift ;;
	--append) APPEND="$APPEND $2"; shift 2 ;;
	--cpu) CPU=$2; shift 2 ;;
	--smp) SMP=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--script) SCRIPT=$2; shift 2 ;;
	--no-splat-check) SPLAT=0; shift ;;
	--singlestep) SSTEP=1; shift ;;
	--) shift; break ;;
	*) echo "run-vm: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$SCRIPT" ] || [ $# -gt 0 ] || { echo "run-vm: no command given" >&2; exit 2; }
for f in "$KERNEL" "$INITRD"; do
	[ -f "$f" ] || { echo "run-vm: $f is missing: run 'make' first" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/job" "$(dirname "$LOG")"
if [ -n "$SCRIPT" ]; then
	cp "$SCRIPT" "$work/job/job.sh"
else
	printf '%s\n' "$*" > "$work/job/job.sh"
fi
(cd "$work/job" && echo job.sh | cpio -o -H newc --quiet | gzip -1) > "$work/job.cpio.gz"
cat "$INITRD" "$work/job.cpio.gz" > "$work/initrd.cpio.gz"

accel=$("$HERE/accel.sh" "$KERNEL" "$BUILD/vm/accel")
icount=()
if [ "$accel" = kvm ]; then
	machine=(-accel kvm -cpu host)
else
	# Multi-threaded TCG lets a vCPU run stale translated code across the
	# kernel's own text_poke_bp(): about 1 boot in 30 dies with "Oops: int3"
	# in a jump-label site without xprobes loaded (docs/vm.md). One TCG
	# thread for all vCPUs does not; XP_TCG_OPTS=thread=multi overrides.
	# Deterministic guest time for experiments: 1 ns per emulated instruction.
	# QEMU 7.2 translates CMPXCHG16B to a helper that reads a stale cc_op, so
	# general-register bits (even VM) can land in RFLAGS; under -icount and
	# TCP load the guest died with a double fault in SLUB's cmpxchg16b within
	# a minute, without xprobes loaded (docs/vm.md). Without cx16 the kernel
	# uses its emulation (pushf; cli) instead. XP_CX16=1 keeps the instruction.
	if [ -n "${XP_ICOUNT:-}" ]; then
		[ "${XP_CX16:-0}" = 1 ] || CPU="$CPU,cx16=off"
		icount=(-icount "shift=${XP_ICOUNT},sleep=off")
	fi
	machine=(-accel "tcg,${XP_TCG_OPTS:-thread=single}" -cpu "$CPU" "${icount[@]}")
fi
share=()
if [ -n "$SHARE" ]; then
	[ -d "$SHARE" ] || { echo "run-vm: $SHARE is not a directory" >&2; exit 2; }
	share=(-fsdev "local,id=share,path=$(readlink -f "$SHARE"),security_model=none"
	       -device virtio-9p-pci,fsdev=share,mount_tag=share)
	APPEND="$APPEND xp.share=1"
fi
[ $MODULE = 1 ] || APPEND="$APPEND xp.module=0"
monitor=()
if [ $SSTEP = 1 ] && [ "$accel" != tcg ]; then
	# KVM runs whole instructions natively: interrupts already land anywhere.
	echo "run-vm: --singlestep is TCG's; with $accel the guest is not told it may switch" >&2
	SSTEP=0
fi
if [ $SSTEP = 1 ]; then
	command -v socat > /dev/null || { echo "run-vm: --singlestep needs socat (make deps)" >&2; exit 2; }
	monitor=(-monitor "unix:$work/monitor.sock,server=on,wait=off")
	APPEND="$APPEND xp.singlestep=1"
fi

: > "$LOG"
: > "$work/out"
# no_timer_check: the IO-APIC timer check at boot counts ticks over a delay
# of TSC cycles, and a guest whose vCPU the host starves (the debug kernel
# on a loaded machine, 2026-12-06) panics there: "IO-APIC + timer doesn't
# work!". Virtual machines skip it (the timer is QEMU's).
qemu-system-x86_64 "${machine[@]}" -smp "$SMP" -m "$MEM" -nodefaults -display none \
	-no-reboot -kernel "$KERNEL" -initrd "$work/initrd.cpio.gz" \
	-serial "file:$LOG" -serial "file:$work/out" "${share[@]}" \
	-append "console=ttyS0 panic=-1 oops=panic mitigations=auto no_timer_check $APPEND" \
	"${monitor[@]}" ${XP_QEMU_ARGS:-} > "$work/qemu.err" 2>&1 &
qpid=$!

# Stream the job's output (minus the exit marker) while the guest runs;
# with --singlestep, pass its requests on to the monitor.
singlestep() {	# singlestep on|off: tell QEMU, say so in the console log
	echo "singlestep $1" | socat -t 5 - "UNIX-CONNECT:$work/monitor.sock" > /dev/null 2>&1 ||
		echo "run-vm: the monitor did not take 'singlestep $1'" >&2
	echo "run-vm: singlestep $1" >> "$LOG"
}
if [ $SSTEP = 1 ]; then
	tail -n +1 -s 0.2 -f --pid=$qpid "$work/out" | while IFS= read -r line; do
		case $line in
		"XP-EXIT: "*) ;;
		"XP-SINGLESTEP: on"*) singlestep on ;;
		"XP-SINGLESTEP: off"*) singlestep off ;;
		*) printf '%s\n' "$line" ;;
		esac
	done &
else
	tail -n +1 -s 0.2 -f --pid=$qpid "$work/out" | grep -v --line-buffered '^XP-EXIT: ' &
fi
tpid=$!
deadline=$((SECONDS + TIMEOUT))
timed_out=0
while kill -0 $qpid 2>/dev/null; do
	if [ $SECONDS -ge $deadline ]; then
		timed_out=1
		kill -9 $qpid 2>/dev/null
		break
	fi
	sleep 0.2
done
wait $qpid 2>/dev/null
wait $tpid 2>/dev/null

status=$(sed -n 's/^XP-EXIT: \([0-9]*\).*/\1/p' "$work/out" | tail -n1)
if [ $timed_out = 1 ]; then
	echo "run-vm: guest killed after ${TIMEOUT}s (hung?); console log: $LOG" >&2
	status=124
elif [ -z "$status" ]; then
	echo "run-vm: guest ended without reporting a status (crash?); console log: $LOG" >&2
	grep -s -v '^$' "$work/qemu.err" >&2
	tail -n 30 "$LOG" >&2
	status=125
fi
if [ $SPLAT = 1 ] && ! "$HERE/splat.sh" "$LOG" >&2; then
	echo "run-vm: kernel splat in the guest log: $LOG" >&2
	[ "$status" = 0 ] && status=125
fi
exit "$status"
