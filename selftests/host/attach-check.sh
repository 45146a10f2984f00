#!/bin/sh
# xprobectl attach without the module (the host): an object's uprobe and
# uretprobe programs (selftests/bpf/attachdemo.bpf.c, user-space probes
# only) are attached bound to one process: its map counts exactly that
# uhtarget's uh_add calls and returns while a second uhtarget of the same
# file makes as many; the maps stay pinned after the end; an object with a
# kernel probe needs the module and says so in one line, nothing left.
# usage: attach-check.sh XPROBECTL UHTARGET CLANG VMLINUX_H_DIR OUTDIR
X=$1 UH=$2 CLANG=$3 INC=$4 OUT=$5
N=5000
SRC=$(dirname "$0")/../bpf/attachdemo.bpf.c
PIN=/sys/fs/bpf/xp_host_attach
fail() { echo "not ok: $*"; kill $P $Q $AT 2>/dev/null; rm -rf $PIN; exit 1; }
mkdir -p "$OUT"
"$CLANG" -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I"$INC" -DXP_USER_ONLY \
	-DUHTARGET="\"$(readlink -f "$UH")\"" -c "$SRC" -o "$OUT/attach-user.bpf.o" || fail "clang"
"$CLANG" -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I"$INC" \
	-DUHTARGET="\"$(readlink -f "$UH")\"" -c "$SRC" -o "$OUT/attach-all.bpf.o" || fail "clang"
grep -q " /sys/fs/bpf bpf " /proc/mounts || mount -t bpf bpf /sys/fs/bpf || fail "mount bpffs"
rm -rf $PIN
# An earlier run's outputs would end the waits below at once if they are
# read before a background job's redirection truncates them: the calls then
# came before the attach, and the counts were 0 (once in make check, both
# CPUs busy with VMs).
rm -f "$OUT/p.out" "$OUT/q.out" "$OUT/at.out" "$OUT/at.err"

"$UH" -t 1 -n $N -g > "$OUT/p.out" 2>&1 &
P=$!
"$UH" -t 1 -n $N -g > "$OUT/q.out" 2>&1 &
Q=$!
i=0
until grep -qs '^ready' "$OUT/p.out" && grep -qs '^ready' "$OUT/q.out"; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "uhtarget did not start"; sleep 0.05
done
"$X" attach $P "$OUT/attach-user.bpf.o" --pin $PIN > "$OUT/at.out" 2> "$OUT/at.err" &
AT=$!
i=0
until grep -qs '^maps pinned' "$OUT/at.out"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "attach did not start: $(cat "$OUT/at.err")"; sleep 0.05
done
kill -HUP $P $Q
i=0
until grep -q '^ok calls' "$OUT/p.out" && grep -q '^ok calls' "$OUT/q.out"; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "uhtarget did not finish"; sleep 0.05
done
grep -q "^ok calls=$N " "$OUT/p.out" || fail "traced uhtarget: $(cat "$OUT/p.out")"
kill -TERM $P $Q
wait $AT || fail "attach exited $? at the target's end: $(cat "$OUT/at.err")"
got=$(bpftool -j map dump pinned $PIN/counts | tr '{' '\n' | sed -n 's/^"key":\([0-9]*\),"value":\([0-9]*\)}.*/\1=\2/p' | tr '\n' ' ')
rm -rf $PIN
[ "$got" = "0=0 1=0 2=0 3=$N 4=$N " ] || fail "counts: '$got', want uh_add's $N calls and $N returns of the traced process alone"
grep -q '^on_uh_add .* - .*uprobe/' "$OUT/at.out" || fail "the end's table: $(cat "$OUT/at.out")"
# a kernel probe needs the module (the host has none loaded)
if ! grep -qs '^xprobes ' /proc/modules; then
	"$X" attach $$ "$OUT/attach-all.bpf.o" -d 2 > "$OUT/all.out" 2>&1 && fail "a kprobe object attached without the module"
	[ "$(wc -l < "$OUT/all.out")" = 1 ] || fail "more than one line: $(cat "$OUT/all.out")"
	grep -q "module is not loaded" "$OUT/all.out" || fail "$(cat "$OUT/all.out")"
fi
echo "ok: attach: uh_add's $N calls and returns counted for the traced process alone, maps pinned; kprobes need the module"
