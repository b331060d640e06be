#!/bin/sh
# The convolution benchmark: tune ResNet-50's 20 distinct convs
# (bench/conv/resnet50.mlir: f32, batch 1, 224x224; each tuned as the GEMM
# of its im2col) from a minimal cfg (bench/conv/resnet50.cfg) at 1 thread
# and at 2, then print per conv the best kernel against oneDNN's
# convolution of the same geometry, measured side by side in interleaved
# rounds. It is bench/gemm.sh (its runs, store and tables) on the sets of
# bench/conv.
# Environment: SETS=sample (five of the 20: the stem, a 1x1, a 3x3 at
# 56x56, a 1x1 stride 2, a 3x3 at 14x14), SETS=small (two small convs, 4
# trials each: a smoke check
# of about a minute whose numbers are not figures; default resnet50),
# TRIALS (trials per op, default 32; 4 for small), and what bench/gemm.sh
# reads (BUILD, CPUS, DB, RUN_DEADLINE, TABLES_DEADLINE).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sets=${SETS:-resnet50}
for s in $sets; do
	[ -f "$top/bench/conv/$s.cfg" ] || {
		echo "conv.sh: SETS: no set $s (resnet50, sample, small)" >&2
		exit 2
	}
done
case $sets in
small) trials=${TRIALS:-4}; run_s=${RUN_DEADLINE:-600}; tab_s=${TABLES_DEADLINE:-600} ;;
*) trials=${TRIALS:-32}; run_s=${RUN_DEADLINE:-28800}; tab_s=${TABLES_DEADLINE:-7200} ;;
esac
BENCH_DIR=$top/bench/conv SETS=$sets TRIALS=$trials RUN_DEADLINE=$run_s
TABLES_DEADLINE=$tab_s
export BENCH_DIR SETS TRIALS RUN_DEADLINE TABLES_DEADLINE
exec sh "$top/bench/gemm.sh"
