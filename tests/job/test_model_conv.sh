#!/usr/bin/env bash
# bench/model.sh on a model of convs and a matmul (fixtures of
# backends_conv_job, plus a plain matmul): its per-op table puts oneDNN's
# convolution of each conv op's geometry beside it (a time and a ratio)
# and "-" beside the plain matmul. A tiny run that proves the table
# prints; its numbers are not figures. Exit 77 without oneDNN.
#   test_model_conv.sh BUILD_DIR SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args B SRC
scratch modelconv

M=$B/backends/mlir-cpu/autosched-measure
if ! nolsan timeout 60 "$M" --ref onednn --conv nhwc:1,8,8,8,16,3,3,1,1,1,1,1,1,1,1 \
    --shape 1x64x16x72 --reps 1,1 --min-time 0 > /dev/null 2> "$T/err"; then
	echo "SKIP: $(cat "$T/err")"
	exit 77
fi
{
	cat "$SRC/tests/backends/fixtures/conv_ref.mlir"
	echo 'func.func @mm(%a: tensor<24x40xf32>, %b: tensor<40x8xf32>) -> tensor<24x8xf32> {'
	echo '  %z = arith.constant 0.0 : f32'
	echo '  %e = tensor.empty() : tensor<24x8xf32>'
	echo '  %i = linalg.fill ins(%z : f32) outs(%e : tensor<24x8xf32>) -> tensor<24x8xf32>'
	echo '  %0 = linalg.matmul ins(%a, %b : tensor<24x40xf32>, tensor<40x8xf32>) outs(%i : tensor<24x8xf32>) -> tensor<24x8xf32>'
	echo '  return %0 : tensor<24x8xf32>'
	echo '}'
} > "$T/cnn.mlir"
deadline 600 env BUILD="$B" CPUS=0 TRIALS=5 MIN_TIME=0.02 ROUNDS=1 \
    ONEDNN_MIN_TIME=0.01 ASAN_OPTIONS=detect_leaks=0 \
    sh "$SRC/bench/model.sh" "$T/cnn.mlir" > "$T/out" 2> "$T/err"
check "model.sh: exit 0" eq "$?" 0
check "the per-op table has oneDNN's columns" grep -q \
    '^distinct op .* oneDNN ms vs oneDNN$' "$T/out"
for op in matmul_64x16x72 matmul_16x32x16 matmul_16x36x72 matmul_64x8x16; do
	check "$op: oneDNN's conv beside it" grep -Eq \
	    "^${op}_f32t_f32t_f32t .* [0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{2}x\$" "$T/out"
done
check "the plain matmul: nothing beside it" grep -Eq \
    '^matmul_24x8x40_f32t_f32t_f32t .* - +-$' "$T/out"
check "the table says what oneDNN ms is" grep -q '^oneDNN ms: ' "$T/out"

echo "model_conv: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
