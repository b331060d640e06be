#!/usr/bin/env python3
"""A model file with dense weights where it has splats.

    bench/densify.py IN.mlir OUT.mlir

The exported models of ../shared/models/ carry each weight as a splat
(`arith.constant dense<0.0039> : tensor<512x128xf32>`). A compiler may fold
a splat into the code that reads it: IREE 3.13 does (a matmul's B becomes
one constant vector, never loaded), which a real checkpoint never allows.
This writes the same program with every f32 splat constant of at least
1024 elements replaced by dense values, the splat's value times (1 + u),
u uniform in [-0.5, 0.5) from a generator seeded by the constant's rank in
the file: the same file every time, activations of the same size as the
splat model's. Everything else is copied as it is.
"""
import array
import random
import re
import sys

SPLAT = re.compile(r"arith\.constant dense<([-+0-9.eE]+)> : tensor<((?:\d+x)+)f32>")
MIN_ELEMENTS = 1024


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench/densify.py IN.mlir OUT.mlir")
    with open(sys.argv[1]) as f:
        text = f.read()
    count = [0, 0]

    def dense(m):
        dims = [int(d) for d in m.group(2).rstrip("x").split("x")]
        n = 1
        for d in dims:
            n *= d
        if n < MIN_ELEMENTS:
            return m.group(0)
        v = float(m.group(1))
        rng = random.Random(count[0])
        count[0] += 1
        count[1] += n
        data = array.array("f", (v * (0.5 + rng.random()) for _ in range(n)))
        if sys.byteorder != "little":
            data.byteswap()
        return 'arith.constant dense<"0x%s"> : tensor<%sf32>' % (
            data.tobytes().hex().upper(), m.group(2))

    out = SPLAT.sub(dense, text)
    with open(sys.argv[2], "w") as f:
        f.write(out)
    print("densify: %d splat constants made dense (%d floats)" % tuple(count),
          file=sys.stderr)


if __name__ == "__main__":
    main()
