#!/usr/bin/env bash
# backend = iree end to end on a small f32 matmul, with IREE's own tools:
# a run records verified trials and a best config (IREE's default made to
# fail to compile, so that the best is a tuned config whatever the timings);
# every outcome is a recorded trial (a compile failure, a wrong result, a
# hang); the baseline is IREE's own config; the exported spec makes
# iree-compile compile the tuned op with the tuned lowering_config while a
# transposed look-alike keeps IREE's default; the annotated program compiles
# with iree-compile as it is; the tools missing is a clear error, exit 2,
# nothing written. Exit 77 when IREE cannot be installed here.
#   test_iree.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
FIX=$SRC/tests/backends/fixtures
scratch iree

# IREE's tools: PATH, else the venv scripts/iree-deps.sh installs (it does
# so now when they are missing).
if command -v iree-compile > /dev/null && command -v iree-benchmark-module > /dev/null &&
    command -v iree-run-module > /dev/null; then
	IREE_BIN=$(dirname "$(command -v iree-compile)")
elif ! IREE_BIN=$(bash "$SRC/scripts/iree-deps.sh" 2> "$T/deps.txt"); then
	echo "skipped: IREE's tools cannot be installed here: $(tail -n 1 "$T/deps.txt")"
	exit 77
fi
IC=$IREE_BIN/iree-compile

# A cfg in folder $1 for fixture $2, its [Env] extra lines from stdin.
mkcfg() {
	local env

	mkdir -p "$1"
	cp "$FIX/$2" "$1/"
	env=$(printf 'backend = iree\n'; cat)
	MIN_TIME=0.01 grid_cfg "$2" 2 20 "$env" > "$1/a.cfg" <<C
$(space tile_m=16,32 tile_n=48 tile_k=32 vector_m=4 vector_n=16 vector_k=1 threads=1)
C
}

# The lowering_config iree-compile gave the dispatch of function $3 of
# program $2, compiled with the extra flags after it, dumped into $1.
compiled_config() {
	local dir=$1 prog=$2 fn=$3
	shift 3
	rm -rf "$dir"
	deadline 120 "$IC" "$prog" --iree-hal-target-device=local \
	    --iree-hal-local-target-device-backends=llvm-cpu \
	    --iree-llvmcpu-target-cpu=host \
	    --iree-hal-dump-executable-configurations-to="$dir" "$@" \
	    -o "$dir.vmfb" 2> "$dir.err" || { cat "$dir.err" >&2; return 1; }
	grep -ho 'lowering_config = #iree_cpu.lowering_config<[^>]*>' \
	    "$dir"/*"_${fn}_"*.mlir
}

# 1. The tools missing: exit 2 naming the install, nothing written.
mkcfg "$T/none" iree_program.mlir <<'C'
iree_bin = /nonexistent/iree/tools
C
"$AS" run "$T/none/a.cfg" --db "$T/none/s.db" > "$T/none/out.txt" 2>&1
check "iree_bin pointing nowhere: exit 2" eq "$?" 2
check "... names how to install the tools" grep -q 'scripts/deps.sh' "$T/none/out.txt"
check "... names the file and iree_bin" grep -q 'a.cfg: backend iree: .*iree_bin = /nonexistent/iree/tools' "$T/none/out.txt"
check "... nothing written" eq "$(ls "$T/none" | grep -c 's.db')" 0
mkcfg "$T/none2" iree_program.mlir < /dev/null
env PATH=/usr/bin:/bin HOME="$T/nohome" AUTOSCHED_IREE_VENV="$T/novenv" \
    "$AS" run "$T/none2/a.cfg" --db "$T/none2/s.db" > "$T/none2/out.txt" 2>&1
check "no tools on PATH nor in the venv: exit 2" eq "$?" 2
check "... names how to install them" grep -q 'install IREE .* scripts/deps.sh' "$T/none2/out.txt"
check "... nothing written" eq "$(ls "$T/none2" | grep -c 's.db')" 0
"$AS" --version > "$T/version.txt"
check "--version names the IREE found" grep -q '^IREE [0-9]' "$T/version.txt"

# 2. A run: IREE's default made to fail, the tuned configs verified.
mkcfg "$T/run" iree_program.mlir <<C
iree_bin = $IREE_BIN
C
AUTOSCHED_TEST_FAULT=compile_fail:tile_0x0x0 "$AS" run "$T/run/a.cfg" \
    --db "$T/run/s.db" --quiet > "$T/run/out.txt" 2>&1
check "run with backend = iree: exit 0" eq "$?" 0 || cat "$T/run/out.txt" >&2
DB=$T/run/s.db
check "two tune trials, verified exactly" eq "$(q "$DB" "select count(*) from trials where phase = 'tune' and status in ('ok', 'unstable') and verified = 1 and checked_by like 'exact:openblas-%'")" 2
check "the failed default is a recorded trial" ge "$(q "$DB" "select count(*) from trials where config_name = 'tile_0x0x0_vec_0x0x0_thr_1' and status = 'compile_failed' and error like '%iree-compile%'")" 1
check "the target is IREE's" eq "$(q "$DB" "select count(*) from targets where backend = 'iree' and toolchain like 'iree-compile %autosched iree v1'")" 1
"$AS" best --db "$DB" --format json > "$T/best.json"
best=$(python3 -c '
import json, sys
b = json.load(open(sys.argv[1])); b = b[0] if isinstance(b, list) else b
k = b["knobs"] if "knobs" in b else b
print("%d %d %d" % (k["tile_m"], k["tile_n"], k["tile_k"]))' "$T/best.json")
check "a tuned best config" grep -q '^\(16\|32\) 48 32$' <(echo "$best")

# 3. The spec, inside IREE: the tuned op gets the tuned config, the
# transposed look-alike keeps IREE's default.
"$AS" export --db "$DB" --format iree-spec -o "$T/spec.mlir"
check "export iree-spec: exit 0" eq "$?" 0
check "spec: IREE's contraction matcher" grep -q 'transform.iree.match.contraction' "$T/spec.mlir"
set -- $best
want="cache_parallel = \[$1, $2, 0\], cache_reduction = \[0, 0, $3\], distribution = \[$1, $2, 0\], vector_common_parallel = \[4, 16, 0\], vector_reduction = \[0, 0, 1\]"
cp "$FIX/iree_lookalike.mlir" "$T/prog.mlir"
got=$(compiled_config "$T/spec_dump" "$T/prog.mlir" layer \
    --mlir-disable-threading --iree-codegen-tuning-spec-path="$T/spec.mlir")
check "iree-compile with the spec: the tuned op has the tuned config" grep -q "$want" <(echo "$got")
dflt=$(compiled_config "$T/plain_dump" "$T/prog.mlir" lookalike)
got=$(compiled_config "$T/spec_dump" "$T/prog.mlir" lookalike \
    --mlir-disable-threading --iree-codegen-tuning-spec-path="$T/spec.mlir")
check "... the transposed look-alike keeps IREE's default" eq "$got" "$dflt"
check "... which is not the tuned config" test -n "$dflt" -a "$dflt" != "$want"
"$AS" export --db "$DB" --format iree-spec --iree-matcher upstream -o "$T/spec_up.mlir"
check "--iree-matcher upstream: upstream match ops only" eq "$(grep -c 'transform.iree.match' "$T/spec_up.mlir")" 0
"$AS" export --db "$DB" --format transform > /dev/null 2> "$T/tr.txt"
check "no transform library of IREE's codegen (exit 1, said)" grep -q 'export it with --format iree-spec' "$T/tr.txt"

# 4. The annotated program compiles with iree-compile as it is.
"$AS" annotate "$T/prog.mlir" --db "$DB" -o "$T/ann.mlir" 2> /dev/null
check "annotate: exit 0" eq "$?" 0
check "annotate: the tuned op alone" eq "$(grep -c 'compilation_info' "$T/ann.mlir")" 1
got=$(compiled_config "$T/ann_dump" "$T/ann.mlir" layer)
check "iree-compile compiles the annotated program with the tuned config" grep -q "$want" <(echo "$got")

# 5. Every outcome a trial: a wrong result and a hang, the job goes on;
# the baseline is IREE's own config, said on stderr.
for f in wrong:tile_16x48 hang:tile_32x48; do
	d=$T/${f%%:*}
	mkcfg "$d" iree_program.mlir <<C
iree_bin = $IREE_BIN
C
	sed -i 's/^timeout = 20/timeout = 5/' "$d/a.cfg"
	AUTOSCHED_TEST_FAULT=$f "$AS" run "$d/a.cfg" --db "$d/s.db" --quiet > "$d/out.txt" 2>&1
	check "$f: the job ends normally" eq "$?" 0 || cat "$d/out.txt" >&2
done
check "a wrong result is recorded" eq "$(q "$T/wrong/s.db" "select status from trials where phase = 'tune' and config_name like 'tile_16x48%'")" wrong_result
check "... with what the check saw" ge "$(q "$T/wrong/s.db" "select count(*) from trials where status = 'wrong_result' and error like 'wrong result: max error%exact:openblas%'")" 1
check "a hang is a recorded timeout" eq "$(q "$T/hang/s.db" "select status from trials where phase = 'tune' and config_name like 'tile_32x48%'")" timeout
check "the baseline is IREE's own config, verified" ge "$(q "$T/wrong/s.db" "select count(*) from trials where phase = 'baseline' and config_name = 'tile_0x0x0_vec_0x0x0_thr_1' and status in ('ok', 'unstable') and verified = 1")" 1
check "IREE's own config is said" grep -q "IREE's own config: lowering_config = #iree_cpu.lowering_config<" "$T/wrong/out.txt"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
