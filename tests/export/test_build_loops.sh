#!/usr/bin/env bash
# A program with loops of its own beside linalg ops (fixtures/loops.mlir,
# as buddy-mlir's DeepSeek decode step writes its KV-cache update and
# attention): `build` makes each top-level loop a dispatch (compiled as the
# kernels are, not at the program's -O0), and the default build (the rest
# vectorized and fused, the pool, fast math) computes bit for bit what the
# plainest one computes (the rest as loops, nothing fused, malloc, exact
# math), the cache argument written alike; with the mask's ops on i1
# buffers vectorized (a vector of i1 is packed, a buffer of i1 holds a byte
# an element) 288 of the 1024 results differed.
#   test_build_loops.sh AUTOSCHED SOURCE_DIR COMPARE_FUSE
. "$(dirname "$0")/../checks.sh"
args AS SRC CMP
FIX=$SRC/tests/export/fixtures
scratch bloops tmp
TYPES="4x256xf32 4x64xf32 256x64xf32 1xi64 1x64xf32 256xi64"

TMPDIR=$T/tmp "$AS" build "$FIX/loops.mlir" --untuned --rest loops --fuse off \
    --rest-fuse off --buffers malloc --math exact -o "$T/plain.so" 2> "$T/err_plain"
check "plain: build exits 0" eq "$?" 0
for n in 1 2; do
	TMPDIR=$T/tmp "$AS" build "$FIX/loops.mlir" --untuned --rest-threads $n \
	    -o "$T/dflt$n.so" 2> "$T/err_dflt$n"
	check "default, $n threads: build exits 0" eq "$?" 0
	check "default, $n threads: = plain, bit for bit, the cache written alike" \
	    nolsan "$CMP" "$T/plain.so" "$T/dflt$n.so" attend 0 1 $TYPES
done
check "the scf.for and the affine loop nest: dispatches of their own" \
    eq "$(nm "$T/dflt2.so" | grep -c -E '__autosched_attend_[0-9]+_for$')" 2
check "scratch folders removed" eq "$(ls -A "$T/tmp")" ""

echo "build_loops: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
