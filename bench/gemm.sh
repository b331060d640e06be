#!/bin/sh
# The GEMM benchmark: tune the f32 matmuls of bench/gemm/gemm.mlir (128^3,
# 512^3, 1024^3, 2048^3, the seed's 1024x512x256) on this CPU with the
# mlir-cpu backend and a fixed budget (bench/gemm/gemm.cfg), then print per
# op the best-found GFLOP/s, the baseline's (untuned default), OpenBLAS's at
# the same thread count and the ratios.
#
# Environment: BUILD (build tree, default build; built if missing),
# CPUS (CPU list to measure on, default 0,1), DB (store, default a fresh one in
# a temporary folder; reusing one resumes instead of measuring again).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
# Both thread counts of gemm.cfg need two CPUs; on one, 1 thread only.
if [ -z "${CPUS:-}" ] && [ "$(nproc)" -ge 2 ]; then cpus=0,1; else cpus=${CPUS:-0}; fi
if [ ! -x "$build/daemon/autosched" ]; then
	cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$build" -j2 >/dev/null
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gemm.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
db=${DB:-$work/gemm.db}
cfg=$top/bench/gemm/gemm.cfg
case $cpus in
*,*) ;;
*)	cp "$top/bench/gemm/gemm.cfg" "$top/bench/gemm/gemm.mlir" "$work/"
	sed -i 's/^threads = .*/threads = [1]/' "$work/gemm.cfg"
	cfg=$work/gemm.cfg ;;
esac

# OpenBLAS picks its kernels and blocking from these; the comparison is
# against what it does on this CPU by itself, so only our commands drop them.
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    "$build/daemon/autosched" run "$cfg" --db "$db" \
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

# Peers, side by side on the same CPUs: OpenBLAS, oneDNN and BLIS at 1 and 2
# threads (as many as CPUS allows), and the FMA peak of this CPU (register-only
# FMAs in its widest vectors: the physical limit), each timed by the same
# measuring child (warm-up, median of repetitions for 0.3 s, pinned), three
# rounds interleaved: multi-threaded library runs move by 20% from run to run
# here, so one run of each would decide the ratio by luck.
measure=$build/backends/mlir-cpu/autosched-measure
ncpu=$(echo "$cpus" | tr ',' '\n' | wc -l)
python3 - "$work/run.json" "$measure" "$cpus" "$ncpu" <<'PY'
import json, re, subprocess, sys
doc, measure, cpus, ncpu = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], int(sys.argv[4])
def run(*args, threads):
    cpu = ",".join(cpus.split(",")[:threads])
    p = subprocess.run([measure, *args, "--threads", str(threads), "--cpus", cpu,
        "--min-time", "0.3"], capture_output=True, text=True,
        env={k: v for k, v in __import__("os").environ.items()
             if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")})
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except Exception:
        return None
print()
fmt = "%-34s %3s %8s %8s %8s %8s %8s  %9s %9s %9s %7s"
print(fmt % ("op", "thr", "best", "openblas", "onednn", "blis", "peak",
    "best/blas", "best/dnnl", "best/blis", "% peak"))
peak = {}
for t in range(1, min(ncpu, 2) + 1):
    d = run("--peak", threads=t)
    peak[t] = d["gflops"] if d else 0
for op in doc["ops"]:
    m = re.match(r"(batch_)?matmul_(\d+(?:x\d+)+)_", op["name"])
    if not m or not op.get("best"):
        continue
    dims = [int(x) for x in m.group(2).split("x")]
    b, (M, N, K) = (dims[0], dims[1:]) if m.group(1) else (1, dims)
    flops = 2.0 * b * M * N * K
    shape = "%dx%dx%dx%d" % (b, M, N, K)
    for t in range(1, min(ncpu, 2) + 1):
        # Three rounds, the libraries interleaved; each by its median round.
        runs = {"openblas": [], "onednn": [], "blis": []}
        for _ in range(3):
            for ref in runs:
                d = run("--ref", ref, "--shape", shape, "--types", "f32,f32,f32", threads=t)
                if d and d.get("median_ms"):
                    runs[ref].append(flops / (d["median_ms"] * 1e6))
        g = {k: sorted(v)[len(v) // 2] if v else 0 for k, v in runs.items()}
        best = op["gflops"] if op["knobs"].get("threads", 1) == t else 0
        r = lambda x, y: "%.2f" % (x / y) if x and y else "-"
        f = lambda x: "%.1f" % x if x else "-"
        print(fmt % (op["name"], t, f(best), f(g["openblas"]), f(g["onednn"]),
            f(g["blis"]), f(peak[t]), r(best, g["openblas"]), r(best, g["onednn"]),
            r(best, g["blis"]), "%.0f%%" % (100 * best / peak[t]) if best and peak[t] else "-"))
print("best: the chosen config, shown at its own thread count (measured after the choice);")
print("peers: autosched-measure --ref openblas|onednn|blis, median of 3 interleaved rounds;")
print("peak: --peak, register-only FMAs in the widest vectors, one pinned thread per CPU.")
PY
