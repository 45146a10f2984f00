#!/bin/bash
# stamp-check.sh OBJ: in the records routines of OBJ (module/uhooks/urec_tmpl.S,
# assembled), no way from an entry (xp_urec_entry, xp_urec_entry_noret,
# xp_urec_ret) touches %fs: memory, the thread's rseq area, but the stamp's
# check, until a stamp was found (the check's jne not taken) or the kernel
# stamped (the ask's jnz not taken). The control flow is read from the
# disassembly: every jump, every fall-through, and the kernel's aborts
# from each rseq critical section to its handler; and no syscall lies
# inside a critical section (CONFIG_DEBUG_RSEQ). Prints what it found;
# exit 1 on a way through, 2 if the disassembly did not read as expected.
o=$1
objdump -d -j .rodata.xp_urec --no-show-raw-insn "$o" > "$o.dis" || exit 2
nm "$o" > "$o.nm" || exit 2
python3 - "$o.dis" "$o.nm" <<'EOF'
import re, sys

dis, nm = sys.argv[1], sys.argv[2]
sym = {}
for line in open(nm):
    f = line.split()
    if len(f) == 3:
        sym[f[2]] = int(f[0], 16)
need = ["xp_urec_entry", "xp_urec_entry_noret", "xp_urec_ret", "xp_urec_desc",
        "xp_urec_start", "xp_urec_post", "xp_urec_abort",
        "xp_urec_fstart", "xp_urec_fpost", "xp_urec_fabort", "xp_urec_done"]
for n in need:
    if n not in sym:
        print("no %s in the object" % n)
        sys.exit(2)
code_end = sym["xp_urec_desc"]		# the descriptors are data
ins = []				# (address, mnemonic, operands)
for line in open(dis):
    m = re.match(r"\s*([0-9a-f]+):\t(\S+)\s*(.*)$", line)
    if m and int(m.group(1), 16) < code_end:
        ins.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
at = {a: i for i, (a, _, _) in enumerate(ins)}

def cut(i):
    """Is the fall-through past jump i the stamped way (taken only stamped)?"""
    a, op, _ = ins[i]
    if op not in ("jne", "jnz"):
        return False
    prev = [ins[j][1:] for j in range(max(0, i - 4), i)]
    if prev and prev[-1][0] == "cmpl" and "%fs:" in prev[-1][1]:
        return True		# the stamp's check: equal, stamped
    return len(prev) == 4 and prev[0] == ("mov", "$0x1,%edi") and \
        prev[1] == ("mov", "$0x1a6,%eax") and prev[2][0] == "syscall" and \
        prev[3] == ("test", "%edi,%edi")	# the ask: rdi 0, stamped by the kernel

edges = {}
for i, (a, op, arg) in enumerate(ins):
    out = []
    t = re.match(r"([0-9a-f]+) <", arg)
    if op.startswith("j") and t:
        out.append(int(t.group(1), 16))
    if op not in ("jmp", "ret") and i + 1 < len(ins) and not cut(i):
        out.append(ins[i + 1][0])
    for lo, hi, ab in (("xp_urec_start", "xp_urec_post", "xp_urec_abort"),
                       ("xp_urec_fstart", "xp_urec_fpost", "xp_urec_fabort")):
        if sym[lo] <= a < sym[hi]:
            out.append(sym[ab])
    edges[a] = out

# CONFIG_DEBUG_RSEQ kills a system call made inside the critical section
# rseq_cs points at (rseq_syscall(), by the ip after it): none of the
# routines' is, by where it starts or where it ends
for a, op, _ in ins:
    for lo, hi in (("xp_urec_start", "xp_urec_post"), ("xp_urec_fstart", "xp_urec_fpost")):
        if op == "syscall" and (sym[lo] <= a < sym[hi] or sym[lo] <= a + 2 < sym[hi]):
            print("%#x: a syscall inside [%s, %s)" % (a, lo, hi))
            sys.exit(1)

bad, seen, checks = [], set(), 0
todo = [sym[e] for e in ("xp_urec_entry", "xp_urec_entry_noret", "xp_urec_ret")]
while todo:
    a = todo.pop()
    if a in seen:
        continue
    if a not in at:
        print("a way leads to %#x, not an instruction read" % a)
        sys.exit(2)
    seen.add(a)
    _, op, arg = ins[at[a]]
    if "%fs:" in arg:
        if op == "cmpl":
            checks += 1
        else:
            bad.append("%#x: %s %s" % (a, op, arg))
    todo.extend(edges[a])
if bad:
    print("the rseq area is touched before a stamp: " + "; ".join(bad))
    sys.exit(1)
if checks < 3 or len(seen) < 20:
    print("read %d instructions on the ways, %d stamp checks: not the routines expected" %
          (len(seen), checks))
    sys.exit(2)
print("%d instructions before any stamp, %d stamp checks, no other %%fs: access" %
      (len(seen), checks))
EOF
