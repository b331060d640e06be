#!/bin/sh
# `autosched build` at model scale: build a model untuned RUNS times and
# print, per run, the wall and CPU time of the whole build and the wall time
# autosched gives each step (outline, mlir-opt, mlir-translate, split,
# clang, link); then open the library with RTLD_NOW, list what it links and
# calls, and time one call of its function (median over MIN_TIME seconds).
#
#   bench/build_time.sh [MODEL.mlir]
# Default MODEL: MobileBERT (/work/shared/models). A function named @main,
# which a library cannot export, is renamed @model. Environment: BUILD
# (build tree, default build; built if missing), RUNS (2), MIN_TIME
# (seconds of calls, 5; 0: no call), CPU (the CPU the calls run on, 0).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
model=${1:-/work/shared/models/mobilebert_squad_f32_linalg.mlir}
runs=${RUNS:-2}
min_time=${MIN_TIME:-5}
cpu=${CPU:-0}
bench_build bench/bench_program_time
bench_work build_time
sed 's/func\.func @main(/func.func @model(/' "$model" > "$work/model.mlir"
echo "model: $model ($(grep -c 'linalg\.matmul' "$work/model.mlir") linalg.matmul, $(nproc) CPUs)"

i=1
while [ "$i" -le "$runs" ]; do
	start=$(date +%s.%N)
	deadline 3600 /usr/bin/time -f "%U %S" -o "$work/cpu" "$AS" build "$work/model.mlir" \
	    --untuned -o "$work/model.so" 2> "$work/err" || {
		cat "$work/err" >&2
		exit 1
	}
	end=$(date +%s.%N)
	steps=$(sed -n 's/.*at a time; seconds: //p' "$work/err")
	pieces=$(sed -n 's/.*model.so: \(.*\), [0-9]* at a time.*/\1/p' "$work/err")
	awk -v i="$i" -v s="$start" -v e="$end" -v c="$(cat "$work/cpu")" \
	    -v steps="$steps" -v pieces="$pieces" 'BEGIN {
		split(c, t, " ")
		printf "run %d: %.1f s wall, %.1f s CPU (user+sys, all tools); %s\n", i, e - s, t[1] + t[2], pieces
		printf "       steps (s, wall): %s\n", steps
	}'
	i=$((i + 1))
done

python3 - "$work/model.so" <<'PY'
import ctypes, os, sys
ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW | os.RTLD_LOCAL)
print("library: opens with RTLD_NOW;", os.path.getsize(sys.argv[1]) // 1024, "KiB")
PY
echo "  needs: $(readelf -d "$work/model.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "  calls: $(nm -u "$work/model.so" | awk '$1 == "U" {sub(/@.*/, "", $2); print $2}' | tr '\n' ' ')"
echo "  exports: $(nm -D --defined-only "$work/model.so" | awk '{print $3}' | tr '\n' ' ')"
[ "$min_time" = 0 ] && exit 0

# The model's function and its tensor types, results first.
python3 - "$work/model.mlir" > "$work/sig" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"\s*func\.func @(\w+)\((.*)", line)
    if not m:
        continue
    rest = m.group(2)
    while re.search(r"\{[^{}]*\}", rest):
        rest = re.sub(r"\{[^{}]*\}", "", rest)
    args, _, res = rest.partition("->")
    ty = re.compile(r"tensor<([0-9x]+x[a-z0-9]+)>")
    r, a = ty.findall(res), ty.findall(args)
    print(m.group(1), len(r), " ".join(r + a))
    break
PY
read -r fn nres types < "$work/sig"
set -- $types
if [ $(($# - nres)) -gt 8 ]; then
	echo "one call of @$fn: not timed ($(($# - nres)) arguments; bench_program_time passes at most 8)"
	exit 0
fi
ms=$(deadline 600 taskset -c "$cpu" "$build/bench/bench_program_time" "$work/model.so" "$fn" \
    "$min_time" "$nres" $types)
echo "one call of @$fn (1 thread, CPU $cpu, zero inputs): $ms ms (median)"
