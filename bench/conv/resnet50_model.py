#!/usr/bin/env python3
"""Writes a whole ResNet-50 v1 in linalg on tensors (f32, batch 1,
224x224x3 NHWC, HWCF weights) for bench/model.sh: bench/conv/resnet50_model.mlir.

  python3 bench/conv/resnet50_model.py [OUT.mlir]

The stem (7x7 stride 2 conv, zero padding 3 before and 2 after, as
bench/conv/resnet50.mlir has it), a 3x3 stride 2 max pool (padding 1 of
-inf), the 16 bottleneck blocks [3, 4, 6, 3] (1x1, 3x3 padding 1, 1x1 to 4x
the channels; stride 2 on the first 1x1 conv of the first block of layers
2-4 and on its projection, as v1 has it; a 1x1 projection on each layer's
first block), each conv followed by its per-channel bias (batch norm folded
into weights and bias, as exporters write it) and a ReLU, except the block's
last conv, whose ReLU follows the residual add; the global average pool (a
sum over H, W times 1/49) and the 2048x1000 classifier (a matmul and its
bias). The ops are those of bench/conv/resnet50.mlir and
tests/analysis/fixtures/cnn.mlir: tensor.pad before a padded conv, a
linalg.fill of zero as each conv's init, linalg.conv_2d_nhwc_hwcf,
arith.addf / arith.maximumf on tensors for the residual add and the ReLUs,
the biases broadcast by a linalg.generic. Weights and biases are arguments
(the image first, then each conv's weight and bias in the order they run,
then the classifier's weight and bias): one public function @resnet50 ->
tensor<1x1000xf32>. Derived from the architecture; no trained weights.
"""
import os
import sys

LAYERS = [(64, 256, 3, 1), (128, 512, 4, 2), (256, 1024, 6, 2), (512, 2048, 3, 2)]


def t(*dims):
    return "tensor<%sxf32>" % "x".join(str(d) for d in dims)


class Model:
    def __init__(self):
        self.args = []      # (name, type)
        self.body = []
        self.n = 0
        self.zeros = {}     # shape -> name of a dense<0.0> tensor constant
        self.convs = 0

    def tmp(self, hint="v"):
        self.n += 1
        return "%%%s%d" % (hint, self.n)

    def emit(self, line):
        self.body.append("  " + line)

    def arg(self, name, ty):
        self.args.append(("%" + name, ty))
        return "%" + name

    def zero_tensor(self, shape):
        if shape not in self.zeros:
            z = "%%zero_%s" % "x".join(str(d) for d in shape)
            self.emit("%s = arith.constant dense<0.0> : %s" % (z, t(*shape)))
            self.zeros[shape] = z
        return self.zeros[shape]

    def pad(self, x, shape, lo, hi, value="%z"):
        n, h, w, c = shape
        out = (n, h + lo + hi, w + lo + hi, c)
        p = self.tmp("pad")
        self.emit("%s = tensor.pad %s low[0, %d, %d, 0] high[0, %d, %d, 0] {" % (p, x, lo, lo, hi, hi))
        self.emit("^bb0(%a: index, %b: index, %c: index, %d: index):")
        self.emit("  tensor.yield %s : f32" % value)
        self.emit("} : %s to %s" % (t(*shape), t(*out)))
        return p, out

    def conv(self, x, shape, name, k, f, stride, lo=0, hi=0, relu=True):
        """x (NHWC shape) through a kxk conv to f channels, its bias and,
        with relu, a ReLU: (value, shape)."""
        self.convs += 1
        n, h, w, c = shape
        wt = self.arg("w_" + name, t(k, k, c, f))
        b = self.arg("b_" + name, t(f))
        if lo or hi:
            x, shape = self.pad(x, shape, lo, hi)
        oh = (shape[1] - k) // stride + 1
        ow = (shape[2] - k) // stride + 1
        out = (n, oh, ow, f)
        e, i, cv = self.tmp("e"), self.tmp("init"), self.tmp("conv")
        self.emit("%s = tensor.empty() : %s" % (e, t(*out)))
        self.emit("%s = linalg.fill ins(%%z : f32) outs(%s : %s) -> %s" % (i, e, t(*out), t(*out)))
        self.emit("%s = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, "
                  "strides = dense<%d> : tensor<2xi64>} ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                  % (cv, stride, x, wt, t(*shape), t(k, k, c, f), i, t(*out), t(*out)))
        y = self.bias(cv, out, b)
        if relu:
            y = self.relu(y, out)
        return y, out

    def bias(self, x, shape, b):
        """x + b broadcast over all but the last dimension."""
        rank = len(shape)
        e, y = self.tmp("e"), self.tmp("bias")
        self.emit("%s = tensor.empty() : %s" % (e, t(*shape)))
        self.emit("%s = linalg.generic {indexing_maps = [#id%d, #last%d, #id%d], iterator_types = [%s]} "
                  "ins(%s, %s : %s, %s) outs(%s : %s) {" % (
                      y, rank, rank, rank, ", ".join(['"parallel"'] * rank),
                      x, b, t(*shape), t(shape[-1]), e, t(*shape)))
        a = self.tmp("s")
        self.emit("^bb0(%in: f32, %bi: f32, %out: f32):")
        self.emit("  %s = arith.addf %%in, %%bi : f32" % a)
        self.emit("  linalg.yield %s : f32" % a)
        self.emit("} -> %s" % t(*shape))
        return y

    def relu(self, x, shape):
        z = self.zero_tensor(shape)
        y = self.tmp("relu")
        self.emit("%s = arith.maximumf %s, %s : %s" % (y, x, z, t(*shape)))
        return y

    def block(self, x, shape, name, mid, out, stride, project):
        a, sa = self.conv(x, shape, name + "_c1", 1, mid, stride)
        b, sb = self.conv(a, sa, name + "_c2", 3, mid, 1, 1, 1)
        c, sc = self.conv(b, sb, name + "_c3", 1, out, 1, relu=False)
        if project:
            s, _ = self.conv(x, shape, name + "_proj", 1, out, stride, relu=False)
        else:
            s = x
        r = self.tmp("res")
        self.emit("%s = arith.addf %s, %s : %s" % (r, c, s, t(*sc)))
        return self.relu(r, sc), sc

    def build(self):
        img = self.arg("img", t(1, 224, 224, 3))
        self.emit("%z = arith.constant 0.0 : f32")
        self.emit("%ninf = arith.constant 0xFF800000 : f32")
        x, s = self.conv(img, (1, 224, 224, 3), "stem", 7, 64, 2, 3, 2)
        # 3x3 stride 2 max pool, padding 1 of -inf: 112 -> 56.
        p, ps = self.pad(x, s, 1, 1, "%ninf")
        out = (1, 56, 56, 64)
        win, e, i, x = self.tmp("win"), self.tmp("e"), self.tmp("init"), self.tmp("pool")
        self.emit("%s = tensor.empty() : tensor<3x3xf32>" % win)
        self.emit("%s = tensor.empty() : %s" % (e, t(*out)))
        self.emit("%s = linalg.fill ins(%%ninf : f32) outs(%s : %s) -> %s" % (i, e, t(*out), t(*out)))
        self.emit("%s = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, "
                  "strides = dense<2> : tensor<2xi64>} ins(%s, %s : %s, tensor<3x3xf32>) outs(%s : %s) -> %s"
                  % (x, p, win, t(*ps), i, t(*out), t(*out)))
        s = out
        for li, (mid, wide, blocks, stride) in enumerate(LAYERS):
            for bi in range(blocks):
                x, s = self.block(x, s, "l%db%d" % (li + 1, bi), mid, wide,
                                  stride if bi == 0 else 1, bi == 0)
        # Global average pool: the sum over H, W, times 1/49.
        e, i, sm = self.tmp("e"), self.tmp("init"), self.tmp("sum")
        self.emit("%s = tensor.empty() : %s" % (e, t(1, 2048)))
        self.emit("%s = linalg.fill ins(%%z : f32) outs(%s : %s) -> %s" % (i, e, t(1, 2048), t(1, 2048)))
        self.emit("%s = linalg.generic {indexing_maps = [#id4, #pool4], iterator_types = "
                  "[\"parallel\", \"reduction\", \"reduction\", \"parallel\"]} ins(%s : %s) outs(%s : %s) {"
                  % (sm, x, t(*s), i, t(1, 2048)))
        a = self.tmp("s")
        self.emit("^bb0(%in: f32, %acc: f32):")
        self.emit("  %s = arith.addf %%in, %%acc : f32" % a)
        self.emit("  linalg.yield %s : f32" % a)
        self.emit("} -> %s" % t(1, 2048))
        k, avg = self.tmp("k"), self.tmp("avg")
        self.emit("%s = arith.constant dense<%s> : %s" % (k, repr(1.0 / (s[1] * s[2])), t(1, 2048)))
        self.emit("%s = arith.mulf %s, %s : %s" % (avg, sm, k, t(1, 2048)))
        # The classifier.
        fw = self.arg("w_fc", t(2048, 1000))
        fb = self.arg("b_fc", t(1000))
        e, i, mm = self.tmp("e"), self.tmp("init"), self.tmp("fc")
        self.emit("%s = tensor.empty() : %s" % (e, t(1, 1000)))
        self.emit("%s = linalg.fill ins(%%z : f32) outs(%s : %s) -> %s" % (i, e, t(1, 1000), t(1, 1000)))
        self.emit("%s = linalg.matmul ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                  % (mm, avg, fw, t(1, 2048), t(2048, 1000), i, t(1, 1000), t(1, 1000)))
        y = self.bias(mm, (1, 1000), fb)
        self.emit("return %s : %s" % (y, t(1, 1000)))
        assert self.convs == 53, self.convs

    def text(self):
        head = [
            "// ResNet-50 v1, whole (f32, batch 1, 224x224x3 NHWC, HWCF weights), in",
            "// linalg on tensors: %d convs (20 distinct), the max pool, the average" % self.convs,
            "// pool and the classifier, batch norm folded into per-channel biases.",
            "// Generated by bench/conv/resnet50_model.py (derived from the",
            "// architecture; weights and biases are arguments, image first). Do not edit.",
            "#id2 = affine_map<(d0, d1) -> (d0, d1)>",
            "#last2 = affine_map<(d0, d1) -> (d1)>",
            "#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>",
            "#last4 = affine_map<(d0, d1, d2, d3) -> (d3)>",
            "#pool4 = affine_map<(d0, d1, d2, d3) -> (d0, d3)>",
        ]
        sig = ["func.func @resnet50(\n", ",\n".join("    %s: %s" % a for a in self.args),
               ") -> %s {" % t(1, 1000)]
        return "\n".join(head + ["".join(sig)] + self.body + ["}", ""])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "resnet50_model.mlir")
    m = Model()
    m.build()
    with open(out, "w") as f:
        f.write(m.text())
    print("%s: %d arguments, %d convs" % (out, len(m.args), m.convs))


if __name__ == "__main__":
    main()
