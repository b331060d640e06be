#!/usr/bin/env bash
# Convolutions end to end, on a small CNN of public ResNet-50 shapes
# (fixtures/cnn.mlir): analyze lists every conv with its geometry and
# dedups the same op; every conv but the depthwise one is tuned as the
# matmul of its im2col (the matmul itself for 1x1 stride 1; a few trials
# each, every one verified); build, tuned and untuned, cuts them into
# im2col and matmul and computes what a direct convolution loop computes
# (exactly: small integers), the depthwise conv left as a conv included.
#   test_conv.sh AUTOSCHED FIXTURES CONV_CALL MLIR_OPT PLUGIN
. "$(dirname "$0")/../checks.sh"
args AS FIX CALL OPT PLUGIN
scratch conv
cp "$FIX/cnn.mlir" "$T/"

# 1. analyze: the convs, their shapes, the matmuls they are tuned as.
deadline 120 "$AS" analyze "$T/cnn.mlir" > "$T/an.txt" 2>&1
check "analyze exits 0" eq "$?" 0
check "analyze: 12 ops, 11 distinct, 11 tunable" grep -q '^12 ops, 11 distinct; 11 tunable' "$T/an.txt"
check "analyze: the stem's geometry" grep -q 'conv: N=1 H=16 W=16 C=3 F=64 KH=7 KW=7 -> 8x8, stride 2x2, dilation 1x1, padding 3,2,3,2 (top,bottom,left,right), 0.0012 GFLOP; tuned as the matmul of its im2col' "$T/an.txt"
check "analyze: the stem as (8*8) x 64 x (7*7*3)" grep -Eq '^0 +matmul +matmul_64x64x147_f32t_f32t_f32t +1 yes +stem' "$T/an.txt"
check "analyze: the padded 3x3" grep -Eq '^2 +matmul +matmul_64x64x576_f32t_f32t_f32t +1 yes' "$T/an.txt"
check "analyze: a 1x1 conv is the matmul it is" grep -q 'KH=1 KW=1 -> 8x8, stride 1x1, dilation 1x1, padding 0,0,0,0 (top,bottom,left,right), 0.000524 GFLOP; tuned as the matmul it is' "$T/an.txt"
check "analyze: expansion and projection are one op, twice" grep -Eq '^3 +matmul +matmul_64x256x64_f32t_f32t_f32t +2 yes' "$T/an.txt"
check "analyze: the NCHW 1x1 conv is F x HW x C" grep -Eq '^7 +matmul +matmul_32x49x64_f32t_f32t_f32t +1 yes +pointwise_nchw' "$T/an.txt"
check "analyze: the NCHW 3x3 stride 2 is F x OH*OW x C*9" grep -Eq '^9 +matmul +matmul_8x16x144_f32t_f32t_f32t +1 yes +nchw3x3' "$T/an.txt"
check "analyze: the depthwise conv not tuned, and why" grep -q 'not tunable: depthwise convolution 3x3: not tuned yet' "$T/an.txt"
deadline 120 "$AS" analyze "$T/cnn.mlir" --json > "$T/an.json" 2>&1
check "analyze --json: the 3x3's padding" eq "$(jq -c '.ops[2].conv.padding' "$T/an.json")" "[1,1,1,1]"
check "analyze --json: the stem's flops" eq "$(jq '.ops[0].flops' "$T/an.json")" "$((2 * 8 * 8 * 64 * 3 * 7 * 7))"
check "analyze --json: a conv's op and kind" eq "$(jq -r '.ops[1].op + " " + .ops[1].kind' "$T/an.json")" "linalg.conv_2d_nhwc_hwcf matmul"
check "analyze --json: the dilated conv's dilation" eq "$(jq -c '.ops[10].conv.dilation' "$T/an.json")" "[2,2]"

# 2. run: the ten distinct matmuls tuned, two trials each, all verified.
grid_cfg cnn.mlir 2 10 > "$T/a.cfg" <<C
$(space tile_m=16,32 tile_n=16 tile_k=16 vector_m=4 vector_n=16)
C
deadline 300 "$AS" run "$T/a.cfg" --db "$T/s.db" --quiet > "$T/run.txt" 2>&1
check "run exits 0" eq "$?" 0
check "run: 10 distinct ops tuned" eq "$(q "$T/s.db" "SELECT count(DISTINCT op_id) FROM trials WHERE phase = 'tune'")" 10
check "run: two trials per op" eq "$(q "$T/s.db" "SELECT count(*) FROM trials WHERE phase = 'tune'")" 20
check "run: every trial ran and was verified" eq "$(q "$T/s.db" "SELECT count(*) FROM trials WHERE phase = 'tune' AND (verified = 0 OR status NOT IN ('ok', 'unstable'))")" 0

# 3. build, tuned and untuned: both = the direct convolution.
deadline 300 "$AS" build "$T/cnn.mlir" --db "$T/s.db" -o "$T/tuned.so" 2> "$T/b1"
check "build exits 0" eq "$?" 0
check "build: the 10 tuned ops" grep -q 'tuned.so: 10 tuned ops' "$T/b1"
check "tuned build = direct convolution" nolsan deadline 120 "$CALL" "$T/tuned.so"
deadline 300 "$AS" build "$T/cnn.mlir" --untuned -o "$T/untuned.so" 2> "$T/b2"
check "build --untuned exits 0" eq "$?" 0
check "untuned build = direct convolution" nolsan deadline 120 "$CALL" "$T/untuned.so"

# 4. annotate: a conv's config is its matmul's, not the conv op's.
deadline 120 "$AS" annotate "$T/cnn.mlir" --db "$T/s.db" -o "$T/ann.mlir" 2> "$T/ann.err"
check "annotate: nothing to annotate, exit 1" eq "$?" 1
check "annotate: nothing written" [ ! -e "$T/ann.mlir" ]
check "annotate: says why, naming the conv" grep -q "cnn.mlir:15:8 (linalg.conv_2d_nhwc_hwcf): a convolution tuned as a matmul is not annotated" "$T/ann.err"

# 5. The im2col's rows are vector copies (the rest pass), not scalar loops.
deadline 120 "$OPT" "$FIX/im2col.mlir" --load-pass-plugin="$PLUGIN" \
    --pass-pipeline='builtin.module(func.func(autosched-vectorize-rest{threads=2 vector-bits=512}))' \
    -o "$T/im2col.out" 2> "$T/im2col.err"
check "the rest pass takes the im2col" eq "$?" 0
check "the im2col: no linalg.generic left" eq "$(grep -c 'linalg.generic' "$T/im2col.out")" 0
check "the im2col: its 64-float rows read and written as vectors" eq \
    "$(grep -c 'vector.transfer_\(read\|write\) .*vector<64xf32>' "$T/im2col.out")" 2
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
