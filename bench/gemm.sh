#!/bin/sh
# The GEMM benchmark: tune the f32 ops of bench/gemm/gemm.mlir and the
# mixed-precision ops of bench/gemm/mixed.mlir on this CPU with the mlir-cpu
# backend, from its default space (XGBoost, TRIALS trials per op), once at
# 1 thread and once at 2, then print per op and thread count the best
# found against the untuned default, and against the peers — OpenBLAS,
# oneDNN, BLIS, this CPU's FMA peak — measured side by side with the best
# kernel, interleaved (bench/gemm_tables.py).
#
# Sets: gemm (f32 squares and projections), mixed (int8, bf16, f16),
# models (the real models' shapes: DeepSeek decode M = 1 and a 40-token
# prefill, MobileBERT; against the roofline limit too: peak or bandwidth),
# iree (gemm's f32 ops compiled by IREE, tuned through backend = iree: IREE's
# default codegen and IREE tuned, side by side with autosched's own kernels
# of the gemm set, oneDNN and OpenBLAS; skipped, said, without IREE's tools).
# Environment: BUILD (build tree, default build; built if missing),
# CPUS (CPU list to measure on, default 0,1; one CPU: 1 thread only),
# TRIALS (trials per op, default 64), SETS (default "gemm mixed models
# iree"), IREE_BUDGET (the iree set's time_budget per thread count, default
# 40m: an IREE candidate compiles in seconds), DB (store, default a fresh
# one in a temporary folder; reusing one resumes), ISA (avx2: the
# candidates built for AVX2 — the cfgs' [Env] isa — and the peers on their
# AVX2 code: OpenBLAS's Haswell kernels, oneDNN capped at AVX2, BLIS's
# haswell sub-config, the FMA peak in ymm; on an AVX-512 host this emulates
# the ISA, not an AVX2 CPU's microarchitecture; the iree set, which IREE
# compiles for this CPU, is skipped), BENCH_DIR (the folder of the sets'
# SET.cfg and programs, default bench/gemm; bench/conv.sh names bench/conv,
# whose ops are convolutions: their peer is oneDNN's convolution of the
# same geometry).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
if [ -z "${CPUS:-}" ] && [ "$(nproc)" -ge 2 ]; then cpus=0,1; else cpus=${CPUS:-0}; fi
trials=${TRIALS:-64}
sets=${SETS:-gemm mixed models iree}
dir=${BENCH_DIR:-$top/bench/gemm}
# backend = iree finds its tools on PATH, else in the venv scripts/deps.sh
# makes; the iree rows run the job's modules again with the same runtime.
. "$top/toolchain.env"
venv=${AUTOSCHED_IREE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/autosched/iree-$IREE_VERSION}
IREE_BENCHMARK=$(command -v iree-benchmark-module || echo "$venv/bin/iree-benchmark-module")
export IREE_BENCHMARK
case " $sets " in *" iree "*)
	if [ ! -x "$IREE_BENCHMARK" ]; then
		echo "gemm.sh: IREE's tools missing (bash scripts/iree-deps.sh installs them): the iree set is skipped" >&2
		sets=$(echo " $sets " | sed 's/ iree / /')
	fi ;;
esac
case $trials in ''|*[!0-9]*) echo "gemm.sh: TRIALS must be a number" >&2; exit 2 ;; esac
# peers: what the peers' environment gets (OpenBLAS, oneDNN, BLIS read it
# when they load); isa: the cfgs' [Env] line.
peers="" isa=""
case ${ISA:-} in
'') ;;
avx2)
	# libblis 0.9 takes BLIS_ARCH_TYPE as its arch_t number only
	# (3 = haswell; a name is ignored without a word).
	peers="OPENBLAS_CORETYPE=Haswell ONEDNN_MAX_CPU_ISA=AVX2 BLIS_ARCH_TYPE=3 AUTOSCHED_ISA=avx2"
	isa="isa = avx2"
	if ! grep -qw avx2 /proc/cpuinfo; then
		echo "gemm.sh: ISA=avx2 on a CPU without AVX2" >&2
		exit 2
	fi
	case " $sets " in *" iree "*)
		echo "gemm.sh: ISA=avx2: the iree set (IREE compiles for this CPU's ISA) is skipped" >&2
		sets=$(echo " $sets " | sed 's/ iree / /')
	esac ;;
*) echo "gemm.sh: ISA must be avx2 or unset" >&2; exit 2 ;;
esac
bench_build
bench_work gemm
db=${DB:-$work/gemm.db}
cp "$dir"/*.mlir "$work/"
first=${cpus%%,*}
case $cpus in *,*) counts="1 2" ;; *) counts=1 ;; esac

# OpenBLAS picks its kernels and blocking from these; the comparison is
# against what it does on this CPU by itself, so only our commands drop them.
for t in $counts; do
	if [ "$t" = 1 ]; then c=$first; else c=$cpus; fi
	for s in $sets; do
		sed -e "s/^threads = .*/threads = [$t]/" \
		    -e "s/^\[Env\]\$/[Env]${isa:+\\n$isa}/" \
		    -e "s/^n_trial = .*/n_trial = $trials/" \
		    -e "s/^time_budget = .*/time_budget = ${IREE_BUDGET:-40m}/" \
		    "$dir/$s.cfg" >"$work/$s-$t.cfg"
		# deadline (a shell function) runs env, which runs the program.
		deadline "${RUN_DEADLINE:-14400}" env -u OPENBLAS_CORETYPE \
		    -u OPENBLAS_L2_SIZE -u AUTOSCHED_ISA AUTOSCHED_WORK="$work/cache" \
		    "$build/daemon/autosched" run "$work/$s-$t.cfg" --db "$db" \
		    --cpus "$c" --quiet --json >"$work/$s-$t.json" || {
			echo "gemm.sh: autosched run $s at $t thread(s) failed (exit $?)" >&2
			exit 1
		}
	done
done
# Under ISA, only the peers' cap is set: the kernels were built for it.
deadline "${TABLES_DEADLINE:-7200}" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    -u AUTOSCHED_ISA $peers AUTOSCHED="$build/daemon/autosched" \
    python3 "$top/bench/gemm_tables.py" \
    "$work" "$build/backends/mlir-cpu/autosched-measure" "$cpus" "$sets" "$db"
