#!/usr/bin/env python3
"""The innermost loops of a kernel or a library routine, by instruction mix
(docs/avx2.md): per loop its instructions, FMAs, broadcasts, other vector
loads, stores, prefetches, vector registers and memory reads per FMA, the
loops with the most FMAs first. No timing: objdump's listing only.

usage: inner_loops.py FILE [SYMBOL] [-n N]
  FILE    a kernel.so (its dispatch) or a library (SYMBOL from nm -D:
          sgemm_kernel_HASWELL in libopenblas)
"""
import argparse, re, subprocess, sys

TIMEOUT = 120   # seconds for nm and objdump each


def symbol_range(path, sym):
    """[start, stop) of dynamic symbol sym: its address to the next one's."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                         text=True, timeout=TIMEOUT, check=True).stdout
    addrs = sorted({int(l.split()[0], 16) for l in out.splitlines() if len(l.split()) == 3})
    mine = [int(l.split()[0], 16) for l in out.splitlines()
            if len(l.split()) == 3 and l.split()[2].split("@")[0] == sym]
    if not mine:
        sys.exit("inner_loops.py: %s: no dynamic symbol %s" % (path, sym))
    nxt = [a for a in addrs if a > mine[0]]
    return mine[0], nxt[0] if nxt else mine[0] + (1 << 16)


def listing(path, sym):
    argv = ["objdump", "-d", "--no-show-raw-insn"]
    if sym:
        a, b = symbol_range(path, sym)
        argv += ["--start-address=%#x" % a, "--stop-address=%#x" % b]
    return subprocess.run(argv + [path], capture_output=True, text=True,
                          timeout=TIMEOUT, check=True).stdout


def mix(body):
    c = dict(n=len(body), fma=0, fma_mem=0, bcast=0, load=0, store=0, pf=0)
    regs = set()
    for _, op, args in body:
        mem = "(" in args
        if op.startswith(("vfmadd", "vfnmadd")):
            c["fma"] += 1
            c["fma_mem"] += mem
        elif op.startswith("vbroadcast"):
            c["bcast"] += 1
        elif op.startswith("prefetch"):
            c["pf"] += 1
        elif op.startswith("vmov") and mem:
            # AT&T order: a store's memory operand comes last.
            c["store" if args.rstrip().endswith(")") else "load"] += 1
        regs |= {r[1:] for r in re.findall(r"%([xyz]mm\d+)", args)}
    c["regs"] = len(regs)
    c["zmm"] = sum("%zmm" in a for _, _, a in body)
    return c


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("file")
    ap.add_argument("symbol", nargs="?")
    ap.add_argument("-n", type=int, default=4, help="loops shown")
    a = ap.parse_args()
    top = a.n
    ins = []
    for l in listing(a.file, a.symbol).splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", l)
        if m:
            ins.append((int(m.group(1), 16), m.group(2), m.group(3)))
    at = {a: i for i, (a, _, _) in enumerate(ins)}
    loops = []
    for i, (a, op, rest) in enumerate(ins):
        m = re.match(r"([0-9a-f]+)", rest)
        if op.startswith("j") and m and int(m.group(1), 16) <= a and int(m.group(1), 16) in at:
            loops.append((at[int(m.group(1), 16)], i))
    inner = [(s, e) for s, e in loops
             if not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in loops)]
    res = sorted(((mix(ins[s:e + 1]), s, e) for s, e in inner), key=lambda x: -x[0]["fma"])
    for c, s, e in res[:top]:
        reads = c["load"] + c["fma_mem"] + c["bcast"]
        print("loop %x-%x: %d instructions, %d FMA (%d with a memory operand), %d broadcasts, "
              "%d other vector loads, %d stores, %d prefetches, %d vector registers (%d zmm "
              "operands); memory reads per FMA %.2f" % (
                  ins[s][0], ins[e][0], c["n"], c["fma"], c["fma_mem"], c["bcast"], c["load"],
                  c["store"], c["pf"], c["regs"], c["zmm"], reads / c["fma"] if c["fma"] else 0))


main()
