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
fmt = "%-34s %7s %4s %7s %-20s %-20s %8s %9s %6s  %s"
print(fmt % ("op", "best", "thr", "default", "best/default [95% CI]",
    "best/default@1thr", "openblas", "best/blas", "noise", "best config"))
print(fmt % ("", "GFLOP/s", "", "GFLOP/s", "(same threads)", "", "GFLOP/s",
    "", "cv", ""))
f = lambda x: "%.1f" % x if x else "-"
def ci(r):
    return "%.2f [%.2f, %.2f]" % (r["est"], r["lo"], r["hi"]) if r else "-"
for op in doc["ops"]:
    if not op.get("tuned") or not op.get("best"):
        print(fmt % (op["name"], "-", "", "", "", "", "", "", "", "no valid config"))
        continue
    b, r = op["gflops"], op["reference_gflops"]
    thr = op["baseline_threads"]
    s1 = ci(op["speedup_vs_1thread"]) if thr != 1 else "(same)"
    blas = ("%.2f" % (b / r) if op["reference_same_precision"] else
        "%.2f*" % (b / r)) if r else "-"
    print(fmt % (op["name"], f(b), thr, f(op["baseline_gflops"]),
        ci(op["speedup_ci"]), s1, f(r), blas, "%.1f%%" % (100 * op["noise_cv"]),
        op["best"] + (" (drift)" if op.get("baseline_drift") else "")
        + (" (= default)" if op.get("default_is_best") else "")))
print()
print("best and default: medians of 5 rounds measured after the choice, interleaved;")
print("best/default: geometric mean of the paired round ratios, Student-t 95% CI;")
print("noise: CV of the 1-thread default re-measured across the op's tuning;")
print("job noise floor: %.1f%% over %d measurements. (* = OpenBLAS is not the op's precision)"
    % (100 * doc.get("noise_floor_cv", 0), doc.get("noise_measurements", 0)))
PY
