#!/bin/bash
# profile.sh DIR CONFIG...: where the guest's instructions go per Redis GET
# under each configuration (bench/lib.sh's names: none, instaret, trace1,
# ...), with -icount as make bench runs. Builds the TCG plugin tbprof.so,
# boots the bench VM with it, leaves the profiles in DIR; then
#   bench/tbprof/report.sh DIR trace1 instaret
# shows what trace1 adds to instaret, symbol by symbol (README). XP_INITRD:
# another initramfs than make initramfs's (another module, say).
# TBPROF_WHAT=attach: each configuration's set-up instead of the GETs, one
# operation (where attaching goes: report.sh DIR traceall), the user code
# by the tracer's mappings instead of the target's.
set -eu
HERE=$(dirname "$(readlink -f "$0")")
dir=$(mkdir -p "$1" && readlink -f "$1")
shift
[ $# -gt 0 ] || { echo "usage: profile.sh DIR CONFIG..." >&2; exit 2; }
cc -O2 -Wall -shared -fPIC -o "$dir/tbprof.so" "$HERE/tbprof.c" -lpthread
rm -f "$dir"/ack.* "$dir"/prof.*
: > "$dir/ctl"
{
	echo "export CONFIGS='$*' HOSTDIR='$dir' RB_N='${RB_N:-}' WHAT='${TBPROF_WHAT:-gets}'"
	cat "$HERE/guest.sh"
} > "$dir/job.sh"
XP_ICOUNT=${XP_ICOUNT-0} XP_QEMU_ARGS="-plugin $dir/tbprof.so,ctl=$dir/ctl" \
	bash "$HERE/../../selftests/vm/run-vm.sh" --timeout 3600 --share "$dir" \
	${XP_INITRD:+--initrd "$XP_INITRD"} --log "$dir/console.log" --script "$dir/job.sh"
