#!/bin/sh
# A whole model, end to end: tune its distinct matmuls (autosched run),
# build it untuned and tuned (autosched build), time both on the same inputs
# (zeros, of the types its entry function takes), and print the untuned and
# tuned times, the speedup, the time the store predicts (the untuned time
# minus, for every distinct op, its occurrences x (its default's time - its
# best's time)), the matmuls' share of the model's time, and per distinct
# op its count, its share of the model's matmul time before and after, its
# speedup and, for an op that came from an f32 conv, oneDNN's convolution
# of its geometry beside it.
#
#   bench/model.sh [--iree | --vs-iree] MODEL.mlir [CFG [CFG2]]
# --vs-iree: the builds (untuned, tuned) and IREE's own default compile of
# the same file (iree-compile, llvm-cpu, target-cpu=host; timed by
# iree-benchmark-module, its workers pinned to CPUS) in the same
# interleaved rounds: how the tuned build compares with what a user of
# IREE ships. The builds' page faults per call (after the first) are
# printed beside their times.
# --iree: the model as IREE users run it: its distinct matmuls tuned with
# backend = iree (at as many threads as CPUS names), one tuning spec
# exported for the model (autosched export --format iree-spec), the model
# compiled by iree-compile without and with the spec, and both timed by
# iree-benchmark-module; "untuned" is then IREE's own codegen and the
# default of each op IREE's own config.
# CFG: a cfg whose input_file is the model (default: one written here,
# trial_budget = TRIALS over all distinct ops, min_time 0.05 s; with --iree
# it must say backend = iree). CFG2: a second cfg (another allocation of
# the same trials, say), tuned into a store of its own, built and timed in
# the same interleaved rounds as the untuned and CFG's builds.
# Environment: BUILD (build tree, default build; built if missing), CPUS
# (CPUs to tune and time on, default 0,1), DB, DB2 (CFG's and CFG2's
# stores; default fresh ones in a temporary folder; an existing one
# resumes), TRIALS (default 200),
# MIN_TIME (seconds of calls per timing, default 3), ROUNDS (timings of each
# build, interleaved, default 3), FUNC (the entry function, default the
# first public function with results), MALLOC (default "default": glibc's
# own thresholds, as in a user's process that dlopens the library;
# "serving": the timer keeps freed memory mapped, mallopt, as a tuned
# serving process would), ONEDNN_MIN_TIME (seconds of calls per oneDNN
# conv timing, default 0.5), WEIGHTS (as-is, the default: the file as it
# is; dense: its splat weight constants made dense first, bench/densify.py,
# for every build and IREE's compile alike: the shared models' weights are
# splats, which IREE folds into its matmuls' code, so that a matmul's B is
# never loaded, as no real checkpoint allows).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
. "$top/toolchain.env"
if [ -z "${CPUS:-}" ] && [ "$(nproc)" -ge 2 ]; then cpus=0,1; else cpus=${CPUS:-0}; fi
iree=0 vsiree=0
if [ "${1:-}" = --iree ]; then iree=1; shift; elif [ "${1:-}" = --vs-iree ]; then vsiree=1; shift; fi
[ $# -ge 1 ] || { echo "usage: bench/model.sh [--iree | --vs-iree] MODEL.mlir [CFG [CFG2]]" >&2; exit 2; }
model=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
trials=${TRIALS:-200}
bench_build
bench_work model
db=${DB:-$work/model.db}
# A function named main would clash with the timer's own main: renamed in a copy.
sed -e 's/func\.func @main(/func.func @model_main(/' -e 's/call @main(/call @model_main(/' \
    "$model" > "$work/model.mlir"
case ${WEIGHTS:-as-is} in
as-is) ;;
dense)	# The splat weights made dense (bench/densify.py), for every build.
	echo "== weights: the model's splat weights made dense (bench/densify.py)"
	python3 "$top/bench/densify.py" "$work/model.mlir" "$work/model.dense.mlir"
	mv "$work/model.dense.mlir" "$work/model.mlir" ;;
*)	echo "model.sh: WEIGHTS must be as-is or dense" >&2; exit 2 ;;
esac
nthr=$(echo "$cpus" | tr ',' '\n' | grep -c .)
# The cfgs: tuned (CFG, or one written here) and, with CFG2, tuned2 — each
# tuned into a store of its own (DB, DB2), built and timed beside the other.
cfgfor() {	# cfgfor CFG OUT
	sed -e "s|^input_file *=.*|input_file = $work/model.mlir|" "$1" > "$2"
	if [ $iree = 1 ] && ! grep -q '^backend *= *iree' "$2"; then
		echo "model.sh: $1: --iree needs a cfg with backend = iree" >&2
		exit 2
	fi
}
variants=tuned
if [ $# -ge 2 ]; then
	cfgfor "$2" "$work/tuned.cfg"
elif [ $iree = 1 ]; then
	# The ops at the threads the model runs with: their default is what
	# IREE compiles without the spec.
	printf '[Env]\ninput_file = %s\nbackend = iree\n[SearchSpace]\nthreads = [%s]\n[SearchStrategy]\ntuner = xgboost\ntrial_budget = %s\n[Measure]\nmin_time = 0.05\n' \
	    "$work/model.mlir" "$nthr" "$trials" > "$work/tuned.cfg"
else
	printf '[Env]\ninput_file = %s\n[SearchStrategy]\ntrial_budget = %s\n[Measure]\nmin_time = 0.05\n' \
	    "$work/model.mlir" "$trials" > "$work/tuned.cfg"
fi
if [ $# -ge 3 ]; then
	cfgfor "$3" "$work/tuned2.cfg"
	variants="tuned tuned2"
fi
dbof() { if [ "$1" = tuned ]; then echo "$db"; else echo "${DB2:-$work/model2.db}"; fi; }

for v in $variants; do
	echo "== tuning $(basename "$model"), $v ($(lscpu | sed -n 's/^Model name: *//p' | head -1))"
	t0=$(date +%s)
	deadline "${RUN_DEADLINE:-14400}" env -u OPENBLAS_CORETYPE "$AS" run "$work/$v.cfg" --db "$(dbof $v)" --cpus "$cpus" --quiet --json >"$work/$v.json" || {
		echo "model.sh: autosched run ($v) failed (exit $?)" >&2
		exit 1
	}
	t1=$(date +%s)
	echo "   $((t1 - t0)) s"
done
# IREE's tools as backend = iree finds them without iree_bin: PATH, else
# the venv scripts/deps.sh makes.
venv=${AUTOSCHED_IREE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/autosched/iree-$IREE_VERSION}
ic=$(command -v iree-compile || echo "$venv/bin/iree-compile")
IREE_BENCHMARK=$(command -v iree-benchmark-module || echo "$venv/bin/iree-benchmark-module")
export IREE_BENCHMARK
if [ $iree = 1 ]; then
	echo "== compiling with iree-compile, without and with the spec"
	t0=$(date +%s)
	for k in untuned $variants; do
		# No spec when IREE's own config was kept for every op: then the
		# tuned model is the untuned one, compiled again.
		with=
		if [ $k != untuned ] && deadline 600 "$AS" export --db "$(dbof $k)" --format iree-spec \
		    -o "$work/$k-spec.mlir" 2>"$work/export.txt"; then
			# (One thread: IREE 3.13 can deadlock loading a spec
			# while it configures executables in parallel; README.)
			with="--mlir-disable-threading --iree-codegen-tuning-spec-path=$work/$k-spec.mlir"
		elif [ $k != untuned ]; then
			grep -q "no op to put in the spec" "$work/export.txt" || {
				cat "$work/export.txt" >&2
				exit 1
			}
			echo "   $k: no spec (IREE's own config was kept for every op)"
		fi
		mkdir -p "$work/conf-$k"
		deadline 3600 "$ic" "$work/model.mlir" --iree-hal-target-device=local \
		    --iree-hal-local-target-device-backends=llvm-cpu \
		    --iree-llvmcpu-target-cpu=host $with \
		    --iree-hal-dump-executable-configurations-to="$work/conf-$k" \
		    -o "$work/$k.vmfb" || { echo "model.sh: iree-compile ($k) failed" >&2; exit 1; }
	done
	t1=$(date +%s)
	echo "   $((t1 - t0)) s"
else
	echo "== building untuned and $variants"
	t0=$(date +%s)
	deadline 3600 "$AS" build "$work/model.mlir" --untuned -o "$work/untuned.so" >/dev/null
	for v in $variants; do
		deadline 3600 "$AS" build "$work/model.mlir" --db "$(dbof $v)" -o "$work/$v.so" >/dev/null
	done
	if [ $vsiree = 1 ]; then
		deadline 3600 "$ic" "$work/model.mlir" --iree-hal-target-device=local \
		    --iree-hal-local-target-device-backends=llvm-cpu \
		    --iree-llvmcpu-target-cpu=host -o "$work/iree.vmfb" ||
		    { echo "model.sh: iree-compile of the model failed (--vs-iree)" >&2; exit 1; }
	fi
	t1=$(date +%s)
	echo "   $((t1 - t0)) s"
fi
deadline 600 "/usr/lib/llvm-$LLVM_VERSION/bin/mlir-opt" "$work/model.mlir" >"$work/printed.mlir"
# Each op's conv geometry, for oneDNN's convolution beside it in the table.
deadline 600 "$AS" analyze --json "$work/model.mlir" >"$work/analyze.json"

python3 - "$work" "$cpus" "${MIN_TIME:-3}" "${ROUNDS:-3}" "${FUNC:-}" "$iree" "$variants" "$db" "$(dbof tuned2)" "$vsiree" \
    "$build/backends/mlir-cpu/autosched-measure" <<'PY'
import json, os, re, sqlite3, subprocess, sys
work, cpus, min_time, rounds, want_fn, iree, variants, db1, db2, vsiree, harness = sys.argv[1:]
vsiree = vsiree == "1"
variants = variants.split()
dbs = {"tuned": db1, "tuned2": db2}
iree = iree == "1"
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
c = ["#include <dlfcn.h>", "#include <malloc.h>", "#include <sys/resource.h>", "#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
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
# glibc's own malloc, as a user's process that dlopens the library has it
# (a library that allocates its intermediates each call pays page faults
# for them every call: printed per call). MALLOC=serving keeps freed
# buffers mapped (mallopt), as a tuned serving process would.
c.append("static long faults(void){struct rusage u;getrusage(RUSAGE_SELF,&u);return u.ru_minflt+u.ru_majflt;}")
c.append("int main(int argc,char**argv){ if(getenv(\"AUTOSCHED_MALLOC_SERVING\")){"
         " mallopt(M_MMAP_THRESHOLD,1<<30); mallopt(M_TRIM_THRESHOLD,0x7fffffff);}")
c.append(" void*h=dlopen(argv[1],RTLD_NOW); if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}")
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
c.append(" int64_t *res=calloc(%d,8); double t0=now(); long f0=0;" % max(1, nres_words))
c.append(" do{ double s=now(); f(%s); if(nt<100000) times[nt++]=now()-s;" % ", ".join(["res"] + call_args))
off = 0
for k, dims, e in aout:
    c.append("  free((void*)(intptr_t)res[%d]);" % off)
    off += 3 + 2 * len(dims)
c.append("  if(nt==1) f0=faults();")
c.append(" }while(now()-t0<mt||nt<3);")
c.append(" double fpc=(double)(faults()-f0)/(nt-1);")
c.append(" qsort(times+1,(size_t)nt-1,sizeof*times,cmp); printf(\"%.6f %.1f\\n\",times[1+(nt-1)/2]*1e3,fpc); return 0;}")
open(work + "/timer.c", "w").write("\n".join(c) + "\n")
subprocess.run(["cc", "-O2", "-rdynamic", "-o", work + "/timer", work + "/timer.c", "-ldl"], check=True, timeout=120)

faults = {}
def timed(lib):
    """The built library called by the plain timer: ms per call (median);
    its page faults per call after the first kept in faults[lib]."""
    env = dict(os.environ)
    if os.environ.get("MALLOC") == "serving":
        env["AUTOSCHED_MALLOC_SERVING"] = "1"
    p = subprocess.run(["taskset", "-c", cpus, work + "/timer", lib, min_time],
                       check=True, capture_output=True, text=True, env=env, timeout=600)
    ms, fpc = p.stdout.split()
    faults.setdefault(lib, []).append(float(fpc))
    return float(ms)

def iree_input(k, dims, e):
    """An --input of zeros for one argument (a splat of 0)."""
    return "--input=%s%s=0" % ("".join("%dx" % d for d in dims), e)

def iree_timed(vmfb):
    """The model compiled by iree-compile, timed by iree-benchmark-module
    on the same zeros, its task workers pinned to CPUS: ms per call."""
    argv = ["taskset", "-c", cpus, os.environ["IREE_BENCHMARK"], "--module=" + vmfb,
            "--function=" + fn, "--device=local-task", "--task_topology_cpu_ids=" + cpus,
            *[iree_input(*a) for a in ain], "--benchmark_min_time=%ss" % min_time,
            "--benchmark_format=json"]
    p = subprocess.run(argv, check=True, capture_output=True, text=True, timeout=600)
    b = [x for x in json.loads(p.stdout)["benchmarks"] if x.get("run_type") == "iteration"][0]
    return b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]

ext = ".vmfb" if iree else ".so"
if iree:
    timed = iree_timed
builds = ["untuned"] + variants + (["iree"] if vsiree else [])
times = {k: [] for k in builds}
for r in range(rounds):
    # The order rotated each round.
    for k in builds[r % len(builds):] + builds[:r % len(builds)]:
        if k == "iree":
            times[k].append(iree_timed(work + "/iree.vmfb"))
        else:
            times[k].append(timed(work + "/" + k + ext))
med = lambda v: sorted(v)[len(v) // 2] if v else 0
u = med(times["untuned"])
if vsiree:
    print()
    print("== against IREE's default compile of the same file, %d rounds interleaved, CPUs %s, malloc %s"
          % (rounds, cpus, os.environ.get("MALLOC") or "default (glibc)"))
    fmt = "%-22s %-10s %-28s %-14s %-16s"
    print(fmt % ("", "ms/call", "rounds", "IREE/this", "faults/call"))
    for k in builds:
        lib = work + "/" + k + ".so"
        print(fmt % ({"untuned": "autosched untuned", "tuned": "autosched tuned (CFG)", "tuned2": "autosched tuned (CFG2)",
                      "iree": "IREE default"}[k], "%.3f" % med(times[k]), " ".join("%.3f" % x for x in times[k]),
                     "%.2fx" % (med(times["iree"]) / med(times[k]) if med(times[k]) else 0),
                     "%.0f" % med(faults[lib]) if lib in faults else "-"))
    print("(IREE/this > 1: faster than IREE's default compile. IREE: iree-benchmark-module --device=local-task,")
    print(" workers on CPUs %s; the builds: a plain dlopen caller on the same CPUs; faults: minor+major page" % cpus)
    print(" faults per call after the first, from getrusage; IREE's are not measured: -)")

def op_rows(v):
    """Per distinct op of variant v's job: (name, count, default ms, best ms, trials)."""
    run = json.load(open(work + "/" + v + ".json"))
    db = sqlite3.connect("file:%s?mode=ro" % dbs[v], uri=True)
    rows = []
    for op in run["ops"]:
        if not op.get("tuned") or not op.get("best"):
            continue
        oid = db.execute("select id from ops where name = ?", (op["name"],)).fetchone()[0]
        # The default as the untuned model runs it (IREE: its own config at
        # the model's threads; build: at the model's threads where the op has
        # 2^19 multiply-adds a thread, as export/build.c's build_default
        # decides, else 1): the job's own baseline rounds at those threads
        # (the final step measures the default at the winner's threads), else
        # at 1 thread (noted below the table).
        ncpu = len(cpus.split(","))
        dims = re.search(r"_(\d+(?:x\d+)+)_", op["name"])
        macs = 1
        for x in (dims.group(1).split("x") if dims else []):
            macs *= int(x)
        nth = ncpu
        while nth > 1 and macs / nth < (1 << 19):
            nth -= 1
        def baseline_at(th):
            return sorted(r[0] for r in db.execute(
                "select gflops from trials where job_id = ? and op_id = ? and phase = 'baseline' and threads = ? "
                "and status in ('ok','unstable')", (run["job_id"], oid, th)))
        g = baseline_at(ncpu if iree else nth)
        best_is_default = False
        if not g and not iree and nth > 1:
            # The build's default may be the winner (its final rounds are
            # then the default's): its name is the 1-thread default's at nth.
            d1 = db.execute("select config_name from trials where job_id = ? and op_id = ? and "
                            "phase = 'baseline' and threads = 1 limit 1", (run["job_id"], oid)).fetchone()
            best_is_default = bool(d1) and op["best"] == re.sub(r"_thr_1(?=_|$)", "_thr_%d" % nth, d1[0])
            if not best_is_default:
                g = baseline_at(1)
                at_one.add(op["name"])
        g1 = g[len(g) // 2] if g else 0
        best_ms = op.get("runtime_ms") or 0
        flops = op["gflops"] * best_ms * 1e6 if best_ms else 0
        def_ms = best_ms if best_is_default else flops / (g1 * 1e6) if g1 else 0
        rows.append((op["name"], op.get("occurrences", 1), def_ms, best_ms, op.get("trials", 0)))
        best_threads[op["name"]] = int((op.get("knobs") or {}).get("threads") or 1)
    return rows
best_threads = {}
at_one = set()   # ops whose threaded default was not measured: 1 thread's

# Each distinct op that came from an f32 NHWC/HWCF or NCHW/FCHW conv (the
# first of its name in the program, as the job takes it): its geometry.
convs = {}
for o in json.load(open(work + "/analyze.json"))["ops"]:
    g = o.get("conv")
    if o["name"] in convs or not g or (o["lhs"], o["rhs"], o["acc"]) != ("f32",) * 3 or \
       o.get("op") not in ("linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nchw_fchw"):
        convs.setdefault(o["name"], None)
        continue
    convs[o["name"]] = ("%s:%s" % ("nchw" if "nchw" in o["op"] else "nhwc", ",".join(str(x) for x in
                        [g["n"], g["h"], g["w"], g["c"], g["f"], g["kh"], g["kw"], *g["stride"],
                         *g["dilation"], *g["padding"]])), "%dx%dx%dx%d" % (o["batch"], o["m"], o["n"], o["k"]))

def onednn_ms(name, threads):
    """oneDNN's convolution of op name's geometry (the harness's --ref onednn
    --conv, checked exactly against its direct loop) at threads threads on
    the first of CPUS: ms per call (median), "wrong", or None (not a conv,
    or no oneDNN)."""
    if not convs.get(name):
        return None
    geom, shape = convs[name]
    mine = ",".join(cpus.split(",")[:threads])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    try:
        p = subprocess.run([harness, "--ref", "onednn", "--conv", geom, "--shape", shape, "--types",
                            "f32,f32,f32", "--threads", str(threads), "--cpus", mine, "--min-time",
                            os.environ.get("ONEDNN_MIN_TIME", "0.5"), "--verify", "1"],
                           capture_output=True, text=True, env=env, timeout=600)
        j = json.loads(p.stdout.strip().split("\n")[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None
    return "wrong" if j.get("status") == "wrong" else j.get("median_ms") if p.returncode == 0 else None

print()
print("== %s, function @%s, %d rounds interleaved, CPUs %s" % (work.split("/")[-1], fn, rounds, cpus))
fmt = "%-8s %-12s %-12s %-8s %-14s %-12s %-14s %-14s %-8s"
print(fmt % ("cfg", "untuned ms", "tuned ms", "speedup", "predicted ms", "tuned/pred", "matmul share",
             "matmul gain", "trials"))
tables = []
for v in variants:
    rows = op_rows(v)
    t = med(times[v])
    before = sum(c * d for _, c, d, b, _ in rows)
    after = sum(c * b for _, c, d, b, _ in rows)
    predicted = u - (before - after)
    print(fmt % ({"tuned": "CFG", "tuned2": "CFG2"}[v], "%.2f" % u, "%.2f" % t, "%.2fx" % (u / t if t else 0),
                 "%.2f" % predicted, "%.3f" % (t / predicted if predicted else 0),
                 "%.1f%%" % (100 * before / u if u else 0), "%.2fx" % (before / after if after else 0),
                 sum(r[4] for r in rows)))
    tables.append((v, rows, before, after))
for v, rows, before, after in tables:
    print()
    print("-- %s:" % {"tuned": "CFG", "tuned2": "CFG2"}[v])
    fmt = "%-42s %6s %6s %10s %10s %8s %8s %8s %10s %9s"
    print(fmt % ("distinct op", "count", "trials", "ms before", "ms after", "share<", "share>", "speedup",
                 "oneDNN ms", "vs oneDNN"))
    for name, count, d, b, tr in sorted(rows, key=lambda r: -r[1] * r[2]):
        o = onednn_ms(name, best_threads.get(name, 1))
        print(fmt % (name, count, tr, "%.3f" % (count * d), "%.3f" % (count * b),
                     "%.1f%%" % (100 * count * d / before if before else 0),
                     "%.1f%%" % (100 * count * b / after if after else 0), "%.2fx" % (d / b if b else 0),
                     "-" if o is None else o if o == "wrong" else "%.3f" % (count * o),
                     "%.2fx" % (o / b) if isinstance(o, float) and b else "-"))
    print(fmt % ("all matmuls", sum(r[1] for r in rows), sum(r[4] for r in rows), "%.3f" % before,
                 "%.3f" % after, "100%", "100%", "%.2fx" % (before / after if after else 0), "", ""))
print()
if iree:
    # Dispatches whose configuration the spec changed (IREE's own dump of
    # each executable's configuration, without and with the spec).
    conf = lambda d: {f: re.findall(r"lowering_config = #iree_cpu\.lowering_config<[^>]*>",
                                    open(os.path.join(d, f)).read())
                      for f in sorted(os.listdir(d))}
    a = conf(work + "/conf-untuned")
    mm = [f for f in a if re.search(r"linalg\.(batch_)?matmul",
                                    open(os.path.join(work, "conf-untuned", f)).read())]
    for v in variants:
        b = conf(work + "/conf-" + v)
        print("%s: IREE executables: %d, of which %d matmul; the spec changed the config of %d"
              % ({"tuned": "CFG", "tuned2": "CFG2"}[v], len(a), len(mm),
                 sum(1 for f in a if a[f] != b.get(f))))
    print("untuned, tuned: medians of %d timings each of the model compiled by iree-compile without and" % rounds)
    print("with the spec, timed by iree-benchmark-module (%s s each, workers pinned to CPUs %s), interleaved;" % (min_time, cpus))
    print("ms before/after: occurrences x the op's IREE default / chosen config at %d threads, from the store"
          % len(cpus.split(",")))
else:
    print("untuned, tuned: medians of %d timings each of the built model (%s s of calls each), interleaved;" % (rounds, min_time))
    print("ms before/after: occurrences x the op's untuned default (at the threads the build runs it) / chosen")
    print("config, from the store")
    if at_one:
        print("(the default of %s measured at 1 thread only: its 'before' is slower than the build's)"
              % ", ".join(sorted(at_one)))
print("(the job's own rounds); predicted: untuned - (before - after); matmul share: before / untuned.")
if any(convs.values()):
    print("oneDNN ms: occurrences x oneDNN's convolution of a conv op's geometry (autosched-measure --ref onednn")
    print("--conv, checked exactly against the harness's direct loop; ONEDNN_MIN_TIME s of calls), at the chosen")
    print("config's threads, timed after the rounds, not interleaved; vs oneDNN: its time / the chosen config's")
    print("(> 1: faster than oneDNN). -: not from an f32 conv, or oneDNN missing. The tuned time of a conv with an")
    print("im2col is the harness's im2col copy + GEMM (mlir-cpu); IREE's is the GEMM alone.")
PY
