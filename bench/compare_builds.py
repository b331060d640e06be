#!/usr/bin/env python3
"""Calls one function of two libraries `autosched build` made of the same
program (untuned and tuned, before and after a change) on the same random
inputs and compares their results, element by element.

  PY=~/.cache/autosched/iree-3.13.0/bin/python    # has numpy
  $PY bench/compare_builds.py MODEL.mlir A.so B.so [--func F] [--tol T] [--seed N]

MODEL: the program both were built from (its public function's signature is
read from it). f32 inputs are uniform in [-1, 1) over sqrt(the last dim);
integer inputs 0 or 1 (ids, masks, positions). Functions the program
declares without a body (the DeepSeek block's rtclock and record_timing
hooks) are defined in a small library compiled here (cc), doing nothing.
Each library gets its own copy of the inputs (a program may write its
arguments: the decode step updates its KV caches in place). Prints per
result the elements, how many differ, the largest difference and the
largest |A|, and each argument the two wrote differently; exits 1 when an
element differs by more than T x max(1, |A|) (T 0, the default: bit for
bit), a result is not finite or an argument was written differently.
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

NP = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32,
      "i8": np.int8, "i1": np.bool_}
RET = {"f64": "double", "f32": "float", "i64": "long long", "i32": "int", "index": "long long"}


def signature(text, want):
    """(name, [(shape, elem)] args, [(shape, elem)] results) of the public
    function named want (else the first public one with results)."""
    ty = re.compile(r"tensor<((?:\d+x)*)([a-z]+[0-9]*)>")
    for m in re.finditer(r"func\.func @([\w$.]+)\(", text):
        if text[max(0, m.start() - 8):m.start()].strip().endswith("private"):
            continue
        end = text.index("{", m.end())
        head = text[m.end():end]
        if ") ->" not in head or (want and m.group(1) != want):
            continue
        args, res = head.split(") ->", 1)
        parse = lambda s: [(tuple(int(x) for x in t.group(1).split("x") if x), t.group(2))
                           for t in ty.finditer(s)]
        return m.group(1), parse(args), parse(res)
    sys.exit("compare_builds: no public function with results%s" % (" named " + want if want else ""))


def hooks(text, work):
    """A library defining the functions the program declares without a body."""
    c = []
    for m in re.finditer(r"func\.func private @([\w$.]+)\(([^)]*)\)(?:\s*->\s*\(?\s*([\w]*)\s*\)?)?\s*$",
                         text, re.M):
        r = RET.get(m.group(3) or "", "void")
        body = "" if r == "void" else "return 0;"
        c.append("%s _mlir_ciface_%s(){%s}\n%s %s(){%s}" % (r, m.group(1), body, r, m.group(1), body))
    if not c:
        return
    src, lib = os.path.join(work, "hooks.c"), os.path.join(work, "hooks.so")
    open(src, "w").write("\n".join(c) + "\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, src], check=True, timeout=60)
    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)


def memref(rank):
    class Desc(ctypes.Structure):
        _fields_ = [("alloc", ctypes.c_void_p), ("data", ctypes.c_void_p), ("off", ctypes.c_int64),
                    ("size", ctypes.c_int64 * rank), ("stride", ctypes.c_int64 * rank)]
    return Desc


def call(lib, fn, args, res):
    f = getattr(ctypes.CDLL(os.path.abspath(lib)), "_mlir_ciface_" + fn)
    f.restype = None
    descs = []
    for v in args:
        d = memref(v.ndim)()
        d.alloc = d.data = v.ctypes.data
        d.off = 0
        for i, n in enumerate(v.shape):
            d.size[i], d.stride[i] = n, v.strides[i] // v.itemsize
        descs.append(d)
    # Several results come back in a struct of descriptors.
    outs = [memref(len(s))() for s, _ in res]
    if len(outs) == 1:
        f(ctypes.byref(outs[0]), *[ctypes.byref(d) for d in descs])
    else:
        class Res(ctypes.Structure):
            _fields_ = [("r%d" % i, type(o)) for i, o in enumerate(outs)]
        r = Res()
        f(ctypes.byref(r), *[ctypes.byref(d) for d in descs])
        outs = [getattr(r, "r%d" % i) for i in range(len(outs))]
    got = []
    for o, (shape, e) in zip(outs, res):
        n = int(np.prod(shape)) if shape else 1
        dt = np.dtype(NP[e])
        buf = (ctypes.c_char * (n * dt.itemsize)).from_address(o.data + dt.itemsize * o.off)
        got.append(np.frombuffer(bytes(buf), dtype=dt).reshape(shape))
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--func")
    ap.add_argument("--tol", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    text = open(o.model).read()
    fn, sig, res = signature(text, o.func)
    rng = np.random.default_rng(o.seed)
    args = []
    for shape, e in sig:
        if e in ("f32", "f64"):
            v = rng.uniform(-1, 1, shape) / np.sqrt(shape[-1] if shape else 1)
        else:
            v = rng.integers(0, 2, shape)
        args.append(np.ascontiguousarray(v, dtype=NP[e]))
    # Each library gets its own copy: a program may write its arguments
    # (the decode step updates its KV caches in place).
    ina = [a.copy() for a in args]
    inb = [a.copy() for a in args]
    with tempfile.TemporaryDirectory() as work:
        hooks(text, work)
        ra = call(o.a, fn, ina, res)
        rb = call(o.b, fn, inb, res)
    bad = 0
    for i, (x, y) in enumerate(zip(ina, inb)):
        if not np.array_equal(x, y):
            print("@%s argument %d: written differently by the two" % (fn, i))
            bad += 1
    for i, (x, y) in enumerate(zip(ra, rb)):
        d = np.abs(x.astype(np.float64) - y.astype(np.float64))
        lim = o.tol * np.maximum(1.0, np.abs(x.astype(np.float64)))
        ok = bool((d <= lim).all()) and bool(np.isfinite(x).all() and np.isfinite(y).all())
        print("@%s result %d: %d elements, %d differ, largest difference %.3g, largest |A| %.3g%s"
              % (fn, i, x.size, int((x != y).sum()), float(d.max()) if d.size else 0.0,
                 float(np.abs(x).max()) if x.size else 0.0, "" if ok else "  <- over the tolerance"))
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
