#!/usr/bin/env bash
# [Env] isa and AUTOSCHED_ISA: a cfg capped to avx2 compiles its kernels
# for AVX2 (no zmm register in the kernel's code, ymm ones), verifies them
# and records the target as avx2; the uncapped cfg on an AVX-512 host uses
# zmm (the check can fail); a bad value stops the run with exit 2, naming
# file, line and key, or the variable (a CPU without AVX-512 stood in for
# by AUTOSCHED_TEST_CPU_ISA). Exit 77 on a CPU without AVX2.
#   test_isa_cap.sh AUTOSCHED
. "$(dirname "$0")/../checks.sh"
args AS
scratch isacap

if ! grep -qw avx2 /proc/cpuinfo; then
	echo "SKIP: this CPU has no AVX2" >&2
	exit 77
fi
avx512=0
if grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo &&
    grep -qw avx512vl /proc/cpuinfo; then
	avx512=1
fi

# A cfg in folder $1 with [Env] line $2 ("" for none): one f32 op, the
# default config only.
mkcfg() {
	mkdir -p "$1"
	printf '[Env]\n%s\n[Problem]\nproblem_m = 96\nproblem_n = 64\nproblem_k = 128\n' "$2" > "$1/a.cfg"
	printf '[SearchSpace]\nthreads = [1]\n[SearchStrategy]\ntuner = grid\nn_trial = 1\n' >> "$1/a.cfg"
	printf '[Measure]\nmin_time = 0.01\nmin_reps = 3\nconfirm_top = 1\ntimeout = 20\n' >> "$1/a.cfg"
}

# The zmm and ymm operands in the code of every kernel.so under $1.
regs() {
	local so n_z=0 n_y=0
	for so in $(find "$1" -name kernel.so); do
		n_z=$((n_z + $(deadline 60 objdump -d --no-show-raw-insn "$so" | grep -c '%zmm')))
		n_y=$((n_y + $(deadline 60 objdump -d --no-show-raw-insn "$so" | grep -c '%ymm')))
	done
	echo "$n_z $n_y"
}

# 1. isa = avx2: verified, no zmm, the target says avx2.
mkcfg "$T/avx2" "isa = avx2"
AUTOSCHED_WORK=$T/avx2/work deadline 240 "$AS" run "$T/avx2/a.cfg" \
    --db "$T/avx2/s.db" > "$T/avx2/out.txt" 2>&1
check "avx2: run exits 0" eq "$?" 0
check "avx2: the tune trial verified" eq "$(q "$T/avx2/s.db" \
    "select count(*) from trials where phase='tune' and verified=1 and status in ('ok','unstable')")" 1
check "avx2: the target's flags say avx2, 16 registers of 32 bytes" eq \
    "$(q "$T/avx2/s.db" "select count(*) from targets where flags like 'isa=avx2/16x32B %'")" 1
check "avx2: no other target" eq "$(q "$T/avx2/s.db" "select count(*) from targets")" 1
check "avx2: a kernel was built" ge "$(find "$T/avx2/work" -name kernel.so | wc -l)" 1
set -- $(regs "$T/avx2/work")
check "avx2: no zmm register in the kernel" eq "$1" 0
check "avx2: ymm registers in the kernel" ge "$2" 1

# 2. Uncapped on an AVX-512 host: zmm (so the check above can tell).
if [ "$avx512" = 1 ]; then
	mkcfg "$T/auto" "isa = auto"
	AUTOSCHED_WORK=$T/auto/work deadline 240 "$AS" run "$T/auto/a.cfg" \
	    --db "$T/auto/s.db" > "$T/auto/out.txt" 2>&1
	check "auto: run exits 0" eq "$?" 0
	check "auto: the target says avx512" eq "$(q "$T/auto/s.db" \
	    "select count(*) from targets where flags like 'isa=avx512/32x64B %'")" 1
	set -- $(regs "$T/auto/work")
	check "auto on AVX-512: zmm registers in the kernel" ge "$1" 1
fi

# 3. Values refused: the cfg's file, line and key; the variable's name.
mkcfg "$T/bad" "isa = avx3"
deadline 60 "$AS" run "$T/bad/a.cfg" --db "$T/bad/s.db" > "$T/bad/out.txt" 2>&1
check "isa = avx3: exit 2" eq "$?" 2
check "isa = avx3: file, line, key, what was expected" grep -qF \
    "$T/bad/a.cfg:2: [Env] isa: 'avx3': not an ISA; expected auto, sse2, avx2" "$T/bad/out.txt"
check "isa = avx3: nothing written" test ! -e "$T/bad/s.db"
AUTOSCHED_ISA=bogus deadline 60 "$AS" run "$T/avx2/a.cfg" --db "$T/bad/s.db" \
    > "$T/bad/env.txt" 2>&1
check "AUTOSCHED_ISA=bogus: exit 2" eq "$?" 2
check "AUTOSCHED_ISA=bogus: the variable named" grep -qF \
    "autosched: AUTOSCHED_ISA: 'bogus': not an ISA; expected auto, sse2, avx2" "$T/bad/env.txt"
ASD=$(dirname "$AS")/autoschedd
if [ -x "$ASD" ]; then
	AUTOSCHED_ISA=bogus deadline 60 "$ASD" -n > "$T/bad/asd.txt" 2>&1
	check "autoschedd, AUTOSCHED_ISA=bogus: exit 2" eq "$?" 2
	check "autoschedd, AUTOSCHED_ISA=bogus: said" grep -qF \
	    "autoschedd: AUTOSCHED_ISA: 'bogus': not an ISA" "$T/bad/asd.txt"
fi
# Above the CPU's widest (the tests' stand-in for an AVX2 CPU on any host).
mkcfg "$T/above" "isa = avx512"
AUTOSCHED_TEST_CPU_ISA=avx2 deadline 60 "$AS" run "$T/above/a.cfg" \
    --db "$T/above/s.db" > "$T/above/out.txt" 2>&1
check "isa above the CPU's: exit 2" eq "$?" 2
check "isa above the CPU's: said" grep -qF \
    "$T/above/a.cfg:2: [Env] isa: 'avx512' is above this CPU's widest ISA (avx2); expected auto, sse2 or avx2" \
    "$T/above/out.txt"
AUTOSCHED_TEST_CPU_ISA=avx2 AUTOSCHED_ISA=avx512 deadline 60 "$AS" run \
    "$T/avx2/a.cfg" --db "$T/above/s.db" > "$T/above/env.txt" 2>&1
check "AUTOSCHED_ISA above the CPU's: exit 2" eq "$?" 2
check "AUTOSCHED_ISA above the CPU's: said" grep -qF \
    "autosched: AUTOSCHED_ISA: 'avx512' is above this CPU's widest ISA (avx2)" \
    "$T/above/env.txt"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
