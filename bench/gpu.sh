#!/bin/bash
# bench/gpu.sh: the issue-33 GPU bench, compiled here and measured on a GPU
# host. Stages, for the five ops below, IREE's own config and a fixed-seed
# sample of the iree backend's CUDA space (compiled by autosched-gpu-stage
# through the backend's own rules, compile and ptxas checks), and writes a
# self-contained payload: the PTX and vmfb of each, the harness
# autosched-gpu-measure, IREE's runtime tools, run.sh and table.py.
#
#   bench/gpu.sh PAYLOAD_DIR            (ARCH=sm_90a SAMPLE=24 SEED=1 JOBS=2)
#   SAMPLE=all: the whole default space of each op (the sweep: what compiles,
#   what each rule refuses, what fails anyway; about a second a compile)
#   then on the GPU host:  bash PAYLOAD_DIR/run.sh   (results in $OUT)
#
# The compile cache is kept in $WORK (default ~/.cache/autosched/gpu-stage),
# so a second call only stages.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
P=${1:?usage: bench/gpu.sh PAYLOAD_DIR}
ARCH=${ARCH:-sm_90a} SAMPLE=${SAMPLE:-24} SEED=${SEED:-1} JOBS=${JOBS:-2}
[ "$SAMPLE" = all ] && SAMPLE=100000
BUILD=${BUILD:-$top/build}
WORK=${WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/autosched/gpu-stage}
STAGE=$BUILD/bench/autosched-gpu-stage
MEASURE=$BUILD/measure/autosched-gpu-measure
RT=${IREE_RUNTIME_LIBS:-$(ls -d "$HOME"/.cache/autosched/iree-3.13.0/lib/python3*/site-packages/iree/_runtime_libs 2> /dev/null | head -1)}
for f in "$STAGE" "$MEASURE" "$RT/iree-benchmark-module" "$RT/iree-run-module"; do
  [ -x "$f" ] || { echo "bench/gpu.sh: $f missing (scripts/build.sh release; scripts/deps.sh)" >&2; exit 2; }
done
# name M,N,K,TYPE: the issue's five ops
OPS="f16f32_4096 4096,4096,4096,f16f32
f16f32_3456x1024x2048 3456,1024,2048,f16f32
bf16f32_4096 4096,4096,4096,bf16f32
f16_2048 2048,2048,2048,f16
f32_2048 2048,2048,2048,f32"

# Hand picks beside the drawn sample (named pick_*): the study's compiled
# shapes (tile, warp tile, promote) and SIMT tiles for f32.
PICKS=${PICKS-"128,128,32,64,64,1;128,256,32,64,64,1;256,128,32,64,64,1;128,128,64,64,64,1;128,256,64,64,64,1;128,128,32,32,64,1;64,64,64,32,32,1;64,64,16,4,4,0;128,128,16,8,8,0;128,64,16,4,8,0"}
rm -rf "$P"
mkdir -p "$P/bin" "$P/ops" "$WORK"
start=$SECONDS
stage() {
  timeout "${STAGE_TIMEOUT:-7200}" nice "$STAGE" --arch "$ARCH" --op "$2" --sample "$SAMPLE" --seed "$SEED" \
      --out "$P/ops/$1" --work "$WORK" --timeout 120 --extra "$PICKS" || echo "bench/gpu.sh: staging $1 failed" >&2
}
while read -r name spec; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  stage "$name" "$spec" &
done <<< "$OPS"
wait
cp "$MEASURE" "$RT/iree-benchmark-module" "$RT/iree-run-module" "$P/bin/"
cp "$top/bench/gpu/run.sh" "$top/bench/gpu/table.py" "$P/"
echo "== staged in $((SECONDS - start)) s for $ARCH (sample $SAMPLE, seed $SEED): what compiled, what each rule refused"
for d in "$P"/ops/*/; do
  awk -F'\t' -v op="$(basename "$d")" '!/^#/ {
      n++; if ($2 == "compiled") ok++
      else { why = $4; sub(/:.*/, "", why); if ($2 != "compile_failed" || why !~ /^refused/) why = $2 ": " substr($4, 1, 60)
             else { r = $4; sub(/^refused: /, "", r); sub(/:.*/, "", r); why = r } ; c[why]++ } }
    END { printf "%-24s %3d drawn, %3d compiled", op, n, ok; for (w in c) printf "; %s %d", w, c[w]; printf "\n" }' "$d/manifest.tsv"
done
du -sh "$P" | awk '{ print "payload " $1 }'
