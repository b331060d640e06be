#!/usr/bin/env bash
# `autosched run` on convs (fixtures/conv_ref.mlir: NHWC 3x3 padded, NHWC
# 1x1 stride 2, NCHW 3x3 padded, NHWC 1x1 stride 1): each op's job records
# a 'reference' trial that is oneDNN's convolution of the conv's geometry,
# verified exactly against the direct loop, and names it as the op's
# reference. Every kernel trial of a conv tuned through its im2col (every
# phase) runs with the harness's im2col and is checked as the conv through
# it; the 1x1 stride-1 conv's, its plain matmul, without. A wrong im2col
# copy is caught in every phase. Exit 77 without oneDNN.
#   test_conv_job.sh AUTOSCHED AUTOSCHED_MEASURE SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS M SRC
scratch convjob

if ! nolsan timeout 60 "$M" --ref onednn --conv nhwc:1,8,8,8,16,3,3,1,1,1,1,1,1,1,1 \
    --shape 1x64x16x72 --reps 1,1 --min-time 0 > /dev/null 2> "$T/err"; then
	echo "SKIP: $(cat "$T/err")"
	exit 77
fi
cp "$SRC/tests/backends/fixtures/conv_ref.mlir" "$T/"
cat > "$T/a.cfg" <<'C'
[Env]
input_file = conv_ref.mlir
backend = mlir-cpu
[SearchSpace]
threads = [1]
[SearchStrategy]
tuner = random
n_trial = 2
seed = 1
[Measure]
min_time = 0.01
min_reps = 3
confirm_top = 2
timeout = 10
verify = 1
; tiny ops on a shared machine: no stability bar
cv_max = 0
C
(cd "$T" && timeout 600 env AUTOSCHED_WORK="$T/cache" "$AS" run a.cfg \
    --db s.db --quiet --json > run.json 2> run.err)
check "run: exit 0" eq "$?" 0
# Every reference trial (a job measures the reference in several rounds).
q "$T/s.db" "select o.name || '|' || t.status || '|' || t.verified || '|' ||
    coalesce(t.checked_by, '') || '|' || coalesce(t.ref_routine, '')
    from trials t join ops o on o.id = t.op_id where t.phase = 'reference'
    order by o.name" > "$T/ref.txt"
check "reference trials recorded" ge "$(wc -l < "$T/ref.txt")" 4
for op in matmul_64x16x72 matmul_16x32x16 matmul_16x36x72 matmul_64x8x16; do
	grep "^${op}_" "$T/ref.txt" > "$T/op.txt"
	check "$op: a reference trial" ge "$(wc -l < "$T/op.txt")" 1
	check "$op: every one ok" eq "$(cut -d'|' -f2 "$T/op.txt" | sort -u)" ok
	check "$op: every one verified" eq \
	    "$(cut -d'|' -f3 "$T/op.txt" | sort -u)" 1
	check "$op: by the direct conv loop" eq \
	    "$(cut -d'|' -f4 "$T/op.txt" | sort -u)" \
	    "exact:direct conv loop(dense data)"
done
check "NHWC convs: oneDNN's nhwc conv" eq "$(grep -v '|onednn:conv_nhwc_hwcf_f32(' \
    "$T/ref.txt" | grep -c '^matmul_\(64x16x72\|16x32x16\|64x8x16\)_')" 0
check "NCHW conv: oneDNN's nchw conv" eq "$(grep '^matmul_16x36x72_' "$T/ref.txt" |
    grep -vc '|onednn:conv_nchw_fchw_f32(')" 0
check "the run names oneDNN's conv as each op's reference" eq \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(sum((o.get("reference") or "").startswith("onednn:conv_") for o in d["ops"]))' \
    "$T/run.json")" 4

# kernels DB: every kernel trial of DB as NAME|PHASE|STATUS|CHECKED_BY.
kernels() {
	q "$1" "select o.name || '|' || t.phase || '|' || t.status || '|' ||
	    coalesce(t.checked_by, '') from trials t join ops o on
	    o.id = t.op_id where t.phase <> 'reference' order by o.name, t.id"
}
# The whole conv in every phase: the im2col convs' trials were run with the
# harness's im2col (--conv) and checked as the conv through it.
kernels "$T/s.db" > "$T/kern.txt"
for op in matmul_64x16x72 matmul_16x32x16 matmul_16x36x72; do
	grep "^${op}_" "$T/kern.txt" > "$T/op.txt"
	for ph in baseline tune confirm final; do
		check "$op: $ph trials" ge "$(grep -c "^[^|]*|$ph|" "$T/op.txt")" 1
	done
	check "$op: every kernel trial ok" eq \
	    "$(cut -d'|' -f3 "$T/op.txt" | sort -u)" ok
	check "$op: every kernel trial checked as the conv" eq \
	    "$(grep -vc '|exact:[^|]*+direct conv loop(im2col)$' "$T/op.txt")" 0
done
# The 1x1 stride-1 conv is its matmul: no im2col timed or checked.
grep '^matmul_64x8x16_' "$T/kern.txt" > "$T/op.txt"
check "1x1 stride 1: kernel trials" ge "$(wc -l < "$T/op.txt")" 3
check "1x1 stride 1: every one ok" eq "$(cut -d'|' -f3 "$T/op.txt" | sort -u)" ok
check "1x1 stride 1: checked exactly as its matmul" eq \
    "$(grep -c '|exact:' "$T/op.txt")" "$(wc -l < "$T/op.txt")"
check "1x1 stride 1: no im2col" eq "$(grep -c 'conv loop' "$T/op.txt")" 0

# A wrong im2col (test-only: the check's copy reads each window a row off)
# passes the GEMM's checks and is caught as the conv, in every phase; the
# 1x1 stride-1 conv has no im2col and is untouched.
mkdir -p "$T/f"
cp "$T/conv_ref.mlir" "$T/a.cfg" "$T/f/"
(cd "$T/f" && AUTOSCHED_TEST_FAULT='im2col:!no-such-config' timeout 600 \
    env AUTOSCHED_WORK="$T/cache" "$AS" run a.cfg --db s.db --quiet \
    > run.out 2> run.err)
check "wrong im2col: run exits 1" eq "$?" 1
check "wrong im2col: no valid config for the three" eq \
    "$(grep -c 'no valid config found' "$T/f/run.out")" 3
kernels "$T/f/s.db" > "$T/fkern.txt"
grep -v '^matmul_64x8x16_' "$T/fkern.txt" > "$T/op.txt"
check "wrong im2col: kernel trials" ge "$(wc -l < "$T/op.txt")" 3
check "wrong im2col: every one wrong" eq \
    "$(cut -d'|' -f3 "$T/op.txt" | sort -u)" wrong_result
check "wrong im2col: caught as the conv" eq \
    "$(grep -vc '+direct conv loop(im2col)$' "$T/op.txt")" 0
check "wrong im2col: baseline caught" ge "$(grep -c '|baseline|' "$T/op.txt")" 3
check "wrong im2col: tune caught" ge "$(grep -c '|tune|' "$T/op.txt")" 3
grep '^matmul_64x8x16_' "$T/fkern.txt" > "$T/op.txt"
check "wrong im2col: the 1x1 stride-1 conv's trials ok" eq \
    "$(cut -d'|' -f3 "$T/op.txt" | sort -u)" ok

echo "conv_job: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
