#!/usr/bin/env bash
# What `autosched build` links and exports: a library whose math ops call
# libm loads with RTLD_NOW and computes what libm does; a library exports
# the program's functions (NAME, _mlir_ciface_NAME), its marker and the
# buffer pool's two functions, nothing else; a program of many ops is compiled in pieces at once and still adds
# up. Every library built here is opened with RTLD_NOW at the end.
#   test_build_link.sh AUTOSCHED SOURCE_DIR CALL_PROGRAM
. "$(dirname "$0")/../checks.sh"
args AS SRC CALL
FIX=$SRC/tests/export/fixtures
scratch blink tmp

# Dynamic symbols a library defines, sorted, one line.
exports() { nm -D --defined-only "$1" | awk '{print $3}' | sort | tr '\n' ' '; }

# 1. Math ops: exp on a whole tensor, tanh and erf in generics, a matmul
# (--math exact: libm's functions; fast is test_build_math.sh's).
cp "$FIX/math.mlir" "$T/"
TMPDIR=$T/tmp "$AS" build "$T/math.mlir" --untuned --math exact --fuse off --rest-fuse off -o "$T/math.so" 2> "$T/err_math"
check "math: build exits 0" eq "$?" 0
check "math: every op in a dispatch of its own" grep -q 'math.so: 6 dispatches' "$T/err_math"
check "math: opens with RTLD_NOW" "$CALL" load "$T/math.so"
check "math: libm linked" bash -c "readelf -d '$T/math.so' | grep -q 'NEEDED.*libm\.so'"
check "math: expf, tanhf and erff called" bash -c \
    "nm -u '$T/math.so' | grep -q expf && nm -u '$T/math.so' | grep -q tanhf && nm -u '$T/math.so' | grep -q erff"
check "math: every function = libm (and OpenBLAS)" nolsan "$CALL" math "$T/math.so"
check "math: exports the functions and the marker only" eq "$(exports "$T/math.so")" \
    "_mlir_ciface_act _mlir_ciface_scores act autosched_built_library autosched_pool_free autosched_pool_release scores "
# No math op: libm is not needed.
TMPDIR=$T/tmp "$AS" build "$SRC/configs/example.mlir" --untuned -o "$T/example.so" 2> "$T/err_ex"
check "example: build exits 0" eq "$?" 0
check "example: libm not linked (no math op)" bash -c "! readelf -d '$T/example.so' | grep -q 'NEEDED.*libm\.so'"
check "example: exports" eq "$(exports "$T/example.so")" \
    "_mlir_ciface_projection _mlir_ciface_scores autosched_built_library autosched_pool_free autosched_pool_release projection scores "

# 2. Many ops: compiled in several pieces at once, the result still right.
n=200
chain_mlir "$n" > "$T/chain.mlir"
TMPDIR=$T/tmp "$AS" build "$T/chain.mlir" --untuned --rest-fuse off -o "$T/chain.so" 2> "$T/err_chain"
check "chain: build exits 0" eq "$?" 0
pieces=$(sed -n 's/.*chain.so: [0-9]* dispatches in \([0-9]*\) pieces.*/\1/p' "$T/err_chain")
check "chain: $n dispatches" grep -q "chain.so: $n dispatches" "$T/err_chain"
check "chain: compiled in more pieces than CPUs (${pieces:-?})" ge "${pieces:-0}" 3
check "chain: the time of each step said" grep -q 'seconds: outline [0-9.]*, mlir-opt [0-9.]*, mlir-translate [0-9.]*, split [0-9.]*, clang [0-9.]*, link [0-9.]*' "$T/err_chain"
check "chain: x + $n" nolsan "$CALL" chain "$T/chain.so" "$n"
check "chain: no dispatch exported" eq "$(exports "$T/chain.so")" "_mlir_ciface_chain autosched_built_library autosched_pool_free autosched_pool_release chain "

# 3. mlir-opt's error names the user's file and line, not the scratch copy
# of the program cut into dispatches (a gather, which does not bufferize).
cat > "$T/bad.mlir" <<'M'
func.func @bad(%x: tensor<64xf32>) -> tensor<1xf32> {
  %one = arith.constant dense<1.0> : tensor<64xf32>
  %y = arith.addf %x, %one : tensor<64xf32>
  %idx = arith.constant dense<[[0]]> : tensor<1x1xindex>
  %g = tensor.gather %y[%idx] gather_dims([0]) unique : (tensor<64xf32>, tensor<1x1xindex>) -> tensor<1xf32>
  return %g : tensor<1xf32>
}
M
TMPDIR=$T/tmp "$AS" build "$T/bad.mlir" --untuned -o "$T/bad.so" 2> "$T/err_bad"
check "mlir-opt fails: exit 2" eq "$?" 2
check "mlir-opt fails: the error names bad.mlir:5:8" bash -c \
    "head -1 '$T/err_bad' | grep -q '^autosched: mlir-opt failed: $T/bad.mlir:5:8: error: op was not bufferized'"
check "mlir-opt fails: nothing written" [ ! -e "$T/bad.so" ]

check "every library opens with RTLD_NOW" "$CALL" load "$T"/*.so
check "scratch folders removed" eq "$(ls -A "$T/tmp")" ""

echo "build_link: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
