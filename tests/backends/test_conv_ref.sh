#!/usr/bin/env bash
# autosched-measure --conv: oneDNN's convolution as the reference of an op
# that came from a conv, checked exactly against the harness's direct loop
# on small-integer data, in both layouts, with strides, dilations and
# uneven padding; a wrong output is caught; a malformed --conv is refused.
# Exit 77 without oneDNN.
#   test_conv_ref.sh AUTOSCHED_MEASURE
set -u
M=$1
. "$(dirname "$0")/../checks.sh"
scratch convref
fast=(--warmup 0 --min-time 0 --reps 1,1 --types f32,f32,f32)

# conv GEOMETRY SHAPE [EXTRA...]: one reference run, its JSON line in T/out.
conv() {
	local g=$1 s=$2
	shift 2
	timeout 60 "$M" --ref onednn --conv "$g" --shape "$s" "${fast[@]}" \
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
ok "uneven pad, stride 2x1" nhwc:1,9,7,4,5,3,3,2,1,1,1,0,1,1,0 1x28x5x36
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
timeout 10 "$M" --ref openblas --conv nhwc:1,8,8,4,8,3,3,1,1,1,1,1,1,1,1 \
    --shape 1x64x8x36 "${fast[@]}" > "$T/out" 2> "$T/err"
check "--ref openblas --conv: exit 2" eq "$?" 2

echo "conv_ref: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
