#!/usr/bin/env bash
# `autosched build --math fast|exact` (fixtures/math_sweep.mlir: exp, log, erf,
# tanh on 2^16 floats): fast calls no libm function for them and stays
# within README's bounds of libm's double functions over the float range
# (every 97th bit pattern of the 2^32, then the special values; math_bound
# with STRIDE 1 checks all of them, in minutes); exact calls libm's float
# functions and returns their results bit for bit. fast is the default.
#   test_build_math.sh AUTOSCHED SOURCE_DIR MATH_BOUND
. "$(dirname "$0")/../checks.sh"
args AS SRC BOUND
FIX=$SRC/tests/export/fixtures
scratch bmath tmp

for m in fast exact; do
	TMPDIR=$T/tmp deadline 300 "$AS" build "$FIX/math_sweep.mlir" --untuned \
	    --rest-threads 1 --math $m -o "$T/$m.so" 2> "$T/err_$m"
	check "$m: build exits 0" eq "$?" 0
	check "$m: says so" grep -q "$m.so: math $m," "$T/err_$m"
	nolsan deadline 120 "$BOUND" $m "$T/$m.so" 97 2 > "$T/out_$m"
	check "$m: within its bounds (math_bound)" eq "$?" 0
	cat "$T/out_$m"
done
# The checker sees a difference: fast is not libm bit for bit.
nolsan deadline 120 "$BOUND" exact "$T/fast.so" 9973 2 > /dev/null
check "math_bound exact fails on the fast library" eq "$?" 1
check "fast: no libm call for them" bash -c "! nm -u '$T/fast.so' | grep -Eq ' (expf|logf|erff|tanhf)(@|\$)'"
check "exact: libm's functions called" bash -c "nm -u '$T/exact.so' | grep -Eq ' (expf|erff|tanhf)(@|\$)'"
TMPDIR=$T/tmp deadline 300 "$AS" build "$FIX/math_sweep.mlir" --untuned \
    --rest-threads 1 -o "$T/dflt.so" 2> "$T/err_dflt"
check "default: fast" grep -q 'dflt.so: math fast,' "$T/err_dflt"

deadline 60 "$AS" build "$FIX/math_sweep.mlir" --untuned --math approximate -o "$T/bad.so" 2> "$T/err_bad"
check "--math approximate: exit 2" eq "$?" 2
check "--math approximate: says what is expected" grep -q 'expected fast or exact' "$T/err_bad"
check "bad option: nothing written" [ ! -e "$T/bad.so" ]
check "scratch folders removed" eq "$(ls -A "$T/tmp")" ""

echo "build_math: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
