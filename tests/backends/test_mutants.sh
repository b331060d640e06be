#!/usr/bin/env bash
# Verification cannot be fooled: hand-written kernels with the mlir-cpu ABI
# (mutant_kernel.c), one right and several wrong (doing nothing, skipping a
# K tile, a row block, a column block, a batch; on odd shapes the last row,
# column or K step, as a kernel that lost its remainder would; accumulating
# in a type narrower than the op's, wholly or per K tile), for every element-type
# combination the backend accepts, at K = 1, short and long K, plain and with both
# operands transposed, compiled here and run through the real
# autosched-measure: the right one must verify, every mutant be "wrong".
# Then a kernel that sleeps during timed repetitions: the counters show the
# context switches and the disturbed repetitions are dropped and re-run.
# Last, the reference routines --ref chooses.
#   test_mutants.sh AUTOSCHED_MEASURE CC SOURCE_DIR
set -u
# Kernels of ours only: the harness refuses group- or other-writable ones.
umask 022
MEASURE=$1
CC=$2
SRC=$3
. "$SRC/tests/deadline.sh"
T=$(mktemp -d /tmp/autosched-mutants-XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
code() {	# type name -> mutant_kernel.c's number
	case $1 in f32) echo 0 ;; f64) echo 1 ;; f16) echo 2 ;; bf16) echo 3 ;;
	i8) echo 4 ;; u8) echo 5 ;; i32) echo 6 ;; esac
}
narrow() {	# narrow ACC K -> the narrowed-accumulation mutants of that accumulator
	case $1 in
	f64) echo acc_f32 tile_f32 ;;
	f32) echo acc_f16 acc_bf16 tile_f16 tile_bf16 ;;
	f16) echo acc_bf16 tile_bf16 ;;	# bf16: fewer significant bits
	bf16) ;;			# no narrower type to accumulate in
	# One i8 product fits i16: a K = 1 tile summed in i16 is right.
	i32) echo acc_i16 acc_i16sat; [ "$2" -ge 4 ] && echo tile_i16 tile_i16sat ;;
	esac
}
field() {	# field JSON KEY: a number or a string value of the one-line JSON
	local re="\"$2\":\"?([^,\"}]*)"
	[[ $1 =~ $re ]] && echo "${BASH_REMATCH[1]}" || echo null
}

# mutant_check WHAT MUTANT OUT: the harness's line OUT says ok for the
# right kernel, wrong for a mutant; counted in pass or fail.
mutant_check() {
	local st want=wrong

	st=$(field "$3" status)
	[ "$2" = right ] && want=ok
	if [ "$st" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $1 $2: got status=$st, want $want ($3)" >&2
	fi
}

B=2 M=12 N=24
for types in f32,f32,f32 f64,f64,f64 f16,f16,f16 f16,f16,f32 bf16,bf16,bf16 \
    bf16,bf16,f32 i8,i8,i32 u8,u8,i32 u8,i8,i32 i8,u8,i32; do
	IFS=, read -r lt rt at <<< "$types"
	# Which mutants: the structural ones (skipped work), the narrowed
	# accumulation, or both.
	for case in "1 1 1 narrow" "16 0 0 both" "32 1 1 narrow" "2048 0 0 both" \
	    "2048 1 1 structural"; do
		read -r K TA TB which <<< "$case"
		so=$T/k_${lt}_${rt}_${at}_${K}_${TA}${TB}.so
		if ! "$CC" -O2 -shared -fPIC -o "$so" "$SRC/tests/backends/mutant_kernel.c" \
		    -DB=$B -DM=$M -DN=$N -DK="$K" -DTA="$TA" -DTB="$TB" \
		    -DLT="$(code "$lt")" -DRT="$(code "$rt")" -DAT="$(code "$at")"; then
			fail=$((fail + 1))
			echo "FAIL: cannot compile the kernel for $types K=$K" >&2
			continue
		fi
		mutants=
		[ "$which" != narrow ] && mutants="nothing ktile rows cols batch"
		[ "$which" != structural ] && mutants="$mutants $(narrow "$at" "$K")"
		for mutant in right $mutants; do
			out=$(AUTOSCHED_MUTANT=$mutant "$MEASURE" --kernel "$so" \
			    --shape ${B}x${M}x${N}x"$K" --types "$types" \
			    --trans "$TA,$TB" --warmup 0 --min-time 0 --reps 1,1 \
			    --verify 1 2>&1 | tail -1)
			st=$(field "$out" status)
			ver=$(field "$out" verified)
			by=$(field "$out" checked_by)
			want=wrong
			[ $mutant = right ] && want=ok
			# The right one passed the wide-sum check too (bf16: none).
			if [ "$st" = "$want" ] && { [ $mutant != right ] || { [ "$ver" = 1 ] &&
			    { [ "$at" = bf16 ] || [[ $by == *"+closed-form(wide-sum data)" ]]; }; }; }; then
				pass=$((pass + 1))
			else
				fail=$((fail + 1))
				echo "FAIL: $types K=$K trans=$TA,$TB $mutant: got status=$st verified=$ver, want $want ($out)" >&2
			fi
		done
	done
done

# The remainders a schedule splits off (README "Remainders"): a kernel that
# skips the last row, the last column or the last K step of an odd shape
# (primes; M = 1 as in decode; K = 1) is "wrong", for every element type.
for types in f32,f32,f32 f64,f64,f64 f16,f16,f16 f16,f16,f32 bf16,bf16,bf16 \
    bf16,bf16,f32 i8,i8,i32 u8,u8,i32 u8,i8,i32 i8,u8,i32; do
	IFS=, read -r lt rt at <<< "$types"
	for shape in "1 13 17 29" "1 1 37 41" "3 5 7 1"; do
		read -r b m n k <<< "$shape"
		so=$T/r_${lt}_${rt}_${at}_${b}x${m}x${n}x${k}.so
		if ! "$CC" -O2 -shared -fPIC -o "$so" "$SRC/tests/backends/mutant_kernel.c" \
		    -DB="$b" -DM="$m" -DN="$n" -DK="$k" -DTA=0 -DTB=0 \
		    -DLT="$(code "$lt")" -DRT="$(code "$rt")" -DAT="$(code "$at")"; then
			fail=$((fail + 1))
			echo "FAIL: cannot compile the kernel for $types ${b}x${m}x${n}x${k}" >&2
			continue
		fi
		for mutant in right rowtail coltail ktail; do
			# M = 1: the last row is the only one (rowtail = nothing).
			out=$(AUTOSCHED_MUTANT=$mutant "$MEASURE" --kernel "$so" \
			    --shape "${b}x${m}x${n}x${k}" --types "$types" \
			    --trans 0,0 --warmup 0 --min-time 0 --reps 1,1 \
			    --verify 1 2>&1 | tail -1)
			mutant_check "$types ${b}x${m}x${n}x${k}" $mutant "$out"
		done
	done
done

# A quantized op (acc += (lhs - za)(rhs - zb)): the kernel that takes its zero
# points verifies; one that ignores either zero point, or both, is "wrong".
for types in i8,i8,i32; do
	for shape in "1 13 17 29" "2 1 4 300"; do
		read -r b m n k <<< "$shape"
		so=$T/q_${b}x${m}x${n}x${k}.so
		if ! "$CC" -O2 -shared -fPIC -o "$so" "$SRC/tests/backends/mutant_kernel.c" \
		    -DB="$b" -DM="$m" -DN="$n" -DK="$k" -DTA=0 -DTB=0 -DZP=1 \
		    -DLT=4 -DRT=4 -DAT=6; then
			fail=$((fail + 1))
			echo "FAIL: cannot compile the quantized kernel ${b}x${m}x${n}x${k}" >&2
			continue
		fi
		for mutant in right noza nozb nozp; do
			out=$(AUTOSCHED_MUTANT=$mutant "$MEASURE" --kernel "$so" \
			    --shape "${b}x${m}x${n}x${k}" --types "$types" \
			    --trans 0,0 --zero-points -7,5 --warmup 0 --min-time 0 \
			    --reps 1,1 --verify 1 2>&1 | tail -1)
			mutant_check "quantized ${b}x${m}x${n}x${k}" $mutant "$out"
		done
	done
done

# A kernel switched out during timed repetitions: counted and re-measured.
so=$T/k_f32_f32_f32_16_00.so
out=$(AUTOSCHED_MUTANT=sleep "$MEASURE" --kernel "$so" --shape ${B}x${M}x${N}x16 \
    --types f32,f32,f32 --trans 0,0 --warmup 1 --min-time 0.05 --reps 5,1000 \
    --verify 1 2>&1 | tail -1)
check_sleep() {
	python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
c = d["counters"]
ok = (d["status"] == "ok" and d["verified"] == 1 and d["reps_dropped"] >= 1
      and d["reps"] >= 5 and c["context_switches"] is not None
      and c["task_clock_ns"] is not None and c["task_clock_ns"] > 0
      and "checked_by" in d)
sys.exit(0 if ok else 1)
PY
}
if check_sleep; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL: sleeping kernel: want reps_dropped >= 1 and counters ($out)" >&2
fi

# The reference routines: --ref picks the library, the JSON says which and
# whether it is the op's precision; --blas is still --ref openblas.
ref() {	# ref WANT_ROUTINE_PREFIX WANT_SAME ARGS...
	local want=$1 same=$2 out r s
	shift 2
	# As the backend runs a reference: LeakSanitizer's tracer (sanitizer
	# builds) crashes while oneDNN's OpenMP threads are alive at exit.
	out=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	    "$MEASURE" --shape 1x32x48x64 --warmup 0 --min-time 0 --reps 1,1 "$@" 2>&1 | tail -1)
	r=$(field "$out" ref_routine)
	s=$(field "$out" ref_same_precision)
	if [[ $r == "$want"* ]] && [ "$s" = "$same" ] && [ "$(field "$out" status)" = ok ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: reference $*: got $r same=$s, want $want* same=$same ($out)" >&2
	fi
}
ref openblas:sgemm 1 --ref auto --types f32,f32,f32
ref openblas:dgemm 1 --ref auto --types f64,f64,f64 --trans 1,1
ref openblas:sgemm 1 --blas --types f32,f32,f32
ref openblas:sgemm 0 --ref openblas --types bf16,bf16,f32
ref onednn:matmul_f32f32f32 1 --ref onednn --types f32,f32,f32 --trans 0,1
ref onednn:matmul_s8s8s32 1 --ref auto --types i8,i8,i32 --trans 1,0
ref onednn:matmul_u8s8s32 1 --ref auto --types u8,i8,i32
ref onednn:matmul_u8s8s32 0 --ref auto --types u8,u8,i32
ref blis:sgemm 1 --ref blis --types f32,f32,f32 --trans 1,0
ref blis:dgemm 1 --ref blis --types f64,f64,f64 --trans 0,1
# The FMA peak probe: a figure, from the widest FMA of this CPU.
out=$("$MEASURE" --peak --min-time 0 --reps 1,1 --warmup 0 2>&1 | tail -1)
if [[ $(field "$out" routine) == peak:fma-* ]] && python3 -c "import json,sys; sys.exit(0 if json.loads(sys.argv[1])['gflops'] > 0 else 1)" "$out"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL: --peak: $out" >&2
fi
# The memory bandwidth probe: a STREAM triad over arrays past the caches, at 1
# and 2 threads (the triad's result is checked by the harness itself).
for t in 1 2; do
	out=$("$MEASURE" --bandwidth --threads $t --min-time 0 --reps 1,1 --warmup 0 2>&1 | tail -1)
	if [ "$(field "$out" routine)" = stream:triad ] && python3 -c "import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d['gbytes_s'] > 0 and d['array_mib'] >= 64 and d['threads'] == int(sys.argv[2]) else 1)" "$out" $t; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: --bandwidth --threads $t: $out" >&2
	fi
done
out=$("$MEASURE" --ref onednn --shape 1x8x8x8 --types f64,f64,f64 2>&1)
rc=$?
if [ $rc -eq 2 ] && [[ $out == *"--ref onednn: oneDNN has no matmul for these types"* ]]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL: --ref onednn for f64: want exit 2 and why, got $rc: $out" >&2
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
