#!/usr/bin/env bash
# `autosched generate` (names, layout and shapes read back by `autosched
# analyze --json`; bad input refused with exit 2 and nothing written) and
# [Problem] sweeps run end to end on tiny shapes, one op each, plus submit.
#   test_generate.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
scratch generate
private_work

# Every program under DIR read back: its name is its folder's, its shape and
# types are those asked. analyze_all DIR KIND BATCHES MS NS KS DTYPES TA TB
analyze_all() {
	python3 - "$AS" "$@" <<'PY'
import json, os, subprocess, sys, itertools
AS, d, kind, bs, ms, ns, ks, dts, ta, tb = sys.argv[1:11]
L = lambda s: [int(x) for x in s.split(',')]
types = {'f32': ('f32', 'f32'), 'f16': ('f16', 'f16'), 'f16f32': ('f16', 'f32'),
         'bf16f32': ('bf16', 'f32'), 'i8i32': ('i8', 'i32'), 'u8i32': ('u8', 'i32')}
want = {}
for b, m, n, k, dt in itertools.product(L(bs), L(ms), L(ns), L(ks), dts.split(',')):
    i, a = types[dt]
    dims = f'{b}x{m}x{n}x{k}' if kind == 'batch_matmul' else f'{m}x{n}x{k}'
    name = f"{kind}_{dims}_{i}{'n' if ta == '1' else 't'}_{i}{'n' if tb == '1' else 't'}_{a}t"
    want[name] = (b, m, n, k, i, a)
root = os.path.join(d, 'linalg', kind)
got = sorted(os.listdir(root))
ok = got == sorted(want)
if not ok: print(f'  folders {got}\n  want    {sorted(want)}', file=sys.stderr)
for name in got:
    f = os.path.join(root, name, name + '.mlir')
    js = json.loads(subprocess.run([AS, 'analyze', f, '--json'], capture_output=True, text=True, check=True).stdout)
    if len(js['ops']) != 1: print(f'  {f}: {len(js["ops"])} ops', file=sys.stderr); ok = False; continue
    o = js['ops'][0]
    b, m, n, k, i, a = want.get(name, (0,) * 6)
    # The analysis spells an unsigned i8 'i8' (the extui is in the body).
    ai = 'i8' if i == 'u8' else i
    exp = dict(kind=kind, batch=b, m=m, n=n, k=k, lhs=ai, rhs=ai, acc=a, tunable=True,
               transpose_a=ta == '1', transpose_b=tb == '1', function=name)
    bad = {x: (o[x], v) for x, v in exp.items() if o[x] != v}
    if i != 'u8' and o['name'] != name: bad['name'] = (o['name'], name)
    if i == 'u8' and 'arith.extui' not in open(f).read(): bad['extui'] = 'missing'
    if bad: print(f'  {name}: {bad}', file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
}

# 1. The seed's sweep: M over a range, two dtypes.
"$AS" generate --problem-m=64:1024:128 --problem-n=512 --problem-k=1024 \
    --dtype f32,f16 -o "$T/g1" > "$T/g1.out"
check "seed sweep: exit 0" eq "$?" 0
check "seed sweep: 16 programs" eq "$(find "$T/g1/linalg" -name '*.mlir' | wc -l)" 16
check "seed sweep: the profiler's name and layout" \
    test -f "$T/g1/linalg/matmul/matmul_576x512x1024_f16t_f16t_f16t/matmul_576x512x1024_f16t_f16t_f16t.mlir"
check "seed sweep: names and shapes read back" analyze_all "$T/g1" matmul 1 \
    64,192,320,448,576,704,832,960 512 1024 f32,f16 0 0
check "seed sweep: a cfg for the sweep" grep -q '^problem_m = 64:1024:128' "$T/g1/sweep.cfg"
check "seed sweep: the cfg is valid" bash -c "'$AS' space '$T/g1/sweep.cfg' --count > /dev/null"

# The same sweep again replaces its own files; a foreign sweep.cfg or a link
# among the programs is refused (exit 2), nothing followed (issue 19).
"$AS" generate --problem-m=64:1024:128 --problem-n=512 --problem-k=1024 \
    --dtype f32,f16 -o "$T/g1" > /dev/null
check "the same sweep again: exit 0" eq "$?" 0
cp "$T/g1/sweep.cfg" "$T/sweep.keep"
echo "my cfg" > "$T/g1/sweep.cfg"
"$AS" generate --problem-m=64 --problem-n=512 --problem-k=1024 -o "$T/g1" > /dev/null 2> "$T/g1.err"
check "a foreign sweep.cfg: exit 2" eq "$?" 2
check "a foreign sweep.cfg: untouched" eq "$(cat "$T/g1/sweep.cfg")" "my cfg"
cp "$T/sweep.keep" "$T/g1/sweep.cfg"
echo secret > "$T/victim"
p1=$T/g1/linalg/matmul/matmul_64x512x1024_f32t_f32t_f32t/matmul_64x512x1024_f32t_f32t_f32t.mlir
rm "$p1"; ln -s "$T/victim" "$p1"
"$AS" generate --problem-m=64 --problem-n=512 --problem-k=1024 -o "$T/g1" > /dev/null 2> "$T/g1.err"
check "a link among the programs: refused" eq "$?" 2
check "a link among the programs: its target unchanged" eq "$(cat "$T/victim")" secret
rm "$p1"
# A foreign file as the second program: refused before the first is written.
p0=$T/g1/linalg/matmul/matmul_64x512x1024_f32t_f32t_f32t/matmul_64x512x1024_f32t_f32t_f32t.mlir
p1=$T/g1/linalg/matmul/matmul_192x512x1024_f32t_f32t_f32t/matmul_192x512x1024_f32t_f32t_f32t.mlir
rm -f "$p0"
echo mine > "$p1"
"$AS" generate --problem-m=64,192 --problem-n=512 --problem-k=1024 -o "$T/g1" > /dev/null 2> "$T/g1.err"
check "a foreign second program: exit 2" eq "$?" 2
check "a foreign second program: named" grep -q "$p1: exists and is not a file autosched wrote" "$T/g1.err"
check "a foreign second program: untouched" eq "$(cat "$p1")" mine
check "a foreign second program: the first not written" test ! -e "$p0"
rm "$p1"

# 2. Every dtype, lists, transposed rhs; batch_matmul with transposed lhs.
"$AS" generate --problem-m 32,48 --problem-n 64 --problem-k 16 \
    --dtype f32,f16,f16f32,bf16f32,i8i32,u8i32 --transpose b -o "$T/g2" > /dev/null
check "all dtypes: exit 0" eq "$?" 0
check "all dtypes: read back" analyze_all "$T/g2" matmul 1 32,48 64 16 \
    f32,f16,f16f32,bf16f32,i8i32,u8i32 0 1
check "u8 spelt u8 in the name" test -d "$T/g2/linalg/matmul/matmul_32x64x16_u8t_u8n_i32t"
"$AS" generate --batch 2:6:2 --problem-m 16 --problem-n 32 --problem-k 8 \
    --transpose a -o "$T/g3" > /dev/null
check "batch_matmul: exit 0" eq "$?" 0
check "batch_matmul: read back" analyze_all "$T/g3" batch_matmul 2,4 16 32 8 f32 1 0

# 3. Bad input: exit 2, one message, nothing written.
bad() {	# bad DESCRIPTION EXPECTED-MESSAGE ARGS...
	local what=$1 msg=$2 out
	shift 2
	out=$("$AS" generate "$@" -o "$T/bad" 2>&1)
	local rc=$?
	check "$what: exit 2" eq "$rc" 2
	check "$what: says '$msg'" bash -c "grep -q -- \"\$1\" <<< \"\$2\"" _ "$msg" "$out"
	check "$what: nothing written" test ! -e "$T/bad"
}
bad "zero step" "step 0 is not positive" --problem-m 64:1024:0 --problem-n 8 --problem-k 8
bad "empty range" "is empty" --problem-m 1024:64:128 --problem-n 8 --problem-k 8
bad "unknown dtype" "unknown 'f8'" --problem-m 64 --problem-n 8 --problem-k 8 --dtype f32,f8
bad "unknown transpose" "--transpose c: unknown 'c'" --problem-m 64 --problem-n 8 --problem-k 8 --transpose c
bad "missing K" "problem_k" --problem-m 64 --problem-n 8
bad "too many ops" "more than 4096" --problem-m 1:4001:1 --problem-n 1:4:1 --problem-k 8
bad "not a number" "not an integer" --problem-m 6x4 --problem-n 8 --problem-k 8
"$AS" generate --problem-m 64 --problem-n 8 --problem-k 8 > /dev/null 2>&1
check "no -o: exit 2" eq "$?" 2

# 4. A [Problem] job end to end: 2 M x 2 K x 2 dtypes = 8 ops, each tuned.
mkdir -p "$T/p"
cat > "$T/p/p.cfg" <<'C'
[Env]
report_file = p.html
[Problem]
problem_m = 16:48:16
problem_n = 16
problem_k = [16, 32]
dtype = f32,i8i32
[SearchSpace]
tile_m = [16]
tile_n = [16]
tile_k = [8,16]
[SearchStrategy]
tuner = random
n_trial = 2
[Measure]
min_time = 0.01
min_reps = 3
confirm_top = 1
C
"$AS" run "$T/p/p.cfg" --db "$T/p/s.db" --quiet > "$T/p/out.txt" 2>&1
check "[Problem] run: exit 0" eq "$?" 0
check "[Problem] run: 8 ops recorded" eq "$(sqlite3 "$T/p/s.db" "select count(*) from ops")" 8
check "[Problem] run: each op tuned on its own" eq "$(sqlite3 "$T/p/s.db" \
    "select count(*) from (select op_id from trials where phase='tune' group by op_id having count(*) = 2)")" 8
check "[Problem] run: the generated names" eq "$(sqlite3 "$T/p/s.db" \
    "select count(*) from ops where name in ('matmul_32x16x32_i8t_i8t_i32t','matmul_16x16x16_f32t_f32t_f32t')")" 2
check "[Problem] run: one job, its program snapshotted" eq "$(sqlite3 "$T/p/s.db" \
    "select count(*) from jobs where mlir_text like '%the [Problem] sweep of%'")" 1
check "[Problem] run: best answers for each op" eq "$("$AS" best --db "$T/p/s.db" --format csv | tail -n +2 | wc -l)" 8
check "[Problem] run: the report" test -s "$T/p/p.html"
# A shape no [SearchSpace] config fits is skipped, not fatal: M = 4 is below
# every register tile listed.
sed -e 's/^problem_m = .*/problem_m = [16, 4]/' -e 's/^dtype = .*/dtype = f32/' \
    -e 's/^report_file.*//' -e 's/^tile_m = .*/&\nvector_m = [8]/' \
    "$T/p/p.cfg" > "$T/p/q.cfg"
"$AS" run "$T/p/q.cfg" --db "$T/p/q.db" --quiet > "$T/p/q.txt" 2>&1
check "[Problem] with an odd shape: exit 0" eq "$?" 0
check "[Problem] with an odd shape: it is skipped, with why" grep -q 'no config of \[SearchSpace\] fits' "$T/p/q.txt"
check "[Problem] with an odd shape: the others tuned" eq "$(sqlite3 "$T/p/q.db" "select count(distinct op_id) from trials where phase='tune'")" 2
# submit snapshots the generated program.
"$AS" submit "$T/p/p.cfg" --db "$T/p/queue.db" > /dev/null 2>&1
check "[Problem] submit: exit 0" eq "$?" 0
check "[Problem] submit: one queued job of 8 ops" eq "$(sqlite3 "$T/p/queue.db" \
    "select state || ' ' || n_trial from jobs")" "queued 16"

# 5. Bad [Problem] cfgs: exit 2, file:line: [Problem] key, nothing written.
badcfg() {	# badcfg NAME EXPECTED-MESSAGE  (cfg body on stdin)
	local d=$T/bad_$1
	mkdir -p "$d"
	cat > "$d/a.cfg"
	out=$("$AS" run "$d/a.cfg" --db "$d/s.db" 2>&1)
	local rc=$?
	check "bad [Problem] $1: exit 2" eq "$rc" 2
	check "bad [Problem] $1: says '$2'" bash -c "grep -q -- \"\$1\" <<< \"\$2\"" _ "$2" "$out"
	check "bad [Problem] $1: nothing written" test ! -e "$d/s.db"
}
printf '[Problem]\nproblem_m = 64:1024:0\nproblem_n = 8\nproblem_k = 8\n' |
    badcfg zero_step 'a.cfg:2: \[Problem\] problem_m: step 0 is not positive'
printf '[Problem]\nproblem_m = 64\nproblem_n = 8\nproblem_k = 8\ndtype = f64\n' |
    badcfg dtype "a.cfg:5: \[Problem\] dtype: unknown 'f64'"
printf '[Problem]\nproblem_m = 1:4001:1\nproblem_n = 1:4:1\nproblem_k = 8\n' |
    badcfg bound 'more than 4096'
printf '[Problem]\nproblem_m = 64\nproblem_n = 8\nkind = matmul\nbatch = 2\nproblem_k = 8\n' |
    badcfg batch 'batch is only for kind batch_matmul'
printf '[Env]\ninput_file = x.mlir\n[Problem]\nproblem_m = 64\nproblem_n = 8\nproblem_k = 8\n' |
    badcfg both 'a.cfg:2: \[Env\] input_file: given with a \[Problem\] section'
printf '[Problem]\nproblem_q = 8\n' | badcfg key 'unknown key'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
