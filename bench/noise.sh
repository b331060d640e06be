#!/bin/sh
# How well repeated measurements of one config agree (issue: figures to
# trust). Builds the backend's default kernel for 128^3 and 512^3 f32, then
# runs the measuring child on each REPS times back to back in each setting
# (min_time 0.05, 0.2, 0.5 s) and prints, per setting, the CV of the medians
# across runs (what "the same config measured again" varies by), the worst
# run's own CV, and the repetitions dropped because the process was switched
# out. Nothing else of yours should run meanwhile.
#   bench/noise.sh                 # BUILD=build CPU=0 REPS=12
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deadline.sh"
build=${BUILD:-$top/build}
cpu=${CPU:-0}
reps=${REPS:-12}
measure=$build/backends/mlir-cpu/autosched-measure
work=$(mktemp -d "${TMPDIR:-/tmp}/noise.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

for n in 128 512; do
	cat > "$work/m$n.mlir" <<M
func.func @f(%a: tensor<${n}x${n}xf32>, %b: tensor<${n}x${n}xf32>, %c: tensor<${n}x${n}xf32>) -> tensor<${n}x${n}xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<${n}x${n}xf32>, tensor<${n}x${n}xf32>) outs(%c : tensor<${n}x${n}xf32>) -> tensor<${n}x${n}xf32>
  return %0 : tensor<${n}x${n}xf32>
}
M
	printf '[Env]\ninput_file = m%s.mlir\n[SearchSpace]\nthreads = [1]\nvector_m = [6]\nvector_n = [16]\n[SearchStrategy]\ntuner = grid\nn_trial = 1\n[Measure]\nmin_time = 0.01\nconfirm_top = 0\n' "$n" > "$work/m$n.cfg"
	AUTOSCHED_WORK=$work/w$n "$build/daemon/autosched" run "$work/m$n.cfg" \
	    --db "$work/m$n.db" --quiet --cpus "$cpu" > /dev/null 2>&1 || true
done

python3 - "$measure" "$work" "$cpu" "$reps" <<'PY'
import glob, json, statistics as st, subprocess, sys
measure, work, cpu, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
print("%-8s %-9s %6s %10s %12s %12s %9s" % ("op", "min_time", "runs", "median ms",
    "CV of runs", "worst run CV", "dropped"))
for n in (128, 512):
    # The default config's kernel: the baseline the run compiled first.
    so = sorted(glob.glob("%s/w%d/**/kernel.so" % (work, n), recursive=True))
    if not so:
        print("%d^3: no kernel was built" % n)
        continue
    for mt in (0.05, 0.2, 0.5):
        med, cvs, drop = [], [], 0
        for _ in range(reps):
            out = subprocess.run([measure, "--kernel", so[0], "--shape",
                "1x%dx%dx%d" % (n, n, n), "--types", "f32,f32,f32", "--cpus", cpu,
                "--min-time", str(mt), "--verify", "0"], capture_output=True,
                text=True, timeout=600).stdout.strip().splitlines()[-1]
            d = json.loads(out)
            med.append(d["median_ms"])
            cvs.append(d["cv"])
            drop += d.get("reps_dropped", 0)
        print("%-8s %-9s %6d %10.4f %11.2f%% %11.2f%% %9d" % ("%d^3" % n, mt, reps,
            st.median(med), 100 * st.stdev(med) / st.mean(med), 100 * max(cvs), drop))
PY
