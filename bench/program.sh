#!/bin/sh
# The whole-program benchmark: tune the ops of a cfg's program (default
# configs/example.cfg), build it twice with `autosched build` (tuned and
# --untuned), time every public function of both through its C interface
# and print, per function: the tuned build's time, the untuned build's, the
# sum of its tuned dispatches' isolated times from the store, and the
# speedup the store predicts (sum of baseline times / sum of best times).
#
#   bench/program.sh [CFG]
# Environment: BUILD (build tree, default build; built if missing), CPUS
# (CPUs to tune and time on, default 0,1), DB (store; default a fresh one in a temporary
# folder; an existing one resumes), MIN_TIME (seconds per function, 1).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
. "$top/toolchain.env"
# The cfg's threads need as many CPUs; the program is timed on the same ones.
if [ -z "${CPUS:-}" ] && [ "$(nproc)" -ge 2 ]; then cpus=0,1; else cpus=${CPUS:-0}; fi
cpu=$cpus
min_time=${MIN_TIME:-1}
cfg=${1:-$top/configs/example.cfg}
bench_build bench/bench_program_time
bench_work program
db=${DB:-$work/program.db}
prog=$(python3 - "$cfg" <<'PY'
import configparser, os, sys
c = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
c.read(sys.argv[1])
print(os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), c["Env"]["input_file"]))
PY
)

deadline "${RUN_DEADLINE:-14400}" "$AS" run "$cfg" --db "$db" --cpus "$cpus" --quiet >/dev/null || {
	echo "program.sh: autosched run failed (exit $?)" >&2
	exit 1
}
deadline 3600 "$AS" build "$prog" --db "$db" -o "$work/tuned.so"
deadline 3600 "$AS" build "$prog" --untuned -o "$work/untuned.so"
deadline 3600 "$AS" analyze "$prog" --json >"$work/ops.json"
deadline 3600 "$AS" best --db "$db" --format json >"$work/best.json"
deadline 600 "/usr/lib/llvm-$LLVM_VERSION/bin/mlir-opt" "$prog" >"$work/program.mlir"

python3 - "$work" "$build/bench/bench_program_time" "$cpu" "$min_time" <<'PY'
import json, re, subprocess, sys
work, timer, cpu, min_time = sys.argv[1:]
ops = json.load(open(work + "/ops.json"))["ops"]
best = {b["op"]: b for b in json.load(open(work + "/best.json"))}
text = open(work + "/program.mlir").read()
sig = re.compile(r"func\.func @([\w$.]+)\(([^)]*)\)(?:\s*->\s*\(?([^{]*?)\)?)?\s*(?:attributes\s*\{[^}]*\}\s*)?\{")
ty = re.compile(r"tensor<([0-9x]+x[a-z0-9]+)>")

def run(lib, fn, res, args):
    cmd = ["taskset", "-c", cpu, timer, lib, fn, min_time, str(len(res))] + res + args
    return float(subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout)

fmt = "%-16s %11s %11s %11s %9s %9s %9s"
print(fmt % ("function", "tuned ms", "untuned ms", "sum ops ms", "tuned/sum", "speedup", "predicted"))
for m in sig.finditer(text):
    fn, args, res = m.group(1), ty.findall(m.group(2)), ty.findall(m.group(3) or "")
    if not res:
        continue
    t = run(work + "/tuned.so", fn, res, args)
    u = run(work + "/untuned.so", fn, res, args)
    mine = [o for o in ops if o["function"] == fn and o["tunable"]]
    rows = [best.get(o["name"]) for o in mine]
    s = sum(r["runtime_ms"] for r in rows if r)
    base = sum(r["runtime_ms"] * r["gflops"] / r["baseline_gflops"]
               for r in rows if r and r["baseline_gflops"] > 0)
    f = lambda x: "%.4f" % x if x else "-"
    q = lambda x, y: "%.2f" % (x / y) if x and y else "-"
    print(fmt % (fn, f(t), f(u), f(s), q(t, s), q(u, t), q(base, s)))
PY
