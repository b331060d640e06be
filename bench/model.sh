#!/bin/sh
# A whole model, end to end: tune its distinct matmuls (autosched run),
# build it untuned and tuned (autosched build), time both on the same inputs
# (zeros, of the types its entry function takes), and print the untuned and
# tuned times, the speedup, the time the store predicts (the untuned time
# minus, for every distinct op, its occurrences x (its default's time - its
# best's time)), the matmuls' share of the model's time, and per distinct
# op its count, its share of the model's matmul time before and after, and
# its speedup.
#
#   bench/model.sh MODEL.mlir [CFG]
# CFG: a cfg whose input_file is the model (default: one written here,
# trial_budget = TRIALS over all distinct ops, min_time 0.05 s).
# Environment: BUILD (build tree, default build; built if missing), CPUS
# (CPUs to tune and time on, default 0,1), DB (store; default a fresh one
# in a temporary folder; an existing one resumes), TRIALS (default 200),
# MIN_TIME (seconds of calls per timing, default 3), ROUNDS (timings of each
# build, interleaved, default 3), FUNC (the entry function, default the
# first public function with results).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/toolchain.env"
build=${BUILD:-$top/build}
if [ -z "${CPUS:-}" ] && [ "$(nproc)" -ge 2 ]; then cpus=0,1; else cpus=${CPUS:-0}; fi
model=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
trials=${TRIALS:-200}
if [ ! -x "$build/daemon/autosched" ]; then
	cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$build" -j2 >/dev/null
fi
AS=$build/daemon/autosched
work=$(mktemp -d "${TMPDIR:-/tmp}/model.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT INT TERM
db=${DB:-$work/model.db}
# A function named main would clash with the timer's own main: renamed in a copy.
sed -e 's/func\.func @main(/func.func @model_main(/' -e 's/call @main(/call @model_main(/' \
    "$model" > "$work/model.mlir"
if [ $# -ge 2 ]; then
	sed -e "s|^input_file *=.*|input_file = $work/model.mlir|" "$2" > "$work/a.cfg"
else
	printf '[Env]\ninput_file = %s\n[SearchStrategy]\ntrial_budget = %s\n[Measure]\nmin_time = 0.05\n' \
	    "$work/model.mlir" "$trials" > "$work/a.cfg"
fi

echo "== tuning $(basename "$model") ($(lscpu | sed -n 's/^Model name: *//p' | head -1))"
t0=$(date +%s)
env -u OPENBLAS_CORETYPE "$AS" run "$work/a.cfg" --db "$db" --cpus "$cpus" --quiet --json >"$work/run.json" || {
	echo "model.sh: autosched run failed (exit $?)" >&2
	exit 1
}
t1=$(date +%s)
echo "   $((t1 - t0)) s"
echo "== building untuned and tuned"
t0=$(date +%s)
"$AS" build "$work/model.mlir" --untuned -o "$work/untuned.so" >/dev/null
t1=$(date +%s)
"$AS" build "$work/model.mlir" --db "$db" -o "$work/tuned.so" >/dev/null
t2=$(date +%s)
echo "   untuned $((t1 - t0)) s, tuned $((t2 - t1)) s"
"/usr/lib/llvm-$LLVM_VERSION/bin/mlir-opt" "$work/model.mlir" >"$work/printed.mlir"

python3 - "$work" "$cpus" "${MIN_TIME:-3}" "${ROUNDS:-3}" "${FUNC:-}" "$db" <<'PY'
import json, re, sqlite3, subprocess, sys
work, cpus, min_time, rounds, want_fn, dbpath = sys.argv[1:]
rounds = int(rounds)
def strip_dicts(line):
    # A signature without its attribute dictionaries ({iree.identifier = "…"}),
    # which hold ':' ',' ')' of their own; strings skipped.
    out, depth, i = [], 0, 0
    while i < len(line):
        ch = line[i]
        if ch == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            if depth == 0:
                out.append(line[i:j + 1])
            i = j + 1
            continue
        if ch == "{":
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(ch)
        i += 1
    return "".join(out)

# The printer writes each signature on one line; its body's '{' ends it.
text = "\n".join(strip_dicts(l.rstrip()[:-1]).replace(" attributes ", " ") + "{"
                 if "func.func" in l and l.rstrip().endswith("{") else l
                 for l in open(work + "/printed.mlir").read().split("\n"))
sig = re.compile(r"func\.func @([\w$.]+)\(([^)]*)\)\s*->\s*\(?([^{]*?)\)?\s*(?:attributes\s*\{[^}]*\}\s*)?\{")
ty = re.compile(r"tensor<((?:\d+x)*)([a-z]+[0-9]*)>|\b(i\d+|f\d+|bf16|index)\b")
fns = [(m.group(1), m.group(2), m.group(3)) for m in sig.finditer(text)
       if not text[m.start() - 8:m.start()].strip().endswith("private")]
fns = [f for f in fns if f[2].strip()]
if want_fn:
    fns = [f for f in fns if f[0] == want_fn]
if not fns:
    sys.exit("model.sh: no public function with results")
fn, args, res = fns[0]

def types(s):
    out = []
    for part in re.split(r",(?![^<]*>)", s):
        part = part.split(":")[-1].strip()
        m = re.match(r"tensor<((?:\d+x)*)([a-z]+[0-9]*)>", part)
        if m:
            dims = [int(x) for x in m.group(1).split("x") if x]
            out.append(("t", dims, m.group(2)))
        elif part:
            out.append(("s", [], part.split()[0]))
    return out

ain, aout = types(args), types(res)
size = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "i1": 1}
ctype = {"f32": "float", "f64": "double", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t",
         "i64": "int64_t", "i1": "_Bool", "index": "int64_t"}
# The timer: the model's C interface with its exact prototype, compiled here.
c = ["#include <dlfcn.h>", "#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
     "#include <string.h>", "#include <time.h>",
     "static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}",
     "static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}"]
params = ["void *"] + [("void *" if k == "t" else ctype.get(e, "int64_t")) for k, d, e in ain]
c.append("typedef void (*fn_t)(%s);" % ", ".join(params))
# Functions the model declares and does not define (the DeepSeek block's
# rtclock, record_timing hooks): defined here, doing nothing, so the library
# loads (the timer is linked -rdynamic).
ret = {"f64": "double", "f32": "float", "i64": "int64_t", "i32": "int32_t", "index": "int64_t"}
for m in re.finditer(r"func\.func private @([\w$.]+)\(([^)]*)\)(?:\s*->\s*\(?\s*([\w]*)\s*\)?)?\s*$", text, re.M):
    r = ret.get(m.group(3) or "", "void")
    c.append("%s _mlir_ciface_%s(){%s}" % (r, m.group(1), "" if r == "void" else "return 0;"))
    c.append("%s %s(){%s}" % (r, m.group(1), "" if r == "void" else "return 0;"))
c.append("static void *desc(int64_t n, int rank, const int64_t *dims, size_t esz){")
c.append(" int64_t *d=calloc(3+2*(size_t)rank,8); void *b=aligned_alloc(64,((size_t)n*esz+63)/64*64+64);")
c.append(" memset(b,0,(size_t)n*esz); d[0]=d[1]=(int64_t)(intptr_t)b; int64_t s=1;")
c.append(" for(int i=rank-1;i>=0;i--){d[3+i]=dims[i];d[3+rank+i]=s;s*=dims[i];} return d;}")
c.append("int main(int argc,char**argv){ void*h=dlopen(argv[1],RTLD_NOW); if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}")
c.append(" fn_t f=(fn_t)dlsym(h,\"_mlir_ciface_%s\"); if(!f){fprintf(stderr,\"no _mlir_ciface_%s\\n\");return 1;}" % (fn, fn))
c.append(" double mt=atof(argv[2]); static double times[100000]; int nt=0;")
call_args = []
for i, (k, dims, e) in enumerate(ain):
    if k == "t":
        n = 1
        for x in dims:
            n *= x
        c.append(" int64_t dm%d[%d]={%s}; void *a%d=desc(%dLL,%d,dm%d,%d);" % (
            i, max(1, len(dims)), ",".join(str(x) for x in dims) or "0", i, n, len(dims), i, size.get(e, 4)))
        call_args.append("a%d" % i)
    else:
        call_args.append("0")
nres_words = sum(3 + 2 * len(d) for k, d, e in aout)
c.append(" int64_t *res=calloc(%d,8); double t0=now();" % max(1, nres_words))
c.append(" do{ double s=now(); f(%s); if(nt<100000) times[nt++]=now()-s;" % ", ".join(["res"] + call_args))
off = 0
for k, dims, e in aout:
    c.append("  free((void*)(intptr_t)res[%d]);" % off)
    off += 3 + 2 * len(dims)
c.append(" }while(now()-t0<mt||nt<3);")
c.append(" qsort(times+1,(size_t)nt-1,sizeof*times,cmp); printf(\"%.6f\\n\",times[1+(nt-1)/2]*1e3); return 0;}")
open(work + "/timer.c", "w").write("\n".join(c) + "\n")
subprocess.run(["cc", "-O2", "-rdynamic", "-o", work + "/timer", work + "/timer.c", "-ldl"], check=True)

def timed(lib):
    p = subprocess.run(["taskset", "-c", cpus, work + "/timer", lib, min_time],
                       check=True, capture_output=True, text=True)
    return float(p.stdout)

times = {"untuned": [], "tuned": []}
for r in range(rounds):
    for k in (["untuned", "tuned"] if r % 2 == 0 else ["tuned", "untuned"]):
        times[k].append(timed(work + "/" + k + ".so"))
med = lambda v: sorted(v)[len(v) // 2] if v else 0
u, t = med(times["untuned"]), med(times["tuned"])

run = json.load(open(work + "/run.json"))
db = sqlite3.connect("file:%s?mode=ro" % dbpath, uri=True)
rows = []
for op in run["ops"]:
    if not op.get("tuned") or not op.get("best"):
        continue
    name, count = op["name"], op.get("occurrences", 1)
    oid = db.execute("select id from ops where name = ?", (op["name"],)).fetchone()[0]
    # The default at 1 thread (what the untuned build runs): the job's own baseline rounds.
    g = sorted(r[0] for r in db.execute(
        "select gflops from trials where job_id = ? and op_id = ? and phase = 'baseline' and threads = 1 "
        "and status in ('ok','unstable')", (run["job_id"], oid)))
    g1 = g[len(g) // 2] if g else 0
    best_ms = op.get("runtime_ms") or 0
    flops = op["gflops"] * best_ms * 1e6 if best_ms else 0
    def_ms = flops / (g1 * 1e6) if g1 else 0
    rows.append((name, count, def_ms, best_ms, op.get("trials", 0)))
before = sum(c * d for _, c, d, b, _ in rows)
after = sum(c * b for _, c, d, b, _ in rows)
predicted = u - (before - after)
print()
print("== %s, function @%s, %d rounds interleaved, CPUs %s" % (work.split("/")[-1], fn, rounds, cpus))
fmt = "%-12s %-12s %-8s %-14s %-12s %-14s %-14s"
print(fmt % ("untuned ms", "tuned ms", "speedup", "predicted ms", "tuned/pred", "matmul share", "matmul gain"))
print(fmt % ("%.2f" % u, "%.2f" % t, "%.2fx" % (u / t if t else 0), "%.2f" % predicted,
             "%.3f" % (t / predicted if predicted else 0), "%.1f%%" % (100 * before / u if u else 0),
             "%.2fx" % (before / after if after else 0)))
print()
fmt = "%-42s %6s %6s %10s %10s %8s %8s %8s"
print(fmt % ("distinct op", "count", "trials", "ms before", "ms after", "share<", "share>", "speedup"))
for name, count, d, b, tr in sorted(rows, key=lambda r: -r[1] * r[2]):
    print(fmt % (name, count, tr, "%.3f" % (count * d), "%.3f" % (count * b),
                 "%.1f%%" % (100 * count * d / before if before else 0),
                 "%.1f%%" % (100 * count * b / after if after else 0), "%.2fx" % (d / b if b else 0)))
print(fmt % ("all matmuls", sum(r[1] for r in rows), sum(r[4] for r in rows), "%.3f" % before,
             "%.3f" % after, "100%", "100%", "%.2fx" % (before / after if after else 0)))
print()
print("untuned, tuned: medians of %d timings each of the built model (%s s of calls each), interleaved;" % (rounds, min_time))
print("ms before/after: occurrences x the op's untuned default (1 thread) / chosen config, from the store")
print("(the job's own rounds); predicted: untuned - (before - after); matmul share: before / untuned.")
PY
