#!/usr/bin/env bash
# `autosched run` on convs (fixtures/conv_ref.mlir: NHWC 3x3 padded, NHWC
# 1x1 stride 2, NCHW 3x3 padded): each op's job records a 'reference'
# trial that is oneDNN's convolution of the conv's geometry, verified
# exactly against the direct loop, and names it as the op's reference.
# Exit 77 without oneDNN.
#   test_conv_job.sh AUTOSCHED AUTOSCHED_MEASURE SOURCE_DIR
set -u
AS=$1
M=$2
SRC=$3
. "$(dirname "$0")/../checks.sh"
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
n_trial = 1
seed = 1
[Measure]
min_time = 0.01
min_reps = 3
confirm_top = 1
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
check "reference trials recorded" ge "$(wc -l < "$T/ref.txt")" 3
for op in matmul_64x16x72 matmul_16x32x16 matmul_16x36x72; do
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
    "$T/ref.txt" | grep -c '^matmul_\(64x16x72\|16x32x16\)_')" 0
check "NCHW conv: oneDNN's nchw conv" eq "$(grep '^matmul_16x36x72_' "$T/ref.txt" |
    grep -vc '|onednn:conv_nchw_fchw_f32(')" 0
check "the run names oneDNN's conv as each op's reference" eq \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(sum((o.get("reference") or "").startswith("onednn:conv_") for o in d["ops"]))' \
    "$T/run.json")" 3

echo "conv_job: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
