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
    prev = [ins[j][1:] for j in range(max(0, i - 5), i)]
    if prev and prev[-1][0] == "cmpl" and "%fs:" in prev[-1][1]:
        return True		# the stamp's check: equal, stamped
    # the ask: rdi 0, stamped by the kernel (then rdi back from its save: flags kept)
    return len(prev) == 5 and prev[0] == ("mov", "$0x1,%edi") and \
        prev[1] == ("mov", "$0x1a6,%eax") and prev[2][0] == "syscall" and \
        prev[3] == ("test", "%edi,%edi") and prev[4] == ("mov", "-0x30(%rsp),%rdi")

def successors(stamped):
    """Each instruction's next ones: jumps, fall-throughs (not past a
    stamp's test, with @stamped), and the kernel's aborts of a section."""
    succ = {}
    for i, (a, op, arg) in enumerate(ins):
        out = []
        t = re.match(r"([0-9a-f]+) <", arg)
        if op.startswith("j") and t:
            out.append(int(t.group(1), 16))
        if op not in ("jmp", "ret") and i + 1 < len(ins) and not (stamped and cut(i)):
            out.append(ins[i + 1][0])
        for lo, hi, ab in (("xp_urec_start", "xp_urec_post", "xp_urec_abort"),
                           ("xp_urec_fstart", "xp_urec_fpost", "xp_urec_fabort")):
            if sym[lo] <= a < sym[hi]:
                out.append(sym[ab])
        succ[a] = out
    return succ
edges = successors(True)

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

# rdi, which the entry routines save only where they use it: on every way
# from an entry (every edge now, the stamp's too) to a ret, rdi is the
# caller's again; it is written only once saved at -0x30(%rsp) (a syscall
# writes it: the kernel's answer); and inside the entry's window (uunwind.c,
# detach_window()) it is kept at -0x30(%rsp) by the routine exactly in the
# spans the labels give, which the detach trusts. States: 0 the caller's in
# rdi only, 1 in rdi and saved, 2 saved, rdi written.
for n in ("xp_urec_stored", "xp_urec_di_ask", "xp_urec_di_ask_end", "xp_urec_di_miss",
          "xp_urec_di_miss_end"):
    if n not in sym:
        print("no %s in the object" % n)
        sys.exit(2)
def flow(i, st):
    a, op, arg = ins[i]
    if op == "mov" and arg == "%rdi,-0x30(%rsp)":
        return None if st == 2 else 1
    if op == "mov" and arg == "-0x30(%rsp),%rdi":
        return None if st == 0 else 1
    # a syscall writes it (the kernel's answer), as does any instruction
    # whose destination it is, an xchg with it, and a string instruction
    if op == "syscall" or op.startswith(("stos", "scas", "cmps", "lods", "ins", "outs")) or \
            op in ("movsb", "movsw", "movsl", "movsq", "rep", "repz", "repnz") or \
            (op.startswith("xchg") and re.search(r"%(rdi|edi|di|dil)\b", arg)) or \
            (re.search(r"(^|,)%(rdi|edi|di|dil)$", arg) and
             not op.startswith(("cmp", "test", "bt "))):
        return None if st == 0 else 2
    return st
succ = successors(False)
states, todo, bad = {}, [(sym[e], 0) for e in ("xp_urec_entry", "xp_urec_entry_noret",
                                               "xp_urec_ret")], []
while todo:
    a, st = todo.pop()
    if a not in at:
        print("a way leads to %#x, not an instruction read" % a)
        sys.exit(2)
    if st in states.setdefault(a, set()):
        continue
    states[a].add(st)
    _, op, arg = ins[at[a]]
    if op == "ret":
        if st == 2:
            bad.append("%#x: ret with rdi written" % a)
        continue
    nst = flow(at[a], st)
    if nst is None:
        bad.append("%#x: %s %s with rdi %s" % (a, op, arg, ("not saved", "", "written")[st]))
        continue
    todo.extend((b, nst) for b in succ[a])
spans = [(sym["xp_urec_di_ask"], sym["xp_urec_di_ask_end"]),
         (sym["xp_urec_di_miss"], sym["xp_urec_di_miss_end"])]
for a in sorted(states):
    if not sym["xp_urec_entry"] <= a < sym["xp_urec_stored"]:
        continue
    kept = any(lo <= a < hi for lo, hi in spans)
    if (kept and 0 in states[a]) or (not kept and 2 in states[a]):
        bad.append("%#x: rdi %s at -0x30(%%rsp) %s the window's spans" %
                   (a, "not" if kept else "only", "inside" if kept else "outside"))
if bad:
    print("rdi: " + "; ".join(bad[:6]))
    sys.exit(1)
print("%d instructions before any stamp, %d stamp checks, no other %%fs: access; "
      "rdi the caller's at every ret, saved before written, kept as the window's spans say" %
      (len(seen), checks))
EOF
