#!/bin/sh
# The GEMM benchmark: tune the f32 matmuls of bench/gemm/gemm.mlir (128^3,
# 512^3, 1024^3, 2048^3, the seed's 1024x512x256) on this CPU with the
# mlir-cpu backend and a fixed budget (bench/gemm/gemm.cfg), then print per
# op the best-found GFLOP/s, the baseline's (untuned default), OpenBLAS's at
# the same thread count and the ratios.
#
# Environment: BUILD (build tree, default build; built if missing),
# CPUS (CPU list to measure on, default 0), DB (store, default a fresh one in
# a temporary folder; reusing one resumes instead of measuring again).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
cpus=${CPUS:-0}
if [ ! -x "$build/daemon/autosched" ]; then
	cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$build" -j2 >/dev/null
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gemm.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
db=${DB:-$work/gemm.db}

# OpenBLAS picks its kernels and blocking from these; the comparison is
# against what it does on this CPU by itself, so only our commands drop them.
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    "$build/daemon/autosched" run "$top/bench/gemm/gemm.cfg" --db "$db" \
    --cpus "$cpus" --quiet --json >"$work/run.json" || {
	echo "gemm.sh: autosched run failed (exit $?)" >&2
	exit 1
}

python3 - "$work/run.json" <<'PY'
import json, sys

doc = json.load(open(sys.argv[1]))
fmt = "%-34s %9s %9s %9s %9s %9s  %s"
print(fmt % ("op", "best", "default", "openblas", "best/def", "best/blas",
    "best config"))
print(fmt % ("", "GFLOP/s", "GFLOP/s", "GFLOP/s", "", "", ""))
for op in doc["ops"]:
    b, d, r = op.get("gflops"), op.get("baseline_gflops"), op.get("reference_gflops")
    f = lambda x: "%.1f" % x if x else "-"
    q = lambda x, y: "%.2f" % (x / y) if x and y else "-"
    print(fmt % (op["name"], f(b), f(d), f(r), q(b, d), q(b, r),
        op.get("best", "-") + (" (drift)" if op.get("baseline_drift") else "")))
PY
