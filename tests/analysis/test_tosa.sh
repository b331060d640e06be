#!/usr/bin/env bash
# `autosched analyze` on TOSA: the real DeepSeek-R1 block (7 linalg.matmul +
# 2 tosa.matmul) lists 9 tunable matmuls, the two tosa.matmul as
# batch_matmuls at their own lines of the file, named as in the file lowered
# by mlir-opt; stderr and --json say it was lowered and by which passes,
# and that the 7 weight transposes were folded into their linalg.matmuls
# (read stored N x K); a linalg program is not lowered; a pass that fails is
# exit 2 naming file and line.
#   test_tosa.sh AUTOSCHED FIXTURES
. "$(dirname "$0")/../checks.sh"
args AS FIX
scratch tosa
B=$FIX/deepseek_r1_qwen1p5b_block_prefill40_f32_tosa
PIPE='builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),remove-dead-values)'

"$AS" analyze "$B.mlir" > "$T/out" 2> "$T/err"
check "analyze of the TOSA block exits 0" eq "$?" 0
check "9 ops, all tunable (6 distinct)" grep -qx '9 ops, 6 distinct; 9 tunable (tuned once per distinct op; --json lists every location)' "$T/out"
check "op 3: the first tosa.matmul, at its line" grep -qxE "3 +batch_matmul +batch_matmul_12x40x40x128_f32t_f32t_f32t +1 +yes +subgraph0 +$B.mlir:137:11" "$T/out"
check "op 4: the second tosa.matmul, at its line" grep -qxE "4 +batch_matmul +batch_matmul_12x40x128x40_f32t_f32t_f32t +1 +yes +subgraph0 +$B.mlir:187:11" "$T/out"
check "those lines are the tosa.matmul" eq "$(sed -n '137p;187p' "$B.mlir" | grep -c 'tosa.matmul')" 2
check "stderr: lowered, and by which passes" grep -qF "$B.mlir: lowered TOSA to linalg before analysis, as mlir-opt --pass-pipeline='$PIPE' does" "$T/err"
check "stderr: nothing left unlowered" eval "! grep -q warning '$T/err'"
"$AS" analyze "$B.lowered.mlir" > "$T/low" 2> "$T/low_err"
check "the same ops, names and counts as the lowered file" eq "$(awk '{print $1, $2, $3, $4, $5}' "$T/out")" "$(awk '{print $1, $2, $3, $4, $5}' "$T/low")"
check "the lowered file: no lowering said, its 7 weight transposes folded" eq "$(cat "$T/low_err")" "autosched: $B.lowered.mlir: 7 transposes folded into the matmuls that read them (swapping the last two dims): those operands are read stored transposed, not copied"
check "the TOSA file: the same 7 folded" grep -q ': 7 transposes folded into the matmuls' "$T/err"

"$AS" analyze --json "$B.mlir" > "$T/json" 2> /dev/null
check "--json exits 0" eq "$?" 0
check "--json: lowered from TOSA with the passes; 9 tunable ops, each in the TOSA file, the batch_matmuls at the tosa.matmul lines" python3 - "$T/json" "$PIPE" "$B.mlir" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
low = d["lowered"]
assert low == {"from": "TOSA", "pipeline": sys.argv[2], "remaining": 0}, low
assert d["folded"] == 7, d["folded"]
assert all("_f32t_f32n_" in o["name"] for o in d["ops"] if o["op"] == "linalg.matmul")
ops = [o for o in d["ops"] if o["tunable"]]
assert len(ops) == 9 and len(d["ops"]) == 9, len(ops)
assert all(o["loc"].startswith(sys.argv[3] + ":") for o in ops), [o["loc"] for o in ops]
assert [o["loc"].rsplit(":", 2)[1] for o in ops if o["op"] == "linalg.batch_matmul"] == ["137", "187"]
assert len(d["distinct"]) == 6 and sum(x["count"] for x in d["distinct"]) == 9
P
"$AS" analyze --json "$FIX/seed.mlir" > "$T/seed.json" 2> "$T/seed_err"
check "--json of a linalg program: lowered is null" python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["lowered"] is None' "$T/seed.json"
check "a linalg program: nothing on stderr" eq "$(cat "$T/seed_err")" ""

"$AS" analyze "$FIX/tosa_nested.mlir" > /dev/null 2> "$T/nested_err"
check "TOSA the passes do not reach: a warning counts it" grep -qF "tosa_nested.mlir: 2 TOSA ops left after lowering" "$T/nested_err"

"$AS" analyze "$FIX/tosa_unlowered.mlir" > "$T/bad" 2> "$T/bad_err"
check "a pass that fails: exit 2" eq "$?" 2
check "a pass that fails: nothing listed" eq "$(cat "$T/bad")" ""
check "a pass that fails: MLIR's diagnostic at the op" grep -qF "$FIX/tosa_unlowered.mlir:4:8: failed to legalize operation 'tosa.custom' (lowering TOSA to linalg before analysis" "$T/bad_err"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
