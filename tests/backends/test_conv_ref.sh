#!/usr/bin/env bash
# autosched-measure --conv: oneDNN's convolution as the reference of an op
# that came from a conv, checked exactly against the harness's direct loop
# on small-integer data, in both layouts, with strides, dilations and
# uneven padding; a wrong output is caught; a malformed --conv is refused.
# A kernel of the conv's GEMM (mutant_kernel.c, the right one) run with
# --conv is timed with the harness's im2col copy and checked as the conv
# through it, at 1 and 2 threads; a wrong im2col copy or kernel is
# caught. Exit 77 without oneDNN.
#   test_conv_ref.sh AUTOSCHED_MEASURE CC SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args M CC SRC
scratch convref
fast=(--warmup 0 --min-time 0 --reps 1,1 --types f32,f32,f32)

# conv GEOMETRY SHAPE [EXTRA...]: one reference run, its JSON line in T/out.
conv() {
	local g=$1 s=$2
	shift 2
	nolsan timeout 60 "$M" --ref onednn --conv "$g" --shape "$s" "${fast[@]}" \
	    --verify 1 "$@" > "$T/out" 2> "$T/err"
}
conv nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 1x64x8x36
rc=$?
if [ "$rc" -ne 0 ] && grep -q "not installed\|only its reference" "$T/err"; then
	echo "SKIP: $(cat "$T/err")"
	exit 77
fi

# ok NAME GEOMETRY SHAPE: oneDNN's conv ran, and the direct loop agrees.
ok() {
	conv "$2" "$3"
	check "$1: exit 0" eq "$?" 0
	check "$1: status ok" grep -q '"status":"ok"' "$T/out"
	check "$1: verified" grep -q '"verified":1' "$T/out"
	check "$1: exactly" grep -q '"max_err":0' "$T/out"
	check "$1: by the direct loop" grep -qF \
	    '"checked_by":"exact:direct conv loop(dense data)"' "$T/out"
	check "$1: oneDNN's conv" grep -q '"ref_routine":"onednn:conv_' "$T/out"
	check "$1: timed" grep -q '"median_ms"' "$T/out"
}
ok "3x3 pad 1" nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 1x64x8x36
ok "7x7 stride 2 pad 3" nhwc:1,16,16,3,8,7,7,2,2,1,1,3,3,3,3 1x64x8x147
ok "1x1 stride 2" nhwc:1,8,8,16,8,1,1,2,2,1,1,0,0,0,0 1x16x8x16
ok "uneven pad, stride 2x1" nhwc:1,9,7,4,5,3,3,2,1,1,1,0,1,1,0 1x24x5x36
ok "dilation 2" nhwc:2,10,10,3,4,3,3,1,1,2,2,2,2,2,2 1x200x4x27
ok "nchw 3x3" nchw:1,6,6,4,8,3,3,1,1,1,1,1,1,1,1 1x8x36x36
conv nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 1x64x8x36
check "the routine names the layout" grep -q 'onednn:conv_nhwc_hwcf_f32' \
    "$T/out"

# A wrong output (one element off, test-only) is caught.
conv nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 1x64x8x36 --fault wrong
check "wrong: status wrong" grep -q '"status":"wrong"' "$T/out"
check "wrong: by 1" grep -q '"max_err":1' "$T/out"

# Malformed geometry, or --conv on a kernel or a BLAS run: exit 2.
for g in nhwc:1,8,8 hwcn:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 \
    nhwc:1,8,8,4,8,3,3,0,1,1,1,1,1,1,1 nhwc:1,2,2,4,8,5,5,1,1,1,1,0,0,0,0 \
    nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1,9; do
	conv "$g" 1x64x8x36
	check "--conv $g: exit 2" eq "$?" 2
	check "--conv $g: says so" grep -q "autosched-measure: --conv:" "$T/err"
done
nolsan timeout 10 "$M" --ref openblas --conv nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 \
    --shape 1x64x8x36 "${fast[@]}" > "$T/out" 2> "$T/err"
check "--ref openblas --conv: exit 2" eq "$?" 2

# kernel NAME GEOMETRY B M N K: the GEMM's right kernel with --conv (and
# the options in the array extra).
kernel() {
	local name=$1 g=$2 b=$3 m=$4 n=$5 k=$6 so="$T/k_$4x$5x$6.so"
	"$CC" -O2 -shared -fPIC -o "$so" "$SRC/tests/backends/mutant_kernel.c" \
	    -DB="$b" -DM="$m" -DN="$n" -DK="$k" -DTA=0 -DTB=0 -DLT=0 -DRT=0 \
	    -DAT=0 -lm
	nolsan timeout 60 "$M" --kernel "$so" --conv "$g" \
	    --shape "${b}x${m}x${n}x${k}" "${fast[@]}" --verify 1 "${extra[@]}" \
	    > "$T/out" 2> "$T/err"
	check "kernel $name: exit 0" eq "$?" 0
	check "kernel $name: status ok" grep -q '"status":"ok"' "$T/out"
	check "kernel $name: checked as the conv through the im2col" grep -qF \
	    '+direct conv loop(im2col)"' "$T/out"
	check "kernel $name: timed with the im2col" grep -q '"with_im2col":true' \
	    "$T/out"
}
extra=()
kernel "3x3 pad 1" nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 1 64 8 36
kernel "7x7 stride 2 pad 3/2" nhwc:1,16,16,3,8,7,7,2,2,1,1,3,2,3,2 1 64 8 147
kernel "uneven pad, stride 2x1" nhwc:1,9,7,4,5,3,3,2,1,1,1,0,1,1,0 1 24 5 36
kernel "dilation 2, batch 2" nhwc:2,10,10,3,4,3,3,1,1,2,2,2,2,2,2 1 200 4 27
kernel "nchw 3x3" nchw:1,6,6,4,8,3,3,1,1,1,1,1,1,1,1 1 8 36 36
kernel "nchw 1x1 stride 2" nchw:1,8,8,4,8,1,1,2,2,1,1,0,0,0,0 1 8 16 4
# im2cols large enough to be split: copied on 2 threads, checked the same.
extra=(--threads 2)
kernel "7x7 stride 2, 2 threads" nhwc:1,32,32,3,8,7,7,2,2,1,1,3,2,3,2 \
    1 256 8 147
kernel "nchw 7x7 stride 2, 2 threads" nchw:1,32,32,3,8,7,7,2,2,1,1,3,2,3,2 \
    1 8 256 147
extra=()
# A copy that reads each window a row off (test-only --fault im2col): the
# GEMM's checks pass, the check as the conv catches it. A wrong kernel
# (--fault wrong) is caught by the GEMM's check first.
for f in im2col wrong; do
	nolsan timeout 60 "$M" --kernel "$T/k_64x8x36.so" --conv \
	    nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 --shape 1x64x8x36 "${fast[@]}" \
	    --verify 1 --fault "$f" > "$T/out.$f" 2> "$T/err"
	check "--fault $f: exit 0" eq "$?" 0
	check "--fault $f: status wrong" grep -q '"status":"wrong"' "$T/out.$f"
	check "--fault $f: not timed" grep -q '"reps":0' "$T/out.$f"
done
check "--fault im2col: caught as the conv" grep -qF \
    '+direct conv loop(im2col)"' "$T/out.im2col"
# And on 2 threads, where the copy is split.
nolsan timeout 60 "$M" --kernel "$T/k_256x8x147.so" --conv \
    nhwc:1,32,32,3,8,7,7,2,2,1,1,3,2,3,2 --shape 1x256x8x147 "${fast[@]}" \
    --verify 1 --threads 2 --fault im2col > "$T/out" 2> "$T/err"
check "--fault im2col, 2 threads: status wrong" grep -q '"status":"wrong"' \
    "$T/out"
check "--fault im2col, 2 threads: caught as the conv" grep -qF \
    '+direct conv loop(im2col)"' "$T/out"
check "--fault wrong: caught as the GEMM" bash -c \
    "! grep -q 'conv loop' '$T/out.wrong'"
# A kernel whose shape is not the conv's GEMM is refused.
nolsan timeout 10 "$M" --kernel "$T/k_64x8x36.so" --conv \
    nhwc:1,8,8,4,8,3,3,2,2,1,1,1,1,1,1 --shape 1x64x8x36 "${fast[@]}" \
    > "$T/out" 2> "$T/err"
check "kernel of another shape: exit 2" eq "$?" 2
check "kernel of another shape: says so" grep -q "must be the conv's f32 GEMM" \
    "$T/err"

echo "conv_ref: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
