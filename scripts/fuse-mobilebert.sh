#!/usr/bin/env bash
# MobileBERT built with epilogue fusion and without (autosched build
# --fuse on|off; OPT=rest-fuse: with the elementwise chains fused and
# without, --rest-fuse on|off), both called on the same inputs (compare_fuse: token,
# segment and mask ids of 0 and 1), their two results compared bit for bit.
# Builds take minutes each on two CPUs, so this is a script, not a ctest.
#   scripts/fuse-mobilebert.sh [MODEL.mlir]
# Environment: BUILD (build tree, default build), DB (a store to build
# tuned from; default: untuned, the backend's default schedules), TOL (0:
# bit for bit, the default; else the relative bound compare_fuse takes),
# OPT (the option built on and off: fuse, the default, or rest-fuse).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deadline.sh"
model=${1:-$top/../shared/models/mobilebert_squad_f32_linalg.mlir}
build=${BUILD:-$top/build}
AS=$build/daemon/autosched
CMP=$build/tests/export/export_compare_fuse
work=$(mktemp -d /tmp/autosched-fuse-mobilebert-XXXXXX)
trap 'rm -rf "$work"' EXIT
# A function named main would clash with the caller's own main: renamed.
sed -e 's/func\.func @main(/func.func @model_main(/' \
    -e 's/call @main(/call @model_main(/' "$model" > "$work/model.mlir"
how=(--untuned)
[ -n "${DB:-}" ] && how=(--db "$DB")
for f in on off; do
	deadline 1800 "$AS" build "$work/model.mlir" "${how[@]}" --"${OPT:-fuse}" "$f" \
	    -o "$work/$f.so" 2> "$work/err_$f" || { cat "$work/err_$f" >&2; exit 1; }
	grep -E 'dispatch|fused|fusion' "$work/err_$f"
done
# model_main(word ids, segment ids, mask: 1x384xi32) -> (end, start: 1x384xf32)
deadline 300 "$CMP" "$work/off.so" "$work/on.so" model_main "${TOL:-0}" 2 \
    1x384xf32 1x384xf32 1x384xi32 1x384xi32 1x384xi32
echo "fuse-mobilebert: --${OPT:-fuse} on = off"
