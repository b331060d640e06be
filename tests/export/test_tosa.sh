#!/usr/bin/env bash
# TOSA programs through tuning and back into the compiler: `run` tunes the
# ops of a TOSA program (lowered before analysis), `build` compiles it with
# the tuned schedules into a library whose functions equal OpenBLAS, a store
# tuned on the lowered program answers for the TOSA one, the transform
# library applies to the program as autosched reads it (lowered by the same
# upstream passes, the transpose folded: `analyze --emit-program`),
# `annotate` writes the lowered program annotated; and
# the real DeepSeek-R1 block (TOSA + linalg) builds, untuned and tuned, into
# a loadable library.
#   test_tosa.sh AUTOSCHED SOURCE_DIR MLIR_OPT CALL_PROGRAM
. "$(dirname "$0")/../checks.sh"
args AS SRC OPT CALL
scratch export-tosa
PIPE='builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),remove-dead-values)'
P=$T/tosa.mlir
cp "$SRC/tests/export/fixtures/tosa.mlir" "$P"

# cfg FILE INPUT: a tiny tuning job of INPUT (a few seconds).
cfg() {
	grid_cfg "$2" 2 5 > "$1" <<C
$(space tile_m=16,32 tile_n=16 tile_k=16 vector_m=4 vector_n=16)
C
}

# 1. run on the TOSA program: both ops tuned, the job's log says lowered.
cfg "$T/a.cfg" tosa.mlir
"$AS" run "$T/a.cfg" --db "$T/s.db" --quiet > "$T/run.txt" 2>&1
check "run of the TOSA program exits 0" eq "$?" 0
"$AS" best --db "$T/s.db" --format csv > "$T/best.csv"
check "best: the tosa.matmul's batch_matmul tuned, kᵀ folded (k read N x K)" grep -q 'batch_matmul_4x32x32x16_f32t_f32n_f32t' "$T/best.csv"
check "best: the linalg.matmul tuned" grep -q 'matmul_64x48x32_f32t_f32t_f32t' "$T/best.csv"
"$AS" log 1 --db "$T/s.db" > "$T/log.txt" 2>&1
check "the job's log: lowered TOSA, by which passes" grep -qF "lowered TOSA to linalg before analysis, as mlir-opt --pass-pipeline='$PIPE' does" "$T/log.txt"

# 2. build, tuned and untuned: the lowering said, the functions = OpenBLAS.
"$AS" build "$P" --db "$T/s.db" -o "$T/tosa.so" 2> "$T/b1"
check "build of the TOSA program exits 0" eq "$?" 0
check "build: both ops tuned" grep -q 'tosa.so: 2 tuned ops' "$T/b1"
check "build: stderr says it lowered TOSA first" grep -qF "$P: lowered TOSA to linalg before the build, as mlir-opt --pass-pipeline='$PIPE' does" "$T/b1"
check "tuned TOSA program = OpenBLAS" nolsan "$CALL" tosa "$T/tosa.so"
"$AS" build "$P" --untuned -o "$T/untuned.so" 2> "$T/b2"
check "build --untuned of the TOSA program exits 0" eq "$?" 0
check "untuned TOSA program = OpenBLAS" nolsan "$CALL" tosa "$T/untuned.so"

# 3. A store tuned on the program lowered by mlir-opt answers for the TOSA one.
deadline 120 "$OPT" "$P" --pass-pipeline="$PIPE" -o "$T/low.mlir"
check "mlir-opt lowers the fixture" eq "$?" 0
cfg "$T/b.cfg" low.mlir
"$AS" run "$T/b.cfg" --db "$T/low.db" --quiet > "$T/run2.txt" 2>&1
check "run of the lowered program exits 0" eq "$?" 0
"$AS" build "$P" --db "$T/low.db" -o "$T/cross.so" 2> "$T/b3"
check "the lowered program's store: both ops of the TOSA program tuned" grep -q 'cross.so: 2 tuned ops' "$T/b3"

# 4. The transform library: on the program as autosched reads it (lowered by
# the same passes, kᵀ folded): analyze --emit-program.
"$AS" export --db "$T/s.db" --format transform -o "$T/lib.mlir"
check "export transform exits 0" eq "$?" 0
"$AS" analyze "$P" --emit-program > "$T/read.mlir" 2> "$T/read_err"
check "analyze --emit-program exits 0" eq "$?" 0
check "the program as read: no TOSA op, no transpose left" eq "$(grep -c -E '= tosa\.|linalg.transpose' "$T/read.mlir")" 0
check "stderr says the transpose was folded" grep -q '1 transpose folded into the matmul that read it' "$T/read_err"
deadline 120 "$OPT" "$T/read.mlir" --transform-preload-library=transform-library-paths="$T/lib.mlir" \
    --transform-interpreter -o "$T/lib_out.mlir" 2> "$T/lib_err"
check "mlir-opt applies the library to the program as read" eq "$?" 0
check "the tosa.matmul's batch_matmul scheduled" eq "$(grep -c 'linalg.batch_matmul' "$T/lib_out.mlir")" 0
check "and vectorized" [ "$(grep -c 'vector.fma' "$T/lib_out.mlir")" -gt 0 ]

# 5. annotate: the lowered program, annotated, its ops at the TOSA lines.
"$AS" annotate "$P" --db "$T/s.db" -o "$T/ann.mlir" 2> "$T/a1"
check "annotate of the TOSA program exits 0" eq "$?" 0
check "annotate: both ops annotated" grep -q '2 ops annotated' "$T/a1"
check "annotate: stderr says the program written is the lowered one" grep -q 'lowered TOSA to linalg before annotating' "$T/a1"
check "annotate: its header says so too" eq "$(sed -n 2p "$T/ann.mlir")" "// lowered from TOSA to linalg first, as mlir-opt --pass-pipeline='$PIPE' does"
check "annotate: its next header line says kᵀ was folded" eq "$(sed -n 3p "$T/ann.mlir")" "// 1 transpose folded into the matmul that read it (swapping the last two dims): that operand is read stored transposed, not copied"
check "annotate: no TOSA op left" eq "$(grep -c '= tosa\.' "$T/ann.mlir")" 0
check "annotate: the batch_matmul carries compilation_info" grep -q 'linalg.batch_matmul.*compilation_info' "$T/ann.mlir"
check "annotate: locations name the TOSA file's tosa.matmul line" grep -qF "loc(\"$P\":8:10)" "$T/ann.mlir"
deadline 120 "$OPT" --allow-unregistered-dialect "$T/ann.mlir" -o /dev/null 2> "$T/ann_err"
check "the annotated program re-parses" eq "$?" 0

# 6. The real block: built untuned, and tuned from a store that knows only
# its two attention batch matmuls (tuned as linalg), the tosa.matmuls' ops:
# each a library that loads with its symbols bound.
B=$SRC/tests/analysis/fixtures/deepseek_r1_qwen1p5b_block_prefill40_f32_tosa.mlir
"$AS" build "$B" --untuned -o "$T/block.so" 2> "$T/b4"
check "build of the real TOSA block exits 0" eq "$?" 0
check "the real block: lowered first" grep -q 'lowered TOSA to linalg before the build' "$T/b4"
check "the real block's library loads, _mlir_ciface_subgraph0 in it" "$CALL" find "$T/block.so" subgraph0
cp "$SRC/tests/export/fixtures/deepseek_attention.mlir" "$T/"
grid_cfg deepseek_attention.mlir 1 5 > "$T/c.cfg" <<C
$(space tile_m=8 tile_n=40 tile_k=40 vector_m=4 vector_n=16)
C
"$AS" run "$T/c.cfg" --db "$T/attn.db" --quiet > "$T/run3.txt" 2>&1
check "run of the block's attention batch matmuls exits 0" eq "$?" 0
"$AS" build "$B" --db "$T/attn.db" -o "$T/block_tuned.so" 2> "$T/b5"
check "tuned build of the real TOSA block exits 0" eq "$?" 0
check "the real block: its two tosa.matmuls tuned" grep -q 'block_tuned.so: 2 tuned ops' "$T/b5"
check "the real block: the 7 linalg.matmuls (4 shapes) on the default" eq "$(grep -c 'not in the store; default schedule' "$T/b5")" 4
check "the tuned real block's library loads" "$CALL" find "$T/block_tuned.so" subgraph0
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
