#!/usr/bin/env bash
# The export forms checked by MLIR itself: a tiny tuning run fills a store,
# then the transform library transforms the tuned ops of a user's program
# and only them, the IREE spec annotates exactly the tuned ops (upstream
# mlir-opt runs its matchers), the annotated program re-parses with nothing
# else changed; bad input is refused with nothing written.
#   test_export.sh AUTOSCHED SOURCE_DIR MLIR_OPT CALL_PROGRAM
. "$(dirname "$0")/../checks.sh"
args AS SRC OPT CALL
FIX=$SRC/tests/export/fixtures
scratch export

# Lines of func @$2 in file $1 matching regex $3.
count_in() { awk -v fn="@$2(" -v re="$3" '/func.func/{on = index($0, fn) > 0} on && $0 ~ re {n++} END {print n + 0}' "$1"; }

# A store with best configs for tuned.mlir's two ops (a few seconds).
cp "$FIX/program.mlir" "$T/"
tuned_store "$AS" "$T" "$FIX" "output_file = out.csv"
P=$T/program.mlir

# 1. The transform library, on the program as written.
"$AS" export --db "$T/s.db" --format transform -o "$T/lib.mlir"
check "export transform exits 0" eq "$?" 0
check "library: @__transform_main with foreach_match" grep -q 'transform.foreach_match in %root' "$T/lib.mlir"
deadline 120 "$OPT" "$P" --transform-preload-library=transform-library-paths="$T/lib.mlir" \
    --transform-interpreter -o "$T/lib_out.mlir" 2> "$T/lib_err.txt"
check "mlir-opt applies the library" eq "$?" 0
check "tuned matmul of @layer scheduled (no matmul left)" eq "$(count_in "$T/lib_out.mlir" layer 'linalg.matmul')" 0
check "tuned matmul of @layer vectorized to FMAs" [ "$(count_in "$T/lib_out.mlir" layer 'vector.fma')" -gt 0 ]
check "bias add + relu of @layer left alone" eq "$(count_in "$T/lib_out.mlir" layer 'arith.maximumf')" 1
check "tuned batch matmul of @scores scheduled" eq "$(count_in "$T/lib_out.mlir" scores 'linalg.batch_matmul')" 0
check "@scores vectorized" [ "$(count_in "$T/lib_out.mlir" scores 'vector.fma')" -gt 0 ]
check "look-alikes (transposed, i32, f16) left as they are" eq "$(count_in "$T/lib_out.mlir" lookalikes 'linalg.matmul')" 3
check "look-alikes not vectorized" eq "$(count_in "$T/lib_out.mlir" lookalikes 'vector\.')" 0
"$AS" export --db "$T/s.db" --format transform --op batch_matmul -o "$T/lib1.mlir"
deadline 120 "$OPT" "$P" --transform-preload-library=transform-library-paths="$T/lib1.mlir" \
    --transform-interpreter -o "$T/lib1_out.mlir"
check "--op: only the batch matmul scheduled" eq \
    "$(count_in "$T/lib1_out.mlir" layer 'linalg.matmul') $(count_in "$T/lib1_out.mlir" scores 'linalg.batch_matmul')" "1 0"

# 2. The IREE tuning spec: upstream mlir-opt runs its upstream matchers
# (IREE's own, the default, are IREE's: tests/backends/test_iree.sh).
"$AS" export --db "$T/s.db" --format iree-spec -o "$T/spec_iree.mlir"
check "export iree-spec exits 0" eq "$?" 0
check "spec: IREE's contraction matcher by default" grep -q 'transform.iree.match.contraction' "$T/spec_iree.mlir"
"$AS" export --db "$T/s.db" --format iree-spec --iree-matcher upstream -o "$T/spec.mlir"
check "export iree-spec --iree-matcher upstream exits 0" eq "$?" 0
check "spec: tuning_spec_entrypoint" grep -q 'iree_codegen.tuning_spec_entrypoint' "$T/spec.mlir"
check "spec: today's syntax by default" grep -q '#iree_cpu.pipeline<DoubleTilingExpert>' "$T/spec.mlir"
deadline 120 "$OPT" --allow-unregistered-dialect "$P" \
    --transform-preload-library=transform-library-paths="$T/spec.mlir" \
    --transform-interpreter=entry-point=__kernel_config -o "$T/spec_out.mlir"
check "mlir-opt runs the spec" eq "$?" 0
check "spec annotates the matmul of @layer" eq "$(count_in "$T/spec_out.mlir" layer 'compilation_info')" 1
# Its distribution tiles are the stored best's (the default's, when the
# search's winner was not measurably faster and the default was kept).
dist=$("$AS" best --db "$T/s.db" --op batch_matmul --format json | python3 -c '
import json, sys
b = json.load(sys.stdin); b = b[0] if isinstance(b, list) else b
k = b["knobs"] if "knobs" in b else b
print("1, %d, %d, 0" % (min(k["tile_m"], 32), min(k["tile_n"], 32)))')
check "spec annotates the batch matmul of @scores" eq "$(count_in "$T/spec_out.mlir" scores "batch_matmul.*distribution = \\[$dist\\]")" 1
# Upstream matchers see sizes, bit widths and the body, not the layout: the
# i32 and f16 look-alikes are left alone (the transposed one is documented).
check "spec leaves the i32 and f16 look-alikes" eq "$(count_in "$T/spec_out.mlir" lookalikes 'compilation_info.*(i32|f16)>')" 0
"$AS" export --db "$T/s.db" --format iree-spec --iree-syntax 2025.07 -o "$T/spec25.mlir"
check "--iree-syntax 2025.07: the pipeline before #iree_cpu.pipeline" grep -q 'pipeline = CPUDoubleTilingExpert' "$T/spec25.mlir"

# 3. The annotated program.
"$AS" annotate "$P" --db "$T/s.db" -o "$T/ann.mlir" 2> "$T/ann_err.txt"
check "annotate exits 0" eq "$?" 0
check "annotate: exactly the two tuned ops" eq "$(grep -c 'compilation_info' "$T/ann.mlir")" 2
check "annotate: the seed's attribute form" grep -q 'compilation_info = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = \[' "$T/ann.mlir"
deadline 120 "$OPT" --allow-unregistered-dialect "$T/ann.mlir" -o "$T/re.mlir"
check "annotated program re-parses" eq "$?" 0
deadline 120 "$OPT" "$P" -o "$T/base.mlir"
python3 "$SRC/tests/export/strip_info.py" "$T/re.mlir" > "$T/stripped.mlir"
check "nothing else changed" diff -q "$T/stripped.mlir" "$T/base.mlir"

check "annotate: no location in, none out" eq "$(grep -c 'loc(' "$T/ann.mlir")" 0
# Locations a front end wrote are kept (those the parser made up print as
# unknown), in every form MLIR has: plain, alias, fused, named.
"$AS" annotate "$FIX/located.mlir" --db "$T/s.db" -o "$T/loc.mlir" 2> "$T/loc_err.txt"
check "annotate with locations exits 0" eq "$?" 0
check "locations: the matmul annotated" eq "$(grep -c 'compilation_info' "$T/loc.mlir")" 1
check "locations: the op's (an alias in the input)" grep -q 'loc("model.py":12:3)' "$T/loc.mlir"
check "locations: the function's and an argument's" bash -c "grep -q 'loc(\"model.py\":9:1)' '$T/loc.mlir' && grep -q 'tensor<64x32xf32> loc(\"model.py\":10:9)' '$T/loc.mlir'"
check "locations: fused and named" bash -c "grep -q '\"relu\"' '$T/loc.mlir' && grep -q 'loc(\"layer1\"' '$T/loc.mlir'"
check "locations: none made up" eq "$(grep -c 'loc(\"-\"' "$T/loc.mlir")" 0
deadline 120 "$OPT" --allow-unregistered-dialect --mlir-print-debuginfo "$T/loc.mlir" -o "$T/loc_re.mlir"
check "located program re-parses" eq "$?" 0
check "located program re-parsed: the op's location" grep -q 'model.py":12:3' "$T/loc_re.mlir"
# A program in generic form stays in generic form.
deadline 120 "$OPT" --mlir-print-op-generic "$P" -o "$T/generic.mlir"
"$AS" annotate "$T/generic.mlir" --db "$T/s.db" -o "$T/gen_ann.mlir" 2> /dev/null
check "generic form: annotate exits 0" eq "$?" 0
check "generic form: the two tuned ops" eq "$(grep -c 'compilation_info' "$T/gen_ann.mlir")" 2
check "generic form kept" grep -q '^"builtin.module"() ' "$T/gen_ann.mlir"
check "generic form: no custom-form op" eq "$(grep -c '^ *func.func\|= linalg.matmul' "$T/gen_ann.mlir")" 0
deadline 120 "$OPT" --allow-unregistered-dialect "$T/gen_ann.mlir" -o "$T/gen_re.mlir"
check "generic form re-parses" eq "$?" 0

# 4. Bad input: exit codes, messages, nothing written.
"$AS" annotate "$P" --db "$T/s.db" -o "$P" 2> "$T/e1"
check "-o = input refused (exit 2)" eq "$?" 2
check "-o = input: program untouched" cmp -s "$P" "$FIX/program.mlir"
printf 'module {\n  func.func @f( }\n' > "$T/bad.mlir"
"$AS" annotate "$T/bad.mlir" --db "$T/s.db" -o "$T/bad.out" 2> "$T/e2"
check "unparsable program: exit 2" eq "$?" 2
check "unparsable program: MLIR's diagnostic" grep -q 'bad.mlir:2:' "$T/e2"
check "unparsable program: nothing written" [ ! -e "$T/bad.out" ]
cat > "$T/other.mlir" <<'M'
func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
M
"$AS" annotate "$T/other.mlir" --db "$T/s.db" -o "$T/other.out" 2> "$T/e3"
check "no tuned op in the program: exit 1" eq "$?" 1
check "no tuned op: a clear message" grep -q 'no best config for any op' "$T/e3"
check "no tuned op: nothing written" [ ! -e "$T/other.out" ]
"$AS" export --db "$T/s.db" --format transform -o "$T/nodir/lib.mlir" 2> "$T/e4"
check "-o in a missing folder: exit 2 and a clear error" grep -q 'does not exist' "$T/e4"
"$AS" export --db "$T/s.db" --format yaml 2> "$T/e5"
check "unknown --format: exit 2" eq "$?" 2
check "unknown --format names the valid ones" grep -q 'transform or iree-spec' "$T/e5"
"$AS" export --db "$T/s.db" --format iree-spec --iree-syntax 1.0 2> "$T/e6"
check "unknown --iree-syntax names the valid ones" grep -q '2026.03, 2025.07' "$T/e6"
"$AS" export --db "$T/s.db" --format transform --op nosuchop 2> "$T/e7"
check "nothing to export: exit 1" eq "$?" 1

"$AS" export --db "$T/s.db" --job 1 --op batch -o "$T/best.json"
check "export json: --job, --op and -o" python3 -c "
import json,sys; d=json.load(open('$T/best.json')); sys.exit(0 if len(d['configs'])==1 and d['configs'][0]['op'].startswith('batch_matmul') else 1)"
"$AS" export --db "$T/s.db" -o "$T/s.db" 2> /dev/null
check "export -o = the store refused" eq "$?" 2

# Results are keyed on the schedule version: rows of another one are not exported.
check "the target's toolchain names the schedule version" bash -c "sqlite3 '$T/s.db' 'select toolchain from targets' | grep -q 'mlir-cpu schedule v[0-9]'"
cp "$T/s.db" "$T/old.db"
sqlite3 "$T/old.db" "update targets set toolchain = replace(toolchain, 'mlir-cpu schedule v', 'mlir-cpu schedule old')"
"$AS" export --db "$T/old.db" --format transform -o "$T/old.mlir" 2> "$T/e8"
check "another schedule version: nothing exported (exit 1)" eq "$?" 1
check "another schedule version: a warning says so" grep -q 'another schedule version' "$T/e8"

# 5. autosched build: whole programs called from C against OpenBLAS.
cp "$SRC/configs/example.mlir" "$FIX/layers.mlir" "$T/"
sed 's/input_file = tuned.mlir/input_file = example.mlir/; s/tile_m = \[16,32\]/tile_m = [32,64]/; s/tile_n = \[16\]/tile_n = [64]/; s/tile_k = \[16\]/tile_k = [64]/' \
    "$T/a.cfg" > "$T/b.cfg"
"$AS" run "$T/b.cfg" --db "$T/s.db" --quiet > "$T/run2.txt" 2>&1
check "example tuning run exits 0" eq "$?" 0
"$AS" build "$T/example.mlir" --db "$T/s.db" -o "$T/example.so" 2> "$T/b1"
check "build example exits 0" eq "$?" 0
check "build example: both ops tuned" grep -q 'example.so: 2 tuned ops' "$T/b1"
check "example: every function via its C interface = OpenBLAS" nolsan "$CALL" example "$T/example.so"
"$AS" build "$T/example.mlir" --untuned -o "$T/example_untuned.so" 2> "$T/b2"
check "build --untuned: no tuned op" grep -q '0 tuned ops' "$T/b2"
check "untuned example = OpenBLAS" nolsan "$CALL" example "$T/example_untuned.so"
"$AS" build "$T/layers.mlir" --db "$T/s.db" -o "$T/layers.so" 2> "$T/b3"
check "build layers exits 0" eq "$?" 0
check "layers: the tuned matmul used" grep -q 'layers.so: 1 tuned op$' "$T/b3"
check "layers: one warning per op the store does not know" eq "$(grep -c 'not in the store; default schedule' "$T/b3")" 2
check "layers: matmul, bias+relu, transposed matmul, batch matmul = OpenBLAS" nolsan "$CALL" layers "$T/layers.so"
"$AS" build "$T/other.mlir" --db "$T/s.db" -o "$T/other.so" 2> "$T/b4"
check "build: no tuned op of the program: exit 1" eq "$?" 1
check "build: no tuned op: nothing written" [ ! -e "$T/other.so" ]
"$AS" build "$T/bad.mlir" --db "$T/s.db" -o "$T/bad.so" 2> "$T/b5"
check "build: unparsable program: exit 2" eq "$?" 2
"$AS" build "$T/layers.mlir" --db "$T/s.db" -o "$T/layers.mlir" 2> "$T/b6"
check "build: -o = input refused" eq "$?" 2
"$AS" build "$T/example.mlir" --db "$T/s.db" -o "$T/example.so" 2> "$T/b8"
check "build: an earlier built .so (its marker) replaced" eq "$?" 0
echo "not a library" > "$T/foreign.so"
"$AS" build "$T/example.mlir" --db "$T/s.db" -o "$T/foreign.so" 2> "$T/b9"
check "build: a foreign file at -o refused (exit 2)" eq "$?" 2
check "build: the foreign file untouched" eq "$(cat "$T/foreign.so")" "not a library"
check "build: the refusal says it is not autosched's" grep -q 'not a file autosched wrote' "$T/b9"

# 6. One writer for every output (issue 19): the target checked as a file,
# written through an unpredictable temporary, stdout checked.
echo secret > "$T/victim"
cp "$T/victim" "$T/victim.orig"
# The old temporary was -o's name plus .tmp.PID: plant links for the next pids.
mkdir "$T/plant"
for i in $(seq $(($$ + 1)) $(($$ + 400))); do ln -s "$T/victim" "$T/plant/lib.mlir.tmp.$i"; done
"$AS" export --db "$T/s.db" --format transform -o "$T/plant/lib.mlir" 2> "$T/w1"
check "planted links at TARGET.tmp.PID: export exits 0" eq "$?" 0
check "planted links at TARGET.tmp.PID: not followed" cmp -s "$T/victim" "$T/victim.orig"
check "planted links: the export is a regular file" test -f "$T/plant/lib.mlir" -a ! -L "$T/plant/lib.mlir"
check "no temporary left beside -o" eq "$(ls -A "$T/plant" | grep -vc 'lib.mlir')" 0
ln -s "$T/victim" "$T/link.mlir"
"$AS" export --db "$T/s.db" --format transform -o "$T/link.mlir" 2> "$T/w2"
check "-o a symbolic link refused (exit 2)" eq "$?" 2
check "-o a symbolic link: the message says so" grep -q 'symbolic link' "$T/w2"
check "-o a symbolic link: its target unchanged" cmp -s "$T/victim" "$T/victim.orig"
# Devices and /dev/stdout: private look-alikes (tests/checks.sh), so that a
# writer that replaces its target cannot take the machine's /dev/null.
mkdir "$T/dev"
DNULL=$(dev_like null "$T/dev")
DFULL=$(dev_like full "$T/dev")
DSTDOUT=$(link_like_stdout "$T/dev")
for dev in "$DNULL" "$DFULL"; do
	"$AS" export --db "$T/s.db" --format transform -o "$dev" 2> "$T/w3"
	check "export -o $dev refused (exit 2)" eq "$?" 2
	check "export -o $dev: still a character device" test -c "$dev"
	check "export -o $dev: the message names -o and a device" grep -q -- "-o $dev: that is a character device" "$T/w3"
	"$AS" export --db "$T/s.db" -o "$dev" 2> /dev/null
	check "export (json) -o $dev refused (exit 2)" eq "$?" 2
done
"$AS" export --db "$T/s.db" --format transform -o "$DSTDOUT" > "$T/w4.out" 2> "$T/w4"
check "export -o a link like /dev/stdout refused" eq "$?" 2
check "export -o a link like /dev/stdout: still a link" test -L "$DSTDOUT"
mkfifo "$T/fifo"
timeout 10 "$AS" export --db "$T/s.db" --format transform -o "$T/fifo" 2> /dev/null
check "export -o a FIFO refused, no hang" eq "$?" 2
check "export -o a FIFO: still a FIFO" test -p "$T/fifo"
cp "$T/s.db" "$T/s.db.orig"
for side in s.db s.db-wal s.db-shm s.db-journal; do
	for cmd in "export --format transform" "annotate $P" "build $P"; do
		"$AS" $cmd --db "$T/s.db" -o "$T/$side" 2> "$T/w5"
		check "$cmd -o $side refused (exit 2)" eq "$?" 2
		check "$cmd -o $side: nothing written" bash -c "! head -c 64 '$T/$side' 2>/dev/null | grep -qa 'autosched\|ELF'"
	done
done
check "the store unchanged" cmp -s "$T/s.db" "$T/s.db.orig"
check "the store still a valid SQLite db" ge "$(sqlite3 "$T/s.db" 'select count(*) from jobs')" 1
"$AS" export --db "$T/s.db" --format transform -o "$P" 2> /dev/null
check "export -o the input MLIR (here the program) is foreign: refused" eq "$?" 2
check "the program untouched" cmp -s "$P" "$FIX/program.mlir"
echo "my notes" > "$T/notes.mlir"
"$AS" export --db "$T/s.db" --format iree-spec -o "$T/notes.mlir" 2> "$T/w6"
check "export -o a foreign file refused (exit 2)" eq "$?" 2
check "export -o a foreign file: untouched" eq "$(cat "$T/notes.mlir")" "my notes"
"$AS" export --db "$T/s.db" --format iree-spec -o "$T/lib.mlir"
check "export -o an earlier export (transform) replaced" eq "$?" 0
check "the earlier export now holds the spec" grep -q 'autosched IREE' "$T/lib.mlir"
"$AS" annotate "$P" --db "$T/s.db" -o "$T/ann.mlir" 2> /dev/null
check "annotate -o its earlier output replaced" eq "$?" 0
"$AS" export --db "$T/s.db" -o "$T/best.json" 2> /dev/null
check "export (json) -o an earlier JSON export replaced" eq "$?" 0
"$AS" best --db "$T/s.db" > /dev/full 2> "$T/w7"
check "best > /dev/full: exit non-zero" ge "$?" 1
check "best > /dev/full: says stdout failed" grep -q 'autosched: stdout: No space left on device' "$T/w7"
"$AS" export --db "$T/s.db" --format transform > /dev/full 2> /dev/null
check "export > /dev/full: exit non-zero" ge "$?" 1
"$AS" report --db "$T/s.db" -o "$T/s.db" 2> "$T/w8"
check "report -o the store refused (exit 2)" eq "$?" 2
check "report -o the store: still a valid store" ge "$(sqlite3 "$T/s.db" 'select count(*) from jobs')" 1
"$AS" report --db "$T/s.db" -o "$T/s.db-wal" 2> /dev/null
check "report -o the store's WAL refused (exit 2)" eq "$?" 2
"$AS" report --db "$T/s.db" -o "$DNULL" 2> /dev/null
check "report -o $DNULL refused (exit 2)" eq "$?" 2
check "report -o $DNULL: still a character device" test -c "$DNULL"

# 5. Dot kernels through the library: the flattening step of the module part
# (an MLIR test pass) is written only when an exported op uses a dot kernel,
# the plugin's pass (and the header's --load-pass-plugin) only when one uses
# the VNNI kernel.
check "f32-only library: no flattening step" eq "$(grep -c 'test-vector' "$T/lib.mlir")" 0
check "f32-only library: no plugin" eq "$(grep -c 'load-pass-plugin\|autosched-vnni-dot' "$T/lib.mlir")" 0
cp "$FIX/dot.mlir" "$T/"
sed 's/input_file = tuned.mlir/input_file = dot.mlir/; s/vector_n = \[16\]/vector_n = [16]\nvector_k = [1]/' \
    "$T/a.cfg" > "$T/d.cfg"
"$AS" run "$T/d.cfg" --db "$T/d.db" --quiet > "$T/run3.txt" 2>&1
check "dot tuning run exits 0" eq "$?" 0
"$AS" export --db "$T/d.db" --format transform -o "$T/dlib.mlir"
check "export of the dot ops exits 0" eq "$?" 0
# apply_lib LIB IN OUT: mlir-opt applies library LIB to IN as the library's
# header says (with the plugin when it names one; $plugin keeps it).
apply_lib() {
	plugin=$(sed -n 's/^\/\/ .*--load-pass-plugin=\([^ ]*\) .*/\1/p' "$1" | head -1)
	deadline 120 "$OPT" ${plugin:+--load-pass-plugin="$plugin"} "$2" \
	    --transform-preload-library=transform-library-paths="$1" \
	    --transform-interpreter -o "$3" 2> "$3.err"
}
apply_lib "$T/dlib.mlir" "$T/dot.mlir" "$T/dlib_out.mlir"
check "mlir-opt applies the dot library" eq "$?" 0
check "dot ops scheduled (no matmul left)" eq "$(grep -c 'linalg.matmul' "$T/dlib_out.mlir")" 0
if grep -qw avx512_bf16 /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo; then
	check "dot library: flattening step" [ "$(grep -c 'test-vector-transfer-flatten-patterns' "$T/dlib.mlir")" -gt 0 ]
	check "bf16 op: vdpbf16ps (x86vector.avx512.dot)" [ "$(count_in "$T/dlib_out.mlir" bf16 'x86vector.avx512.dot')" -gt 0 ]
	if grep -qw avx512_vnni /proc/cpuinfo; then
		check "dot library: the plugin's pass" [ "$(grep -c 'autosched-vnni-dot' "$T/dlib.mlir")" -gt 0 ]
		check "dot library: its header names the plugin" [ -f "$plugin" ]
		check "i8 op: one 64-byte B panel read per quad of K" [ "$(count_in "$T/dlib_out.mlir" i8 'vector<64xi8>')" -gt 0 ]
		check "u8i8 op: vpdpbusd" [ "$(count_in "$T/dlib_out.mlir" u8i8 'call @llvm.x86.avx512.vpdpbusd.512')" -gt 0 ]
		check "u8i8 op: no shift" eq "$(count_in "$T/dlib_out.mlir" u8i8 'arith.xori')" 0
		check "s8 x s8 op: vpdpbusd, A shifted to u8" [ "$(count_in "$T/dlib_out.mlir" i8 'call @llvm.x86.avx512.vpdpbusd.512')" -gt 0 -a "$(count_in "$T/dlib_out.mlir" i8 'arith.xori')" -gt 0 ]
	fi
else
	echo "export: no AVX512-BF16/BW here: the dot kernels' checks are skipped" >&2
fi
"$AS" build "$T/dot.mlir" --db "$T/d.db" -o "$T/dot.so" 2> "$T/b7"
check "build of the dot ops exits 0" eq "$?" 0
check "build: the three dot ops tuned" grep -q 'dot.so: 3 tuned ops' "$T/b7"
# Two ops that differ only in signedness: one schedule for both, a warning,
# and a library mlir-opt applies (no handle used after its op was consumed).
cp "$FIX/signs.mlir" "$T/"
sed 's/input_file = dot.mlir/input_file = signs.mlir/' "$T/d.cfg" > "$T/s.cfg"
"$AS" run "$T/s.cfg" --db "$T/signs.db" --quiet > "$T/run4.txt" 2>&1
check "signs tuning run exits 0" eq "$?" 0
"$AS" export --db "$T/signs.db" --format transform -o "$T/slib.mlir" 2> "$T/slib_err.txt"
check "signs: export exits 0" eq "$?" 0
check "signs: the left-out op named" grep -q 'cannot tell it from' "$T/slib_err.txt"
apply_lib "$T/slib.mlir" "$T/signs.mlir" "$T/slib_out.mlir"
check "signs: mlir-opt applies the library" eq "$?" 0
check "signs: both ops scheduled" eq "$(grep -c 'linalg.matmul\|linalg.generic' "$T/slib_out.mlir")" 0

check "every library built opens with RTLD_NOW" "$CALL" load $(ls "$T"/*.so | grep -v foreign.so)
echo "export: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
