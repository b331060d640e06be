#!/usr/bin/env python3
"""The tables of bench/gemm.sh, from its runs' JSON (WORK/SET-T.json) and
peers measured here, side by side with each best kernel.

usage: gemm_tables.py WORK MEASURE CPUS SETS DB
"""
import json, os, re, sqlite3, sys

work, measure, cpus, sets, dbpath = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5]
db = sqlite3.connect("file:%s?mode=ro" % dbpath, uri=True)
ncpu = len(cpus.split(","))
counts = [1, 2] if ncpu >= 2 else [1]
ROUNDS = 3


def run(*args, threads):
    """One autosched-measure run pinned to the first THREADS CPUs: its JSON."""
    import subprocess
    cpu = ",".join(cpus.split(",")[:threads])
    p = subprocess.run([measure, *args, "--threads", str(threads), "--cpus", cpu,
                        "--min-time", "0.3"], capture_output=True, text=True, timeout=600)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except Exception:
        return None


def op_shape(name):
    """(BxMxNxK, types "l,r,a", trans "ta,tb", flops) from an op name."""
    m = re.match(r"(batch_)?matmul_(\d+(?:x\d+)+)_([a-z0-9]+?)([tn])_([a-z0-9]+?)([tn])_([a-z0-9]+?)([tn])$", name)
    dims = [int(x) for x in m.group(2).split("x")]
    b, (M, N, K) = (dims[0], dims[1:]) if m.group(1) else (1, dims)
    types = "%s,%s,%s" % (m.group(3), m.group(5), m.group(7))
    trans = "%d,%d" % (m.group(4) == "n", m.group(6) == "n")
    return "%dx%dx%dx%d" % (b, M, N, K), types, trans, 2.0 * b * M * N * K


def set_ops(s):
    """(t, doc, op) for each op of set s's job at each thread count it ran."""
    for t in counts:
        doc = docs.get((s, t))
        for op in doc["ops"] if doc else []:
            yield t, doc, op


def artifact(doc, name, config):
    """The cache folder of config's kernel in doc's job: its final rows, or
    the baseline's when the default was kept or is the best."""
    row = db.execute("select t.artifact from trials t join ops o on "
                     "o.id = t.op_id where t.job_id = ? and o.name = ? and "
                     "t.config_name = ? and t.artifact <> '' and "
                     "t.phase in ('final', 'baseline', 'confirm', 'tune') "
                     "order by t.phase = 'final' desc limit 1",
                     (doc["job_id"], name, config)).fetchone()
    return row[0] if row else "-"


f = lambda x: "%.1f" % x if x else "-"
r = lambda x, y: "%.2f" % (x / y) if x and y else "-"
ci = lambda c: "%.2f [%.2f, %.2f]" % (c["est"], c["lo"], c["hi"]) if c else "-"
med = lambda v: sorted(v)[len(v) // 2] if v else 0

docs = {}
for s in sets:
    for t in counts:
        p = os.path.join(work, "%s-%d.json" % (s, t))
        if os.path.exists(p):
            docs[s, t] = json.load(open(p))

# 1. The tuning runs: best against the default, in the job's own final rounds.
for s in sets:
    print("== %s: tuned from the default space, %s ==" % (s, {
        "gemm": "f32", "models": "the real models' shapes, f32",
        "iree": "f32 compiled by IREE (default: IREE's own config)",
        "resnet50": "ResNet-50's distinct convs, each as the GEMM of its im2col, f32",
        "small": "two small convs as the GEMM of their im2col, f32 (a smoke check)"}.get(s, "mixed precision")))
    fmt = "%-44s %3s %6s %8s %8s %-20s %9s %-40s %6s  %s"
    print(fmt % ("op", "thr", "trials", "best", "default", "best/default [95% CI]",
                 "best/ref", "reference (same rounds)", "noise", "best config"))
    for t, doc, op in set_ops(s):
        if not op.get("tuned") or not op.get("best"):
            print(fmt % (op["name"], t, "", "-", "", "", "", "", "", "no valid config"))
            continue
        ref = op.get("reference_gflops")
        star = "" if op.get("reference_same_precision") else "*"
        print(fmt % (op["name"], t, op.get("measured", 0), f(op["gflops"]),
                     f(op["baseline_gflops"]), ci(op["speedup_ci"]),
                     r(op["gflops"], ref) + star, (op.get("reference") or "-")[:40],
                     "%.1f%%" % (100 * op["noise_cv"]),
                     op["best"] + (" (= default)" if op.get("default_is_best") else "")))
    print()
print("best, default, reference: medians of the 5 rounds measured after the choice, interleaved;")
print("best/default: geometric mean of the paired round ratios, Student-t 95% CI; noise: CV of")
print("the 1-thread default across the op's tuning; * the reference is not the op's precision.")
print()

# 2. Peers, side by side with the best kernel (its artifact run again).
peak, bw = {}, {}
for t in counts:
    d = run("--peak", threads=t)
    peak[t] = d["gflops"] if d else 0
    d = run("--bandwidth", threads=t)
    bw[t] = d["gbytes_s"] if d else 0


def llc_bytes():
    """The last-level cache of CPU 0 (sysfs), 0 if unknown."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    for idx in os.listdir(base) if os.path.isdir(base) else []:
        try:
            sz = open(os.path.join(base, idx, "size")).read().strip()
            n = int(sz[:-1]) * {"K": 1 << 10, "M": 1 << 20}.get(sz[-1], 1)
            best = max(best, n)
        except Exception:
            pass
    return best


def npy_shape(path):
    """(shape, dtype) from a .npy file's header, or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256).decode("latin1")
        m = re.search(r"'descr': *'([^']*)'.*'shape': *\(([^)]*)\)", head)
        return tuple(int(x) for x in m.group(2).split(",") if x.strip()), m.group(1)
    except Exception:
        return None


def iree_data(shape):
    """The folder of the iree job's timing inputs for BxMxNxK f32 (the
    harness made them once per op; found by the arrays' shapes)."""
    b, m, n, k = (int(x) for x in shape.split("x"))
    want = ((m, k), (k, n)) if b == 1 else ((b, m, k), (b, k, n))
    base = os.path.join(work, "cache", "iree")
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        p = os.path.join(base, d)
        if d.startswith("data-") and \
                (npy_shape(os.path.join(p, "time_lhs.npy")) or ((),))[0] in (want[0], (1,) + want[0]) and \
                (npy_shape(os.path.join(p, "time_rhs.npy")) or ((),))[0] in (want[1], (1,) + want[1]):
            return p
    return None


def iree_run(module, data, flops, t):
    """A compiled dispatch timed by iree-benchmark-module the way the iree
    backend times it (dispatch repeated in the module, --batch_size the same
    count, workers pinned to the first t CPUs): GFLOP/s, 0 on failure."""
    import subprocess
    cpu = ",".join(cpus.split(",")[:t])
    rep = max(1, min(64, int(1e8 / flops))) if flops else 1
    argv = ["taskset", "-c", cpu, os.environ.get("IREE_BENCHMARK", "iree-benchmark-module"),
            "--module=" + module, "--function=dispatch", "--device=local-task",
            "--task_topology_cpu_ids=" + cpu, "--batch_size=%d" % rep,
            "--input=@%s/time_lhs.npy" % data, "--input=@%s/time_rhs.npy" % data,
            "--input=@%s/time_acc.npy" % data, "--benchmark_repetitions=5",
            "--benchmark_min_time=0.06s", "--benchmark_format=json"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    try:
        its = [b for b in json.loads(p.stdout)["benchmarks"] if b.get("run_type") == "iteration"]
        scale = {"ms": 1, "us": 1e-3, "ns": 1e-6, "s": 1e3}
        ms = med([b["real_time"] * scale[b["time_unit"]] for b in its])
        return flops / (ms * 1e6) if ms else 0
    except Exception:
        return 0


def iree_peers():
    """IREE's default codegen and IREE tuned by autosched (the iree job's
    modules run again), beside autosched's own kernel (the gemm set's best,
    when that set ran), oneDNN and OpenBLAS: side by side, interleaved."""
    kinds = ["iree tuned", "iree default", "autosched", "onednn", "openblas"]
    print("== iree: IREE default and tuned, measured with the peers, %d rounds interleaved ==" % ROUNDS)
    fmt = "%-34s %3s " + " ".join(["%12s"] * 5) + " " + " ".join(["%15s"] * 4)
    print(fmt % ("op", "thr", *kinds, "tuned/default", "tuned/autosched",
                 "tuned/onednn", "tuned/openblas"))
    for t, doc, op in set_ops("iree"):
        mine = docs.get(("gemm", t))
        if not op.get("best"):
            continue
        shape, types, trans, flops = op_shape(op["name"])
        data = iree_data(shape)
        mod = lambda cfg: os.path.join(work, "cache", "iree", artifact(doc, op["name"], cfg), "bench.vmfb")
        default = "tile_0x0x0_vec_0x0x0_thr_%d" % t
        so = None
        for o in (mine or {}).get("ops", []):
            if o["name"] == op["name"] and o.get("best"):
                so = os.path.join(work, "cache", "mlir-cpu", artifact(mine, o["name"], o["best"]), "kernel.so")
        runs = {k: [] for k in kinds}
        for rnd in range(ROUNDS):
            order = kinds[rnd % len(kinds):] + kinds[:rnd % len(kinds)]
            for k in order:
                if k.startswith("iree"):
                    m = mod(op["best"] if k == "iree tuned" else default)
                    g = iree_run(m, data, flops, t) if data and os.path.exists(m) else 0
                else:
                    if k == "autosched" and not (so and os.path.exists(so)):
                        continue
                    a = (("--kernel", so, "--verify", "1") if k == "autosched" else
                         ("--ref", k, "--verify", "0"))
                    d = run(*a, "--shape", shape, "--trans", trans, "--types", types, threads=t)
                    g = flops / (d["median_ms"] * 1e6) if d and d.get("status") == "ok" and d.get("median_ms") else 0
                if g:
                    runs[k].append(g)
        g = {k: med(v) for k, v in runs.items()}
        print(fmt % (op["name"][:34], t, *[f(g[k]) for k in kinds],
                     *[r(g["iree tuned"], g[k]) for k in kinds[1:]]))
    print()
    print("iree tuned / default: the iree job's chosen config's module and IREE's own config's module (the")
    print("job's baseline), run again by iree-benchmark-module as the backend times them; autosched: the gemm")
    print("set's best mlir-cpu kernel at the same threads ('-' when that set did not run); GFLOP/s, medians")
    print("of %d rounds, the order rotated per round, pinned to the first thr CPUs." % ROUNDS)
    print()


def conv_geoms(s):
    """The set's convolutions by op name (`autosched analyze --json` of its
    program): {name: (function, kind, --conv value)}, the first conv of
    each distinct op; {} when its ops are no convs."""
    import subprocess
    cfg = open(os.path.join(work, "%s-1.cfg" % s)).read()
    prog = re.search(r"^input_file *= *(\S+)", cfg, re.M).group(1)
    p = subprocess.run([os.environ.get("AUTOSCHED", "autosched"), "analyze", "--json",
                        os.path.join(work, prog)], capture_output=True, text=True, timeout=600)
    out = {}
    for op in json.loads(p.stdout).get("ops", []) if p.returncode == 0 else []:
        c = op.get("conv")
        if not c or not op.get("tunable") or op["name"] in out or op.get("op") not in (
                "linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nchw_fchw"):
            continue
        lay = "nchw" if op["op"].endswith("nchw_fchw") else "nhwc"
        geom = "%s:%s" % (lay, ",".join(str(x) for x in [c["n"], c["h"], c["w"], c["c"], c["f"],
                                                         c["kh"], c["kw"]] + c["stride"] +
                                        c["dilation"] + c["padding"]))
        kind = "%dx%d" % (c["kh"], c["kw"]) + (" s%d" % c["stride"][0] if c["stride"][0] > 1 else "")
        out[op["name"]] = (op.get("function") or c["name"], kind, geom)
    return out


def conv_peers(s, geoms):
    """Each conv's best kernel (the job's artifact) run again, timed with
    the harness's im2col copy before each call and without it, beside
    oneDNN's convolution of the same geometry, all checked exactly,
    interleaved, at each thread count."""
    kinds = ["im2col+gemm", "gemm", "onednn conv"]
    print("== %s: best against oneDNN's convolution, %d rounds interleaved ==" % (s, ROUNDS))
    fmt = "%-26s %-6s %3s %11s %9s %11s %9s %9s  %s"
    print(fmt % ("conv", "kind", "thr", "im2col+gemm", "gemm", "onednn conv", "best/conv",
                 "gemm/conv", "GEMM (best's op)"))
    for t, doc, op in set_ops(s):
        if op["name"] not in geoms:
            continue
        fn, kind, geom = geoms[op["name"]]
        # A 1x1 stride-1 conv is its GEMM: no im2col to time.
        direct = kind == "1x1"
        shape, types, trans, flops = op_shape(op["name"])
        so = os.path.join(work, "cache", "mlir-cpu", artifact(doc, op["name"], op["best"]),
                          "kernel.so") if op.get("best") else ""
        runs = {k: [] for k in kinds}
        for rnd in range(ROUNDS):
            for k in kinds[rnd % 3:] + kinds[:rnd % 3]:
                if k != "onednn conv" and not os.path.exists(so) or k == "im2col+gemm" and direct:
                    continue
                a = (("--ref", "onednn", "--conv", geom) if k == "onednn conv" else
                     ("--kernel", so, "--conv", geom) if k == "im2col+gemm" else ("--kernel", so))
                d = run(*a, "--shape", shape, "--trans", trans, "--types", types,
                        "--verify", "1", threads=t)
                if d and d.get("status") == "ok" and d.get("verified") and d.get("median_ms"):
                    runs[k].append(flops / (d["median_ms"] * 1e6))
        g = {k: med(v) for k, v in runs.items()}
        if direct:
            g["im2col+gemm"] = g["gemm"]
        print(fmt % (fn[:26], kind, t, f(g["im2col+gemm"]) + ("=" if direct else ""), f(g["gemm"]),
                     f(g["onednn conv"]), r(g["im2col+gemm"], g["onednn conv"]),
                     r(g["gemm"], g["onednn conv"]), op["name"]))
    print()
    print("im2col+gemm: the chosen config's kernel (the job's artifact) run by autosched-measure --kernel")
    print("--conv (as a conv's tune trials are timed), each call preceded by the harness's im2col copy of the conv's input (C: one memcpy")
    print("of KW*C floats per output pixel and window row, NHWC, clipped at the padding; split over thr threads")
    print("of its own), checked as the conv through it; '=': a 1x1 stride-1 conv is")
    print("its GEMM, no copy; gemm: the same kernel alone, without the copy; onednn conv:")
    print("autosched-measure --ref onednn --conv, oneDNN's f32 direct convolution of the same geometry")
    print("(NHWC in and out, its weights reordered once beforehand into its own layout), checked against a")
    print("direct loop. GFLOP/s of the conv's 2*N*OH*OW*F*C*KH*KW, medians of %d rounds, the order" % ROUNDS)
    print("rotated per round, pinned to the first thr CPUs, 0.3 s a run; a run not verified is left out.")
    print("best/conv = im2col+gemm / onednn conv. Targets (issue 35): >= 1.0 on 1x1, >= 0.8 on 3x3.")
    print()


LLC = llc_bytes()


def limit(shape, types, flops, t):
    """The physical limit: (GFLOP/s, what binds, fits the LLC) from the
    FMA peak and the STREAM bandwidth: A and B read once, C read and written."""
    b, m, n, k = (int(x) for x in shape.split("x"))
    size = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i8": 1, "u8": 1, "i32": 4}
    lt, rt, at = (size.get(x, 4) for x in types.split(","))
    nbytes = b * (m * k * lt + k * n * rt + 2 * m * n * at)
    tc = flops / (peak[t] * 1e9) if peak[t] else 0
    tm = nbytes / (bw[t] * 1e9) if bw[t] else 0
    if not tc and not tm:
        return 0, "-", False
    return flops / max(tc, tm) / 1e9, "mem" if tm > tc else "fma", nbytes <= LLC
gemm_peers = False
for s in sets:
    if s == "iree":
        iree_peers()
        continue
    geoms = conv_geoms(s)
    if geoms:
        conv_peers(s, geoms)
        continue
    gemm_peers = True
    f32 = s in ("gemm", "models")
    peers = ["openblas", "onednn", "blis"] if f32 else ["auto", "openblas"]
    names = {"openblas": "openblas", "onednn": "onednn", "blis": "blis",
             "auto": "same-precision lib"}
    print("== %s: peers, measured with the best kernel, %d rounds interleaved ==" % (s, ROUNDS))
    cols = ["best"] + [names[p] for p in peers] + ["peak"] + ["best/" + names[p][:8] for p in peers] + ["% peak", "limit", "% limit"]
    fmt = "%-44s %3s " + " ".join(["%9s"] * (len(cols))) + "  %s"
    print(fmt % (("op", "thr") + tuple(cols) + ("library routine",)))
    for t, doc, op in set_ops(s):
        if not op.get("best"):
            continue
        shape, types, trans, flops = op_shape(op["name"])
        so = os.path.join(work, "cache", "mlir-cpu", artifact(doc, op["name"], op["best"]), "kernel.so")
        runs = {k: [] for k in ["best"] + peers}
        routine = ""
        for rnd in range(ROUNDS):
            order = list(runs)
            order = order[rnd % len(order):] + order[:rnd % len(order)]
            for k in order:
                if k == "best":
                    args = ("--kernel", so) if os.path.exists(so) else None
                elif k == "openblas" and not f32:
                    args = ("--ref", "openblas")
                else:
                    args = ("--ref", k)
                if args is None:
                    continue
                # The best kernel is checked again (exactly); the libraries are not.
                a = args + ("--shape", shape, "--trans", trans,
                            "--verify", "1" if k == "best" else "0")
                if k == "openblas" and not f32:
                    a += ("--types", "f32,f32,f32")      # sgemm: for scale
                else:
                    a += ("--types", types)
                d = run(*a, threads=t)
                if d and d.get("status") == "ok" and d.get("median_ms"):
                    runs[k].append(flops / (d["median_ms"] * 1e6))
                    if k == "auto":
                        routine = d.get("ref_routine", "") + (
                            "" if d.get("ref_same_precision") else
                            " (* not the op's precision)")
        g = {k: med(v) for k, v in runs.items()}
        vals = [f(g["best"])] + [f(g[p]) for p in peers] + [f(peak[t])]
        vals += [r(g["best"], g[p]) for p in peers]
        vals += ["%.0f%%" % (100 * g["best"] / peak[t]) if g["best"] and peak[t] else "-"]
        lim, binds, fits = limit(shape, types, flops, t)
        vals += [f(lim) + " " + binds, ("%.0f%%" % (100 * g["best"] / lim) if g["best"] and lim else "-") + ("+" if fits and binds == "mem" else "")]
        print(fmt % ((op["name"], t) + tuple(vals) + (routine,)))
    print()
if gemm_peers:
    print("best: the chosen config's kernel (the job's artifact) run again here; peers: autosched-measure")
    print("--ref ...; each the median of %d rounds, the order rotated per round, pinned, 0.3 s a run." % ROUNDS)
    print("peak: --peak, register-only FMAs (f32) in the widest vectors, one pinned thread per CPU.")
    print("limit: the roofline of the op at t threads, min(peak, bandwidth x flops/bytes), bytes = A + B read")
    print("once + C read and written, bandwidth = --bandwidth (STREAM triad, %s GB/s at 1/2 threads); 'mem' when" %
          "/".join("%.1f" % bw[t] for t in counts))
    print("memory binds, 'fma' when the FMAs do. '+': the operands fit the last-level cache (%d MiB), so a" % (LLC >> 20))
    print("repeated run reads them from it and may pass the DRAM limit.")
    print("mixed: 'same-precision lib' is the library routine of the op's own types (oneDNN int8/bf16/f16")
    print("where it has one); openblas is sgemm on f32 data of the same shape, for scale; '% peak' is")
    print("against the f32 FMA peak (int8 counts 2 ops per multiply-add, as f32 does).")
if os.environ.get("AUTOSCHED_ISA"):
    print("ISA=%s: the kernels built for it ([Env] isa), the peers on their code for it (OPENBLAS_CORETYPE=%s," %
          (os.environ["AUTOSCHED_ISA"], os.environ.get("OPENBLAS_CORETYPE", "-")))
    print("ONEDNN_MAX_CPU_ISA=%s, BLIS_ARCH_TYPE=%s), the peak in its vectors: the ISA emulated on this CPU, not" %
          (os.environ.get("ONEDNN_MAX_CPU_ISA", "-"), os.environ.get("BLIS_ARCH_TYPE", "-")))
    print("the microarchitecture of a CPU that has only it (caches, FMA ports and latencies are this CPU's).")
