#!/usr/bin/env bash
# `autosched build --rest vector` against `--rest loops`: the ops no
# schedule covers (fixtures/rest.mlir: odd shapes, elementwise, softmax,
# layer norm, transpose, fill, broadcast, a matmul, big ops split across
# threads) built both ways, at 1 and 2 threads, agree on the same random
# inputs (compare_rest.c says how closely); the threaded one links OpenMP,
# the loops one does not.
#   test_build_rest.sh AUTOSCHED SOURCE_DIR COMPARE_REST
. "$(dirname "$0")/../checks.sh"
args AS SRC CMP
FIX=$SRC/tests/export/fixtures
scratch brest tmp

TMPDIR=$T/tmp "$AS" build "$FIX/rest.mlir" --untuned --rest loops -o "$T/loops.so" 2> "$T/err_loops"
check "loops: build exits 0" eq "$?" 0
check "loops: says so" grep -q 'loops.so: the rest as scalar loops' "$T/err_loops"
check "loops: single-threaded (no OpenMP)" bash -c "! readelf -d '$T/loops.so' | grep -q 'NEEDED.*omp'"
for n in 1 2; do
	TMPDIR=$T/tmp "$AS" build "$FIX/rest.mlir" --untuned --rest vector \
	    --rest-threads $n -o "$T/vec$n.so" 2> "$T/err_vec$n"
	check "vector, $n threads: build exits 0" eq "$?" 0
	check "vector, $n threads: says so" grep -q "vec$n.so: the rest vectorized, $n thread" "$T/err_vec$n"
	check "vector, $n threads: = loops" nolsan "$CMP" "$T/loops.so" "$T/vec$n.so"
done
check "vector, 2 threads: OpenMP linked" bash -c "readelf -d '$T/vec2.so' | grep -q 'NEEDED.*omp'"
check "vector, 2 threads: an op split across threads" bash -c "nm -u '$T/vec2.so' | grep -q __kmpc_fork_call"
check "vector, 1 thread: no op split across threads" bash -c "! nm -u '$T/vec1.so' | grep -q __kmpc_fork_call"
# The default is vector.
TMPDIR=$T/tmp "$AS" build "$FIX/rest.mlir" --untuned --rest-threads 2 -o "$T/dflt.so" 2> "$T/err_dflt"
check "default: vectorized" grep -q 'dflt.so: the rest vectorized, 2 threads' "$T/err_dflt"

# Bad values are refused before anything is built.
"$AS" build "$FIX/rest.mlir" --untuned --rest scalar -o "$T/bad.so" 2> "$T/err_bad"
check "--rest scalar: exit 2" eq "$?" 2
check "--rest scalar: says what is expected" grep -q 'expected vector or loops' "$T/err_bad"
"$AS" build "$FIX/rest.mlir" --untuned --rest-threads 0 -o "$T/bad.so" 2> "$T/err_bad"
check "--rest-threads 0: exit 2" eq "$?" 2
check "bad options: nothing written" [ ! -e "$T/bad.so" ]
check "scratch folders removed" eq "$(ls -A "$T/tmp")" ""

echo "build_rest: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
