#!/usr/bin/env python3
"""The table of bench/gpu.sh's payload (run.sh): per op, the best staged kernel,
IREE's default, cuBLAS and the register-only peak, all from
autosched-gpu-measure's JSON lines, and IREE's runtime figures beside them.

  table.py RESULTS.jsonl [IREE_CHECK.txt]   the table
  table.py --winners RESULTS.jsonl          "OP KERNEL" of each op's fastest verified kernel
"""
import json
import sys


def load(path):
    ops, cur, dev = {}, None, None
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j["kind"] == "op":
            cur = ops.setdefault(j["op"], {"spec": j["spec"], "kernels": [], "cublas": None, "peak": None})
        elif j["kind"] == "device":
            dev = j
        elif cur is not None and j["kind"] == "kernel":
            cur["kernels"].append(j)
        elif cur is not None and j["kind"] in ("cublas", "peak"):
            cur[j["kind"]] = j
    return dev, ops


def best(op):
    ok = [k for k in op["kernels"] if k["status"] == "ok" and k["name"] != "iree_default"]
    return min(ok, key=lambda k: k["median_ms"]) if ok else None


def tf(j):
    return j["tflops"] if j and j.get("status") == "ok" else None


def fmt(x, f="%.1f"):
    return f % x if x is not None else "-"


def ratio(a, b):
    return a / b if a is not None and b else None


def iree_rt(path):
    rt = {}
    if path is None:
        return rt
    for line in open(path):
        w = line.split()
        if len(w) >= 5 and w[0] == "IREE":
            rt[(w[1], w[2])] = (w[3].split("=")[1], w[4].split("=")[1])
    return rt


def main():
    if sys.argv[1] == "--winners":
        for name, op in load(sys.argv[2])[1].items():
            b = best(op)
            if b:
                print(name, b["name"])
        return
    dev, ops = load(sys.argv[1])
    rt = iree_rt(sys.argv[2] if len(sys.argv) > 2 else None)
    if dev:
        print("GPU %s (cc %s, %d SMs), driver %d, %s; SM clock %s MHz (max %s), power limit %s W, %s C" % (
            dev["name"], dev["cc"], dev["sms"], dev["driver"], dev["cublas"] or "no cuBLAS",
            dev["sm_mhz"], dev["sm_max_mhz"], dev["power_limit_w"], dev["temp_c"]))
    print("TFLOP/s = 2MNK / median; every kernel checked exactly (cuBLAS's C, every element, and exact dots)")
    h = ("op", "ok/all", "best kernel", "best", "IREE dflt", "cuBLAS", "peak", "best/dflt", "best/cuBLAS", "%peak", "cv", "MHz")
    print("%-14s %7s %-34s %7s %9s %7s %7s %9s %11s %6s %5s %5s" % h)
    for name, op in ops.items():
        b = best(op)
        d = next((k for k in op["kernels"] if k["name"] == "iree_default"), None)
        nok = sum(1 for k in op["kernels"] if k["status"] == "ok")
        bt, dt, ct, pt = tf(b), tf(d), tf(op["cublas"]), tf(op["peak"])
        print("%-14s %7s %-34s %7s %9s %7s %7s %9s %11s %6s %5s %5s" % (
            name, "%d/%d" % (nok, len(op["kernels"])), b["name"] if b else "-", fmt(bt), fmt(dt),
            fmt(ct), fmt(pt), fmt(ratio(bt, dt), "%.2fx"), fmt(ratio(bt, ct), "%.2f"),
            fmt(ratio(bt, pt) and 100 * ratio(bt, pt), "%.0f%%"), fmt(b and b["cv"], "%.3f"),
            b["sm_mhz"] if b else "-"))
    bad = [(n, k["name"], k["status"], k.get("error", "")[:120]) for n, op in ops.items()
           for k in op["kernels"] if k["status"] != "ok"]
    for b in bad:
        print("NOT OK: %s %s %s %s" % b)
    if rt:
        print("IREE runtime (iree-benchmark-module, ms a dispatch: --batch_size = the module's repeat; check = iree-run-module):")
        for (o, k), (c, ms) in sorted(rt.items()):
            print("  %-14s %-34s check=%s ms=%s" % (o, k, c, ms))


if __name__ == "__main__":
    main()
