#!/usr/bin/env python3
"""Checks a build of bench/conv/resnet50_model.mlir on random inputs: the
library `autosched build` made (called through its C interface by ctypes),
IREE's compile of the same file (iree.runtime) and a float64 numpy reference
of the same network, each pair's largest absolute and relative difference
over the 1000 outputs.

  PY=~/.cache/autosched/iree-3.13.0/bin/python    # numpy, iree.runtime
  $PY bench/conv/resnet50_check.py [--lib LIB.so] [--vmfb IREE.vmfb] [--seed N] [MODEL.mlir]

Inputs: the image uniform in [-1, 1], each weight uniform in [-1, 1] over
sqrt(fan in), each bias uniform in [-0.1, 0.1] (so the activations stay of
order 1). Exits 1 if a pair differs by more than --tol relative to the
largest output.
"""
import argparse
import ctypes
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from resnet50_model import LAYERS  # noqa: E402


def signature(path):
    """The entry function's arguments: [(name, shape)], in order."""
    text = open(path).read()
    head = text[text.index("func.func @resnet50("):]
    head = head[:head.index(") ->")]
    return [(m.group(1), tuple(int(d) for d in m.group(2).split("x")))
            for m in re.finditer(r"%(\w+): tensor<([\dx]+)xf32>", head)]


def inputs(sig, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in sig:
        if name == "img":
            v = rng.uniform(-1, 1, shape)
        elif name.startswith("w_"):
            fan_in = int(np.prod(shape[:-1]))
            v = rng.uniform(-1, 1, shape) / np.sqrt(fan_in)
        else:
            v = rng.uniform(-0.1, 0.1, shape)
        out[name] = np.ascontiguousarray(v, dtype=np.float32)
    return out


def reference(a):
    """The network in float64 numpy, as resnet50_model.py writes it."""
    from numpy.lib.stride_tricks import sliding_window_view

    def conv(x, name, stride=1, lo=0, hi=0, relu=True):
        w, b = a["w_" + name].astype(np.float64), a["b_" + name].astype(np.float64)
        kh, kw = w.shape[:2]
        x = np.pad(x, ((0, 0), (lo, hi), (lo, hi), (0, 0)))
        win = sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
        y = np.tensordot(win, w, axes=([4, 5, 3], [0, 1, 2])) + b
        return np.maximum(y, 0) if relu else y

    x = conv(a["img"].astype(np.float64), "stem", 2, 3, 2)
    x = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    x = sliding_window_view(x, (3, 3), axis=(1, 2))[:, ::2, ::2].max(axis=(4, 5))
    for li, (_, _, blocks, stride) in enumerate(LAYERS):
        for bi in range(blocks):
            n = "l%db%d" % (li + 1, bi)
            s = stride if bi == 0 else 1
            y = conv(x, n + "_c1", s)
            y = conv(y, n + "_c2", 1, 1, 1)
            y = conv(y, n + "_c3", relu=False)
            x = np.maximum(y + (conv(x, n + "_proj", s, relu=False) if bi == 0 else x), 0)
    x = x.sum(axis=(1, 2)) * (1.0 / 49)
    return x @ a["w_fc"].astype(np.float64) + a["b_fc"].astype(np.float64)


def memref(r):
    class Desc(ctypes.Structure):
        _fields_ = [("alloc", ctypes.c_void_p), ("data", ctypes.c_void_p), ("off", ctypes.c_int64),
                    ("size", ctypes.c_int64 * r), ("stride", ctypes.c_int64 * r)]
    return Desc


def call_lib(lib, sig, a):
    """_mlir_ciface_resnet50(result, args...) of a library autosched built."""
    h = ctypes.CDLL(os.path.abspath(lib))
    f = h._mlir_ciface_resnet50
    descs = []
    for name, shape in sig:
        v = a[name]
        d = memref(len(shape))()
        d.alloc = d.data = v.ctypes.data
        d.off = 0
        for i, n in enumerate(shape):
            d.size[i] = n
            d.stride[i] = v.strides[i] // 4
        descs.append(d)
    res = memref(2)()
    f.restype = None
    f(ctypes.byref(res), *[ctypes.byref(d) for d in descs])
    n = res.size[0] * res.size[1]
    buf = (ctypes.c_float * n).from_address(res.data + 4 * res.off)
    out = np.array(buf, dtype=np.float32).reshape(res.size[0], res.size[1])
    ctypes.CDLL(None).free(ctypes.c_void_p(res.alloc))
    return out


def call_iree(vmfb, sig, a):
    import iree.runtime as ireert
    m = ireert.load_vm_flatbuffer_file(vmfb, driver="local-task")
    return np.asarray(m.resnet50(*[a[name] for name, _ in sig]).to_host())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default=os.path.join(HERE, "resnet50_model.mlir"))
    ap.add_argument("--lib", help="a library autosched build made of MODEL")
    ap.add_argument("--vmfb", help="iree-compile's module of MODEL (llvm-cpu)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tol", type=float, default=1e-4, help="largest difference / largest output accepted")
    ap.add_argument("--no-numpy", action="store_true", help="skip the numpy reference")
    o = ap.parse_args()
    sig = signature(o.model)
    a = inputs(sig, o.seed)
    outs = {}
    if not o.no_numpy:
        outs["numpy"] = reference(a)
    if o.lib:
        outs["autosched"] = call_lib(o.lib, sig, a).astype(np.float64)
    if o.vmfb:
        outs["iree"] = call_iree(o.vmfb, sig, a).astype(np.float64)
    bad = 0
    for k, v in outs.items():
        print("%-10s shape %s, |max| %.4g, mean %.4g, finite %s, argmax %d"
              % (k, v.shape, np.abs(v).max(), v.mean(), bool(np.isfinite(v).all()), int(v.argmax())))
    names = list(outs)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            x, y = outs[names[i]], outs[names[j]]
            d = np.abs(x - y)
            scale = max(np.abs(x).max(), np.abs(y).max())
            rel = d / np.maximum(np.abs(y), 1e-30)
            print("%s vs %s: max abs diff %.3g, max abs diff / max |output| %.3g, "
                  "max elementwise rel diff %.3g (median %.3g)"
                  % (names[i], names[j], d.max(), d.max() / scale, rel.max(), np.median(rel)))
            if not np.isfinite(d).all() or d.max() > o.tol * scale:
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
