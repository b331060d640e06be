#!/usr/bin/env bash
# The real DeepSeek-R1 decode step (../shared/models) built untuned into a
# library that loads: its top function keeps an OpenMP region of its own,
# whose unnamed ident_t globals each piece named __unnamed_N by its own count
# until build named them first (the link failed: undefined __unnamed_1).
# Skipped (77) where ../shared/models is not beside the source.
#   test_build_decode.sh AUTOSCHED SOURCE_DIR CALL_PROGRAM
. "$(dirname "$0")/../checks.sh"
args AS SRC CALL
scratch export-decode
D=$SRC/../shared/models/deepseek_r1_qwen1p5b_decode_f32_linalg.mlir
[ -f "$D" ] || { echo "skip: $D not found"; exit 77; }
deadline 600 "$AS" build "$D" --untuned -o "$T/decode.so" 2> "$T/b6"
check "build of the real decode step exits 0" eq "$?" 0
check "the decode step: no undefined symbol at the link" eq "$(grep -c 'undefined reference' "$T/b6")" 0
check "the decode step's library loads, _mlir_ciface_subgraph0_decode in it" "$CALL" find "$T/decode.so" subgraph0_decode
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
