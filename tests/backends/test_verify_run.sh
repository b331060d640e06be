#!/usr/bin/env bash
# `autosched run` end to end on what verification and the counters are for:
# unsigned i8 matmuls (extui) tune and verify as unsigned, the reference is
# oneDNN's int8 matmul; a long-K bf16 matmul is checked exactly and a kernel
# that does nothing is a wrong result; a K too long to check exactly in bf16
# says NOT VERIFIED, never SUCCESS; the counters and the re-measured
# disturbed repetitions are in the store.
#   test_verify_run.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
FIX=$SRC/tests/backends/fixtures
scratch verify


# A cfg for MLIR file $2 in folder $1, with extra lines from stdin.
mkcfg() {
	local dir=$1 mlir=$2
	mkdir -p "$dir"
	cp "$FIX/$mlir" "$dir/"
	{
		printf '[Env]\ninput_file = %s\n' "$mlir"
		cat
		printf '[Measure]\nmin_time = 0.01\nmin_reps = 3\nconfirm_top = 1\ntimeout = 10\n'
	} > "$dir/a.cfg"
}

# 1. Unsigned i8: tuned, verified, named u8, the int8 reference.
mkcfg "$T/u8" small_u8.mlir <<C
[SearchSpace]
$(space tile_m=16,32 tile_n=16,32 tile_k=32,64 vector_m=4 vector_n=16 vector_k=1 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 3
C
AUTOSCHED_TEST_FAULT="sleep:tile_16x16x32" \
    "$AS" run "$T/u8/a.cfg" --db "$T/u8/s.db" > "$T/u8/out.txt" 2>&1
rc=$?
check "u8: run exits 0" eq "$rc" 0
check "u8: no 'no valid config'" bash -c "! grep -q 'no valid config' '$T/u8/out.txt'"
check "u8: the op names say u8" eq "$(q "$T/u8/s.db" "select group_concat(name, ' ') from (select name from ops order by name)")" \
    "matmul_16x32x128_u8t_i8t_i32t matmul_32x32x64_u8t_u8t_i32t"
check "u8: every tune trial verified" eq "$(q "$T/u8/s.db" \
    "select count(*) from trials where phase='tune' and verified=1 and status in ('ok','unstable')")" 6
check "u8: checked exactly, and says by what" eq "$(q "$T/u8/s.db" \
    "select count(*) from trials where phase='tune' and checked_by like 'exact:%'")" 6
check "u8: the block says which reference checked it" grep -q '^Verification  : SUCCESS' "$T/u8/out.txt"
check "u8·i8: the reference is oneDNN u8s8s32, same precision" eq "$(q "$T/u8/s.db" \
    "select distinct t.ref_same_precision || ' ' || substr(t.ref_routine, 1, 21) from trials t join ops o on o.id = t.op_id where t.phase='reference' and o.name like '%u8t_i8t%'")" \
    "1 onednn:matmul_u8s8s32"
check "u8·u8: the closest reference, not the same precision" eq "$(q "$T/u8/s.db" \
    "select distinct t.ref_same_precision from trials t join ops o on o.id = t.op_id where t.phase='reference' and o.name like '%u8t_u8t%'")" 0
check "counters: context switches and CPU time of every measured trial" eq "$(q "$T/u8/s.db" \
    "select count(*) from trials where phase='tune' and context_switches is not null and task_clock_ns > 0 and reps_dropped is not null")" 6
check "counters: the disturbed repetitions were dropped and re-run" ge "$(q "$T/u8/s.db" \
    "select min(reps_dropped) from trials where phase='tune' and config_name like 'tile_16x16x32%'")" 1

# 2. bf16 into bf16 at K = 1024: exact; a kernel that does nothing is wrong.
mkcfg "$T/bf16" long_bf16.mlir <<C
[SearchSpace]
$(space tile_m=16 tile_n=16,32 tile_k=128,256 vector_m=4 vector_n=16 vector_k=1 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 4
C
AUTOSCHED_TEST_FAULT="nothing:tile_16x32x256" \
    "$AS" run "$T/bf16/a.cfg" --db "$T/bf16/s.db" > "$T/bf16/out.txt" 2>&1
check "bf16: run exits 0" eq "$?" 0
check "bf16: the others verified on sparse data" eq "$(q "$T/bf16/s.db" \
    "select count(*) from trials where phase='tune' and verified=1 and checked_by like '%sparse%'")" 3
check "bf16: doing nothing is a wrong result" eq "$(q "$T/bf16/s.db" \
    "select status from trials where phase='tune' and config_name like 'tile_16x32x256%'")" wrong_result

# 3. A K too long to check exactly in bf16 with 4x4 outputs: NOT VERIFIED.
mkdir -p "$T/nv"
cat > "$T/nv/nv.mlir" <<'M'
func.func @mm(%a: tensor<4x8192xbf16>, %b: tensor<8192x4xbf16>, %c: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8192xbf16>, tensor<8192x4xbf16>) outs(%c : tensor<4x4xbf16>) -> tensor<4x4xbf16>
  return %0 : tensor<4x4xbf16>
}
M
printf '[Env]\ninput_file = nv.mlir\n[SearchSpace]\ntile_k = [512]\nthreads = [1]\n[SearchStrategy]\nn_trial = 1\n[Measure]\nmin_time = 0.01\nmin_reps = 3\nconfirm_top = 1\n' > "$T/nv/a.cfg"
"$AS" run "$T/nv/a.cfg" --db "$T/nv/s.db" > "$T/nv/out.txt" 2>&1
check "not verifiable: run exits 0" eq "$?" 0
check "not verifiable: the console says so" grep -q '^Verification  : NOT VERIFIED' "$T/nv/out.txt"
check "not verifiable: never SUCCESS" bash -c "! grep -q '^Verification  : SUCCESS' '$T/nv/out.txt'"
check "not verifiable: recorded verified=0, checked by none" eq "$(q "$T/nv/s.db" \
    "select verified || ' ' || checked_by from trials where phase='tune'")" "0 none"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
