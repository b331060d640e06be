#!/usr/bin/env bash
# GPU results back to the user (issue 33, item 4), without a GPU: a run with
# gpu_arch = sm_80 through the stand-in harness (fixtures/fake_gpu_measure.sh:
# the protocol, its clocks and peak; no peak for an op with M = 256) and
# then every way a user reads it: the summary, --json, the output_file CSV,
# `best` as JSON and CSV, the HTML report (in headless Chromium): best
# against IREE's default with its interval, against cuBLAS, the share of the
# measured peak, the GPU and its clocks; a figure not measured is "–" (null
# in JSON, empty in CSV) with the reason, never made up. annotate's program
# compiled for sm_80 has the launch the best config says (threads a block,
# workgroups, shared memory); export --format iree-spec of CUDA rows says
# IREE 3.13 ignores specs for CUDA and to use annotate, exit 1, nothing
# written. Exit 77 when IREE's tools or ptxas are missing.
#   test_gpu_report.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
scratch gpurep
PTXAS=${AUTOSCHED_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
IC=$(command -v iree-compile || echo "${AUTOSCHED_IREE_VENV:-$HOME/.cache/autosched/iree-3.13.0}/bin/iree-compile")
if [ ! -x "$PTXAS" ] || [ ! -x "$IC" ]; then
	echo "skipped: no ptxas (the CUDA toolkit) or no IREE tools (scripts/iree-deps.sh)"
	exit 77
fi
export AUTOSCHED_GPU_MEASURE=$SRC/tests/backends/fixtures/fake_gpu_measure.sh
private_work

cat > "$T/mm.mlir" << 'M'
func.func @mm(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>, %c: tensor<512x512xf32>, %d: tensor<256x512xf16>, %e: tensor<256x512xf32>) -> (tensor<512x512xf32>, tensor<256x512xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf16>, tensor<512x512xf16>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  %s = linalg.matmul ins(%d, %b : tensor<256x512xf16>, tensor<512x512xf16>) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r, %s : tensor<512x512xf32>, tensor<256x512xf32>
}
M
printf '[Env]\ninput_file = mm.mlir\nbackend = iree\ngpu_arch = sm_80\noutput_file = trials.csv\n[SearchSpace]\ntile_m = [64]\ntile_n = [64,128]\ntile_k = [32]\nvector_m = [32]\nvector_n = [64]\npack_b = [1]\n[SearchStrategy]\ntuner = GridTuner\nn_trial = 2\n' > "$T/g.cfg"
deadline 600 "$AS" run "$T/g.cfg" --db "$T/s.db" > "$T/out.txt" 2> "$T/err.txt"
check "run with gpu_arch = sm_80: exit 0" eq "$?" 0
S=$(sed -n '/^\*\*\*/,$p' "$T/out.txt")
big=$(echo "$S" | sed -n '/^\[matmul_512x512x512/,/trials      :/p')
small=$(echo "$S" | sed -n '/^\[matmul_256x512x512/,/trials      :/p')
check "summary: vs IREE's default with its interval" grep -Eq "vs default  : [0-9.]+x \[[0-9.]+, [0-9.]+\] 95% CI \(the default: " <<< "$big"
check "summary: vs cuBLAS" grep -Eq "vs library  : [0-9.]+x \(cublas:GemmEx: [0-9.]+ GFLOP/s" <<< "$big"
check "summary: the share of the measured peak" grep -Eq "of peak     : [0-9.]+% \(peak:mma.sync.m16n8k16: 312000.00 GFLOP/s" <<< "$big"
check "summary: the GPU and its clocks" grep -q "GPU         : fake GPU (SM 1410 MHz, memory 1215 MHz, 40 °C in the final rounds)" <<< "$big"
check "summary: no peak measured is – and why" grep -q "of peak     : – (the harness measured no peak for this op's types)" <<< "$small"
nomatch() { ! grep -Eq "$1" <<< "$2"; }
check "summary: no figure for a peak not measured" nomatch "of peak     : [0-9]" "$small"
check "the store: every trial's GPU and clocks" eq "$(sqlite3 "$T/s.db" "select count(*) from trials where gpu is null or sm_mhz <> 1410 or mem_mhz <> 1215 or temp_c <> 40 or power_w <> 250")" 0
check "the store: the peak in reference rows only, none for M = 256" eq "$(sqlite3 "$T/s.db" "select group_concat(distinct o.m || ':' || t.phase || ':' || coalesce(t.peak_gflops, 'null')) from trials t join ops o on o.id = t.op_id where t.phase = 'reference' or t.peak_gflops is not null order by 1")" "512:reference:312000.0,256:reference:null"

# The output_file CSV: each trial with the GPU's fields.
check "CSV: the GPU's columns" grep -q ",error,gpu,sm_mhz,mem_mhz,temp_c,power_w$" "$T/trials.csv"
check "CSV: a final trial with its GPU and clocks" grep -Eq ",final,ok,.*,fake GPU,1410,1215,40,250$" "$T/trials.csv"
check "CSV: the core class of an f16 op on the GPU is tensorop" grep -q "^autosched iree-cuda,matmul,matmul_512x512x512_f16t_f16t_f32t,.*,tensorop,iree-cuda,SUCCESS," "$T/trials.csv"

# --json (a second run: resumed, final rounds measured again).
deadline 600 "$AS" run "$T/g.cfg" --db "$T/s.db" --json > "$T/run.json" 2> "$T/err2.txt"
check "run --json: exit 0" eq "$?" 0
check "run --json: GPU, peak, cuBLAS; null where not measured" python3 - "$T/run.json" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ops = {o['name'][:18]: o for o in d['ops']}
b, s = ops['matmul_512x512x512'], ops['matmul_256x512x512']
ok = True
def want(c, m):
    global ok
    if not c: print('  ' + m, file=sys.stderr); ok = False
for o in (b, s):
    want(o['gpu'] == {'name': 'fake GPU', 'sm_mhz_min': 1410, 'sm_mhz_max': 1410,
        'mem_mhz': 1215, 'temp_c_min': 40, 'temp_c_max': 40}, f"gpu {o['gpu']}")
    want(o['reference'] == 'cublas:GemmEx' and o['reference_gflops'] > 0, 'reference')
    want(o['speedup_ci'] and o['speedup_ci']['lo'] <= o['speedup_ci']['est'] <= o['speedup_ci']['hi'], 'speedup_ci')
want(b['peak'] == 'peak:mma.sync.m16n8k16' and b['peak_gflops'] == 312000, f"peak {b['peak']} {b['peak_gflops']}")
want(abs(b['of_peak'] - b['gflops'] / 312000) < 1e-12, 'of_peak')
want(s['peak'] is None and s['peak_gflops'] is None and s['of_peak'] is None, 'peak not measured is null')
sys.exit(0 if ok else 1)
PY

# best: JSON and CSV.
"$AS" best --db "$T/s.db" --format json > "$T/best.json"
check "best --format json: exit 0" eq "$?" 0
check "best json: GPU, clocks, peak, cuBLAS, the interval" python3 - "$T/best.json" << 'PY'
import json, sys
rows = {r['op'][:18]: r for r in json.load(open(sys.argv[1]))}
b, s = rows['matmul_512x512x512'], rows['matmul_256x512x512']
ok = True
def want(c, m):
    global ok
    if not c: print('  ' + m, file=sys.stderr); ok = False
for r in (b, s):
    want(r['gpu'] == {'name': 'fake GPU', 'sm_mhz': 1410, 'mem_mhz': 1215, 'temp_c': 40}, f"gpu {r['gpu']}")
    want(r['reference'] == 'cublas:GemmEx' and abs(r['vs_reference'] - r['gflops'] / r['reference_gflops']) < 1e-9, 'reference')
    ci = r['vs_default_ci']
    want(ci and ci['lo'] <= ci['est'] <= ci['hi'] and ci['rounds'] == 5 and ci['choice'], f'ci {ci}')
want(b['peak_gflops'] == 312000 and abs(b['of_peak'] - b['gflops'] / 312000) < 1e-12, 'peak')
want(s['peak_gflops'] is None and s['of_peak'] is None and s['peak'] is None, 'no peak: null')
sys.exit(0 if ok else 1)
PY
"$AS" best --db "$T/s.db" --format csv > "$T/best.csv"
check "best csv: GPU columns, empty where not measured" python3 - "$T/best.csv" << 'PY'
import csv, sys
rows = {r['op'][:18]: r for r in csv.DictReader(open(sys.argv[1]))}
b, s = rows['matmul_512x512x512'], rows['matmul_256x512x512']
ok = all(r['gpu'] == 'fake GPU' and r['sm_mhz'] == '1410' and r['mem_mhz'] == '1215'
    and r['temp_c'] == '40' and r['reference'] == 'cublas:GemmEx'
    and float(r['vs_default_lo']) <= float(r['vs_default_hi']) for r in (b, s))
ok = ok and b['peak_gflops'] == '312000.000' and float(b['of_peak']) > 0
ok = ok and s['peak_gflops'] == '' and s['of_peak'] == ''
if not ok: print('  ', b, s, file=sys.stderr)
sys.exit(0 if ok else 1)
PY

# The HTML report: the cells, and the page in a real browser.
"$AS" report --db "$T/s.db" -o "$T/r.html" > /dev/null
check "report: exit 0" eq "$?" 0
check "report: summary cells for GPU rows" python3 - "$T/r.html" << 'PY'
import re, sys
h = open(sys.argv[1], encoding='utf-8').read()
t = h[h.index('id="best"'):]
t = t[:t.index('</table>')]
heads = re.findall(r'<th>(.*?)</th>', t)
rows = re.findall(r'<tr><td><a href="#op-\d+">(.*?)</a></td>(.*?)</tr>', t)
ok = len(rows) == 2
for name, cells in rows:
    n = len(re.findall(r'<td', cells)) + 1
    if n != len(heads): print(f'  {name}: {n} cells, {len(heads)} headers', file=sys.stderr); ok = False
    if 'fake GPU<br>SM 1410 MHz, memory 1215 MHz, 40 °C' not in cells: print(f'  {name}: no GPU cell', file=sys.stderr); ok = False
    if not re.search(r'[0-9.]+x<br><span class="note">cublas:GemmEx', cells): print(f'  {name}: no cuBLAS ratio', file=sys.stderr); ok = False
    if not re.search(r'<span class="note ci">[0-9.]+x \[[0-9.]+, [0-9.]+\] over 5 rounds', cells): print(f'  {name}: no interval', file=sys.stderr); ok = False
    big = name.startswith('matmul_512x512x512')
    if big and not re.search(r'[0-9.]+%<br><span class="note">of peak:mma.sync.m16n8k16 312000.0 GFLOP/s', cells): print(f'  {name}: no peak share', file=sys.stderr); ok = False
    if not big and 'title="the harness measured no peak for these types">–' not in cells: print(f'  {name}: no – with its reason', file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
check "report: the job's target says the GPU it was measured on" grep -q "; autosched iree-cuda v1; measured on fake GPU</td>" "$T/r.html"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
	deadline 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
	    --disable-background-networking --disable-component-update --disable-sync \
	    --enable-logging=stderr --v=0 --user-data-dir="$T/ud" \
	    --dump-dom "file://$T/r.html" > "$T/dom.html" 2> "$T/chrome.err"
	check "report: the page's script ran in Chromium" grep -q 'data-js-ok="1"' "$T/dom.html"
	check "report: no script error" grep -q 'data-js-errors="0"' "$T/dom.html"
	check "report: Chromium drew the GPU cell" grep -q 'fake GPU<br>SM 1410 MHz' "$T/dom.html"
else
	echo "note: no chromium here; the page was checked as text only"
fi

# annotate: the program IREE compiles for sm_80 has the best config's launch
# (its shared memory padded or not, as pad_smem says).
"$AS" annotate "$T/mm.mlir" --db "$T/s.db" -o "$T/ann.mlir" 2> "$T/ann.txt"
check "annotate: exit 0" eq "$?" 0
check "annotate: TileAndFuse compilation_info on both ops" eq "$(grep -c 'iree_gpu.pipeline<TileAndFuse>' "$T/ann.mlir")" 2
deadline 300 "$IC" "$T/ann.mlir" --iree-hal-target-backends=cuda --iree-cuda-target=sm_80 \
    --compile-to=executable-targets -o "$T/ann.targets.mlir" 2> "$T/ic.err"
check "annotate: the program compiles for sm_80" eq "$?" 0
check "annotate: launch = the best config's (threads, workgroups, shared memory)" python3 - "$T/best.json" "$T/ann.targets.mlir" << 'PY'
import json, re, sys
best = {r['signature']: r['knobs'] for r in json.load(open(sys.argv[1]))}
t = open(sys.argv[2]).read()
ok = True
seen = 0
for m in re.finditer(r'hal\.executable\.export public @\w*matmul_(\d+)x(\d+)x(\d+)_f16xf16xf32.*?'
                     r'hal\.return (%\w+), (%\w+), (%\w+).*?workgroup_size = \[(\d+) : index, (\d+) : index, (\d+) : index\].*?workgroup_local_memory = (\d+)', t, re.S):
    M, N, K = map(int, m.group(1, 2, 3))
    k = best[f'matmul_{M}x{N}x{K}_f16t_f16t_f32t']
    body = m.group(0)
    consts = dict(re.findall(r'(%\w+) = arith\.constant (\d+) : index', body))
    grid = [int(consts[v]) for v in m.group(4, 5, 6)]
    threads = int(m.group(7)) * int(m.group(8)) * int(m.group(9))
    want_t = 32 * (k['tile_m'] // k['vector_m']) * (k['tile_n'] // k['vector_n'])
    want_g = (M // k['tile_m']) * (N // k['tile_n'])
    pad = 4 if k.get('pad_smem', 0) else 0  # best's knobs leave out the 0s
    want_s = 2 * (k['tile_m'] * (k['tile_k'] + pad) + k['tile_k'] * (k['tile_n'] + pad))
    got_g = grid[0] * grid[1] * grid[2]
    if (threads, got_g, int(m.group(10))) != (want_t, want_g, want_s):
        print(f'  {M}x{N}x{K}: threads {threads} grid {got_g} smem {m.group(10)}; want {want_t} {want_g} {want_s}', file=sys.stderr); ok = False
    seen += 1
sys.exit(0 if ok and seen == 2 else 1)
PY

# export --format iree-spec: IREE 3.13 reads no spec for CUDA.
"$AS" export --db "$T/s.db" --format iree-spec -o "$T/spec.mlir" 2> "$T/export.txt"
check "export iree-spec of CUDA rows: exit 1" eq "$?" 1
check "export iree-spec: nothing written" test ! -e "$T/spec.mlir"
check "export iree-spec: IREE ignores specs for CUDA" grep -q "IREE 3.13 never reads a tuning spec for CUDA (--iree-codegen-tuning-spec-path is silently ignored" "$T/export.txt"
check "export iree-spec: use annotate instead" grep -q "no op to put in the spec: 2 of 2 measured on a target no IREE tuning spec applies to.*use \`autosched annotate PROGRAM.mlir\`" "$T/export.txt"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
