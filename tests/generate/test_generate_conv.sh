#!/usr/bin/env bash
# `autosched generate --kind conv2d`: every conv of the sweep written as
# the profiler lays programs out and into one sweep.mlir; each read back by
# `autosched analyze --json` as the conv asked (its name, geometry, the
# matmul of its im2col); sweep.cfg reads; bad sweeps exit 2, nothing written.
#   test_generate_conv.sh AUTOSCHED
. "$(dirname "$0")/../checks.sh"
args AS
scratch generate-conv

deadline 60 "$AS" generate --kind conv2d --batch 1,2 --height 8 --width 6 \
    --channels 16 --filters 8 --filter 1,3 --stride 1,2 --padding 0,1 \
    --dtype f32,i8i32 -o "$T/g" > "$T/out.txt" 2>&1
check "generate conv2d exits 0" eq "$?" 0
check "generate: 32 programs (2 N x 2 filters x 2 strides x 2 paddings x 2 types)" \
    eq "$(ls "$T/g/linalg/conv2d" | wc -l)" 32
check "generate: it says what it wrote" grep -q "^32 programs, $T/g/sweep.mlir and $T/g/sweep.cfg written" "$T/out.txt"
# Every program read back: one conv, named as its folder, the geometry asked.
python3 - "$AS" "$T/g" <<'PY'
import json, os, subprocess, sys
AS, d = sys.argv[1:3]
root = os.path.join(d, 'linalg', 'conv2d')
bad = 0
for name in sorted(os.listdir(root)):
    js = json.loads(subprocess.run(['timeout', '60', AS, 'analyze', os.path.join(root, name, name + '.mlir'), '--json'],
                                   capture_output=True, text=True, check=True).stdout)
    o = js['ops'][0]
    c = o['conv']
    # conv_2d_nhwc_hwcf_NxHxWxC_KxKxCxF_sS_d1_pP_T
    parts = name.split('_')
    n, h, w, ch = map(int, parts[4].split('x'))
    kh, kw, _, f = map(int, parts[5].split('x'))
    s, p = int(parts[6][1:]), int(parts[8][1:])
    oh, ow = (h + 2 * p - kh) // s + 1, (w + 2 * p - kw) // s + 1
    want = dict(name=name, n=n, h=h, w=w, c=ch, f=f, kh=kh, kw=kw, oh=oh, ow=ow,
                stride=[s, s], dilation=[1, 1], padding=[p] * 4)
    if c != want or o['kind'] != 'matmul' or not o['tunable'] or \
       (o['m'], o['n'], o['k']) != (n * oh * ow, f, kh * kw * ch) or o['function'] != name:
        print(f'  {name}: read back {o}', file=sys.stderr)
        bad += 1
    if ('i8t' in name) != (o['lhs'] == 'i8' and o['acc'] == 'i32'):
        print(f'  {name}: types {o["lhs"]} {o["acc"]}', file=sys.stderr)
        bad += 1
sys.exit(bad != 0)
PY
check "every program reads back as the conv asked" eq "$?" 0
deadline 60 "$AS" analyze "$T/g/sweep.mlir" > "$T/an.txt" 2>&1
check "sweep.mlir: all 32 convs, tunable" grep -q '^32 ops, .*; 32 tunable' "$T/an.txt"
deadline 60 "$AS" space "$T/g/sweep.cfg" --count > "$T/space.txt" 2>&1
check "sweep.cfg reads (space --count exits 0)" eq "$?" 0

# Bad sweeps: exit 2, the reason, nothing written.
bad() {	# bad WHAT EXPECTED ARGS...
	local what=$1 want=$2
	shift 2
	deadline 60 "$AS" generate --kind conv2d -o "$T/bad" "$@" > /dev/null 2> "$T/err"
	check "$what: exit 2" eq "$?" 2
	check "$what: says why" grep -q -- "$want" "$T/err"
	check "$what: nothing written" [ ! -e "$T/bad" ]
}
bad "a filter larger than the input" "a 5x5 filter is larger than the smallest padded input (4x4)" \
    --height 4 --width 4 --channels 8 --filters 8 --filter 5
bad "no filter" "needs --height, --width, --channels, --filters and --filter" \
    --height 4 --width 4 --channels 8 --filters 8
bad "u8i32" "u8i32 is not a conv2d type" \
    --height 4 --width 4 --channels 8 --filters 8 --filter 1 --dtype u8i32
bad "problem-m with conv2d" "takes no problem_m" \
    --height 4 --width 4 --channels 8 --filters 8 --filter 1 --problem-m 4
bad "a stride of 0" "--stride 0: 0 is not positive" \
    --height 4 --width 4 --channels 8 --filters 8 --filter 1 --stride 0
bad "a negative padding" "--padding -1: -1 is below 0" \
    --height 4 --width 4 --channels 8 --filters 8 --filter 1 --padding -1
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
