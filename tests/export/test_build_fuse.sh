#!/usr/bin/env bash
# `autosched build --fuse on` against `--fuse off`: fixtures/fuse.mlir (a
# dense layer: matmul, bias add, tanh, residual add; a batch matmul
# scaled), tuned at 2 threads and untuned, computes the same results bit
# for bit both ways (compare_fuse.c: the operations and their order are
# the same, only where they run changes); the fused build says how many
# consumers it fused and makes fewer dispatches, and its schedules run the
# consumers as vectors inside the matmuls' thread loops (the scheduled IR);
# a matmul's input slices, fill and insert in its dispatch
# (fixtures/heads.mlir) and row-wise ops (fixtures/rows.mlir) in one loop
# over rows, bit for bit too.
#   test_build_fuse.sh AUTOSCHED SOURCE_DIR LLVM_BIN COMPARE_FUSE PLUGIN
. "$(dirname "$0")/../checks.sh"
args AS SRC BIN CMP PLUG
scratch build-fuse tmp keep
# garbage CMD...: CMD with every block malloc hands out filled with a byte
# not 0 (glibc's MALLOC_PERTURB_; ASan's malloc_fill_byte, over the whole
# block), so that a build reading memory it never wrote shows it (a freshly
# mapped block is all zeros, which a zero fill left out would read as right).
garbage() {
	MALLOC_PERTURB_=165 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:malloc_fill_byte=165:max_malloc_fill_size=1073741824 "$@"
}
cp "$SRC/tests/export/fixtures/fuse.mlir" "$T/fuse.mlir"
DENSE="64x128xf32 64x96xf32 96x128xf32 128xf32 64x128xf32"
BSCALE="4x32x64xf32 4x32x48xf32 4x48x64xf32"

# Tuned at 2 threads: the schedules split M (dense) and the batch (bscale)
# evenly across the threads, where the epilogue is fused into the loop.
grid_cfg fuse.mlir 1 5 > "$T/a.cfg" <<C
$(space tile_m=16 tile_n=32 tile_k=16 vector_m=4 vector_n=16 threads=2)
C
(cd "$T" && deadline 120 "$AS" run a.cfg --db s.db --quiet > run.txt 2>&1)
check "run of the fixture exits 0" eq "$?" 0

# build LIB MODE [ARGS...]: build fuse.mlir with the store, --fuse MODE.
build() {
	local lib=$1 mode=$2
	shift 2
	TMPDIR=$T/tmp deadline 240 "$AS" build "$T/fuse.mlir" --db "$T/s.db" \
	    --fuse "$mode" "$@" -o "$T/$lib.so" 2> "$T/err_$lib"
}
build on on
check "fuse on: build exits 0" eq "$?" 0
check "fuse on: 4 consumers fused into 2 matmuls" grep -q 'on.so: 4 consumers fused into 2 matmuls' "$T/err_on"
check "fuse on: 2 dispatches (2 matmuls with their fill and epilogue)" grep -q 'on.so: 2 dispatches' "$T/err_on"
check "fuse on: the fills in their matmul's dispatch" grep -q "on.so: 4 consumers fused into 2 matmuls; in their matmul's dispatch: 2 zero fills, 0 input slices, 0 result inserts" "$T/err_on"
check "fuse on: no transform warning" bash -c "! grep -q 'warning' '$T/err_on'"
build off off --rest-fuse off
check "fuse off: build exits 0" eq "$?" 0
check "fuse off: says so" grep -q 'off.so: fusion off' "$T/err_off"
check "fuse off: 8 dispatches" grep -q 'off.so: 8 dispatches' "$T/err_off"
check "tuned dense layer: fused = unfused, bit for bit" nolsan "$CMP" "$T/off.so" "$T/on.so" dense 0 1 $DENSE
check "tuned batch matmul scaled: fused = unfused, bit for bit" nolsan "$CMP" "$T/off.so" "$T/on.so" bscale 0 1 $BSCALE

# libm's tanh (--math exact) and the rest as scalar loops: the same too.
build xon on --math exact --rest loops
check "math exact, loops, fuse on: build exits 0" eq "$?" 0
build xoff off --math exact --rest loops --rest-fuse off
check "math exact, loops, fuse off: build exits 0" eq "$?" 0
check "math exact, loops: fused = unfused, bit for bit" nolsan "$CMP" "$T/xoff.so" "$T/xon.so" dense 0 1 $DENSE

# The comparison can fail: tanh made exp differs from the fused build.
sed 's/math.tanh/math.exp/' "$T/fuse.mlir" > "$T/other.mlir"
TMPDIR=$T/tmp deadline 240 "$AS" build "$T/other.mlir" --db "$T/s.db" \
    --fuse off -o "$T/other.so" 2> "$T/err_other"
check "another program: build exits 0" eq "$?" 0
check "another program's dense layer differs" bash -c "! '$CMP' '$T/other.so' '$T/on.so' dense 0 1 $DENSE > /dev/null"

# Untuned (the default schedules): the same both ways.
TMPDIR=$T/tmp deadline 240 "$AS" build "$T/fuse.mlir" --untuned --fuse on -o "$T/uon.so" 2> "$T/err_uon"
check "untuned, fuse on: build exits 0" eq "$?" 0
TMPDIR=$T/tmp deadline 240 "$AS" build "$T/fuse.mlir" --untuned --fuse off --rest-fuse off -o "$T/uoff.so" 2> "$T/err_uoff"
check "untuned, fuse off: build exits 0" eq "$?" 0
check "untuned dense layer: fused = unfused" nolsan "$CMP" "$T/uoff.so" "$T/uon.so" dense 0 1 $DENSE
check "untuned batch matmul scaled: fused = unfused" nolsan "$CMP" "$T/uoff.so" "$T/uon.so" bscale 0 1 $BSCALE

# The fused schedules ran: after the transform library, the consumers are
# vector code inside the matmul's loops; unfused, they are still linalg
# ops there (the rest pass vectorizes them later).
# within REGION OP FILE: "in" when OP (math.tanh) on vectors is nested in
# an op named REGION: scf.forall (the threads' chunks), scf.for (the serial
# loops), func.func (anywhere).
within() {
	awk -v loop="$1 " -v op="$2 %" '!inl && index($0, loop) { ld = d; inl = 1 }
	    inl && index($0, op) && index($0, "vector<") { print "in"; exit }
	    { d += gsub(/{/, "{") - gsub(/}/, "}"); if (inl && d <= ld) inl = 0 }' "$3"
}
# scheduled NAME BUILD-ARGS...: the kept scratch program of a build of
# fuse.mlir (SRC_MLIR: another), up to the schedules, into
# sched_NAME.mlir.
scheduled() {
	local d name=$1
	shift
	rm -rf "$T/keep"/*
	TMPDIR=$T/keep AUTOSCHED_BUILD_KEEP=1 deadline 240 ${PIN:+taskset -c "$PIN"} \
	    "$AS" build "${SRC_MLIR:-$T/fuse.mlir}" "$@" -o "$T/k$name.so" 2> "$T/err_k$name"
	d=$(ls -d "$T/keep"/autosched-build-* | head -1)
	deadline 120 "$BIN/mlir-opt" --load-pass-plugin="$PLUG" "$d/program.mlir" --pass-pipeline="builtin.module(transform-preload-library{transform-library-paths=$d/lib.mlir},func.func(convert-elementwise-to-linalg,canonicalize),transform-interpreter)" -o "$T/sched_$name.mlir" 2> "$T/opt_$name"
}
scheduled on --db "$T/s.db" --fuse on
check "fuse on: the scratch folder kept when asked" grep -q 'scratch files kept in' "$T/err_kon"
check "fuse on: the schedules apply" test -s "$T/sched_on.mlir"
check "fuse on: no transform warning" bash -c "! grep -q 'warning' '$T/opt_on'"
check "fuse on: tanh in vectors in the dense layer's thread loop" eq "$(within scf.forall math.tanh "$T/sched_on.mlir")" in
check "fuse on: the scale in vectors in the batch matmul's thread loop" eq "$(within scf.forall arith.mulf "$T/sched_on.mlir")" in
scheduled off --db "$T/s.db" --fuse off
check "fuse off: the schedules apply" test -s "$T/sched_off.mlir"
check "fuse off: tanh not in vectors after the schedules" eq "$(within func.func math.tanh "$T/sched_off.mlir")" ""
check "fuse off: the scale not in vectors after the schedules" eq "$(within func.func arith.mulf "$T/sched_off.mlir")" ""
# One thread (the default schedules): the batch matmul's consumer fused
# into its serial loop over the batch, the scale after each matrix.
scheduled uon --untuned --fuse on
check "untuned, fuse on: no transform warning" bash -c "! grep -q 'warning' '$T/opt_uon'"
check "untuned, fuse on: the scale in vectors in the batch loop" eq "$(within scf.for arith.mulf "$T/sched_uon.mlir")" in
scheduled uoff --untuned --fuse off --rest-fuse off
check "untuned, fuse off: the scale not in vectors" eq "$(within func.func arith.mulf "$T/sched_uoff.mlir")" ""

# --rest-fuse (no epilogue fusion): the dense layer's bias add, tanh and
# residual add one dispatch, made one loop by linalg-fuse-elementwise-ops,
# bit for bit the three loops of --rest-fuse off; fewer loops and buffers
# after the schedules (bufferized), tuned and untuned.
for how in "u --untuned" "t --db $T/s.db"; do
	set -- $how
	n=$1
	shift
	for m in on off; do
		build "r$n$m" off "$@" --rest-fuse "$m"
		check "rest-fuse $m ($n): build exits 0" eq "$?" 0
	done
	check "rest-fuse on ($n): 3 elementwise ops fused into 1 loop" grep -q "r${n}on.so: 3 elementwise ops fused into 1 loop" "$T/err_r${n}on"
	check "rest-fuse on ($n): 6 dispatches" grep -q "r${n}on.so: 6 dispatches" "$T/err_r${n}on"
	check "rest-fuse off ($n): says so" grep -q "r${n}off.so: rest fusion off" "$T/err_r${n}off"
	check "rest-fuse off ($n): 8 dispatches" grep -q "r${n}off.so: 8 dispatches" "$T/err_r${n}off"
	check "rest-fuse ($n): dense layer on = off, bit for bit" nolsan "$CMP" "$T/r${n}off.so" "$T/r${n}on.so" dense 0 1 $DENSE
	check "rest-fuse ($n): batch matmul scaled on = off, bit for bit" nolsan "$CMP" "$T/r${n}off.so" "$T/r${n}on.so" bscale 0 1 $BSCALE
	check "rest-fuse ($n): dense layer on = epilogue-fused, bit for bit" nolsan "$CMP" "$T/on.so" "$T/r${n}on.so" dense 0 1 $DENSE
	scheduled "r${n}on" "$@" --fuse off --rest-fuse on
	scheduled "r${n}off" "$@" --fuse off --rest-fuse off
	check "rest-fuse on ($n): no transform warning" bash -c "! grep -q 'warning' '$T/opt_r${n}on'"
	g_on=$(grep -c 'linalg.generic' "$T/sched_r${n}on.mlir")
	g_off=$(grep -c 'linalg.generic' "$T/sched_r${n}off.mlir")
	check "rest-fuse ($n): 2 fewer elementwise loops ($g_on, $g_off)" eq "$((g_off - g_on))" 2
	a_on=$(grep -c 'memref.alloc' "$T/sched_r${n}on.mlir")
	a_off=$(grep -c 'memref.alloc' "$T/sched_r${n}off.mlir")
	check "rest-fuse ($n): fewer buffers ($a_on, $a_off)" test "$a_on" -lt "$a_off"
done
# Attention's heads (fixtures/heads.mlir): each matmul's dispatch takes its
# input slices, its zero fill and its insert into all heads (2 dispatches,
# not 12), bit for bit --fuse off --rest-fuse off at 1 and 2 threads; after
# the schedules the fill is in the threads' loop and nothing is copied.
cp "$SRC/tests/export/fixtures/heads.mlir" "$T/heads.mlir"
HEADS="256x128xf32 2x128x64xf32 2x64x128xf32 128xf32"
TMPDIR=$T/tmp deadline 240 "$AS" build "$T/heads.mlir" --untuned -o "$T/heads_on.so" 2> "$T/err_heads_on"
check "heads: build exits 0" eq "$?" 0
TMPDIR=$T/tmp deadline 240 "$AS" build "$T/heads.mlir" --untuned --fuse off --rest-fuse off -o "$T/heads_off.so" 2> "$T/err_heads_off"
check "heads, fusion off: build exits 0" eq "$?" 0
check "heads: 2 dispatches" grep -q 'heads_on.so: 2 dispatches' "$T/err_heads_on"
check "heads: fills, slices and inserts in the matmuls' dispatches" grep -q "heads_on.so: 2 consumers fused into 2 matmuls; in their matmul's dispatch: 2 zero fills, 4 input slices, 2 result inserts" "$T/err_heads_on"
check "heads, fusion off: 12 dispatches" grep -q 'heads_off.so: 12 dispatches' "$T/err_heads_off"
for n in 1 2; do
	export OMP_NUM_THREADS=$n
	check "heads ($n threads): = fusion off, bit for bit" garbage "$CMP" "$T/heads_off.so" "$T/heads_on.so" heads 0 1 $HEADS
done
unset OMP_NUM_THREADS
# inloop OP FILE: "in" when OP is nested in an scf.forall.
inloop() {
	awk -v op="$1 " '!inl && index($0, "scf.forall ") { ld = d; inl = 1 }
	    inl && index($0, op) { print "in"; exit }
	    { d += gsub(/{/, "{") - gsub(/}/, "}"); if (inl && d <= ld) inl = 0 }' "$2"
}
SRC_MLIR=$T/heads.mlir scheduled heads --untuned
check "heads: the schedules apply" test -s "$T/sched_heads.mlir"
check "heads: the fill folded into the register tiles (none left)" eq "$(grep -c 'linalg.fill' "$T/sched_heads.mlir")" 0
check "heads: nothing copied" eq "$(grep -c 'memref.copy\|linalg.copy' "$T/sched_heads.mlir")" 0
SRC_MLIR=$T/heads.mlir scheduled heads_off --untuned --fuse off --rest-fuse off
check "heads, fusion off: the fill outside any loop" eq "$(inloop linalg.fill "$T/sched_heads_off.mlir")" ""
check "heads, fusion off: slices and inserts copied" test "$(grep -c 'memref.copy\|linalg.copy' "$T/sched_heads_off.mlir")" -gt 0

# Row groups (fixtures/rows.mlir): a softmax read transposed, a layer
# norm, an odd-sized softmax, each one loop over blocks of rows
# (autosched-fuse-rows), bit for bit their ops one dispatch each
# (--rest-fuse off), at 1 and 2 threads; a group whose middle value is also
# returned stays ops of their own.
cp "$SRC/tests/export/fixtures/rows.mlir" "$T/rows.mlir"
for m in on off; do
	TMPDIR=$T/tmp deadline 240 "$AS" build "$T/rows.mlir" --untuned \
	    --rest-fuse $m -o "$T/rows_$m.so" 2> "$T/err_rows_$m"
	check "rows, rest-fuse $m: build exits 0" eq "$?" 0
done
check "rows: 21 row-wise ops in 3 loops" grep -q 'rows_on.so: 21 row-wise ops (softmax, norms) in 3 loops over rows' "$T/err_rows_on"
check "rows: 6 dispatches (3 row loops, the returned sum's 3 ops)" grep -q 'rows_on.so: 6 dispatches' "$T/err_rows_on"
check "rows, rest-fuse off: no row loop" bash -c "! grep -q 'row-wise' '$T/err_rows_off'"
for n in 1 2; do
	export OMP_NUM_THREADS=$n
	check "rows ($n threads): softmax read transposed, bit for bit" nolsan "$CMP" "$T/rows_off.so" "$T/rows_on.so" attn 0 1 2x32x48xf32 2x48x32xf32 32x48xf32
	check "rows ($n threads): layer norm, bit for bit" nolsan "$CMP" "$T/rows_off.so" "$T/rows_on.so" norm 0 1 64x96xf32 64x96xf32 96xf32
	check "rows ($n threads): odd softmax, bit for bit" nolsan "$CMP" "$T/rows_off.so" "$T/rows_on.so" odd 0 1 5x3x17xf32 5x3x17xf32
	check "rows ($n threads): the returned sum, bit for bit" nolsan "$CMP" "$T/rows_off.so" "$T/rows_on.so" leak 0 2 64x96xf32 64xf32 64x96xf32
done
unset OMP_NUM_THREADS

# Zero fills folded into the register tiles (autosched-fold-init,
# fixtures/inits.mlir): each matmul's accumulators start at zero in
# registers (a peeled last M tile too), no fill left after the schedules but
# where the op is cut into parts, where one thread runs the op (CPU 0) and where the threads' chunks
# do (CPUs 0,1): bit for bit the builds without fusion (their fill a pass
# of its own), at 1 and 2 threads, every malloc'd block handed out dirty.
cp "$SRC/tests/export/fixtures/inits.mlir" "$T/inits.mlir"
INITS="mm_k1 1 96x256xf32 96x128xf32 128x256xf32 256xf32
mm_rag_m_k2 1 100x64xf32 100x512xf32 512x64xf32 64xf32
mm_rag_n_k2 1 64x200xf32 64x300xf32 300x200xf32 200xf32
mm_tb 1 64x128xf32 64x384xf32 128x384xf32 128xf32
mm_bf16 1 96x128xf32 96x512xbf16 512x128xbf16 128xf32
bmm_k3 1 4x64x64xf32 4x64x600xf32 4x600x64xf32
mm_i8 1 96x128xi32 96x256xi8 256x128xi8
mm_f16 1 64x128xf32 64x256xf16 256x128xf16
mm_peel_m 1 36x64xf32 36x128xf32 128x64xf32"
for c in 0 0,1; do
	SRC_MLIR=$T/inits.mlir PIN=$c scheduled inits_$c --untuned
	check "inits (CPUs $c): the schedules apply" test -s "$T/sched_inits_$c.mlir"
	# (The op cut into parts, ragged N, keeps its fill: a part starts from
	# another's result and reads what that left. The ops whose last M
	# register tile is peeled, ragged M and M of 36, fold it there too.)
	check "inits (CPUs $c): every zero fill folded but ragged N's" eq "$(grep -c 'linalg.fill' "$T/sched_inits_$c.mlir")" 1
	TMPDIR=$T/tmp deadline 240 taskset -c "$c" "$AS" build "$T/inits.mlir" --untuned \
	    --fuse off --rest-fuse off -o "$T/inits_off_$c.so" 2> "$T/err_inits_off_$c"
	check "inits (CPUs $c), fusion off: build exits 0" eq "$?" 0
	for n in 1 2; do
		while read -r fn nres types; do
			OMP_NUM_THREADS=$n check "inits (CPUs $c, $n threads): $fn bit for bit" \
			    garbage "$CMP" "$T/inits_off_$c.so" "$T/kinits_$c.so" "$fn" 0 "$nres" $types
		done <<< "$INITS"
	done
done

"$AS" build "$T/fuse.mlir" --untuned --rest-fuse maybe -o "$T/bad.so" 2> "$T/err_rbad"
check "--rest-fuse maybe: exit 2" eq "$?" 2
check "--rest-fuse maybe: says what is expected" grep -q 'expected on or off' "$T/err_rbad"

"$AS" build "$T/fuse.mlir" --untuned --fuse maybe -o "$T/bad.so" 2> "$T/err_bad"
check "--fuse maybe: exit 2" eq "$?" 2
check "--fuse maybe: says what is expected" grep -q 'expected on or off' "$T/err_bad"
check "scratch folders removed" eq "$(ls -A "$T/tmp")" ""

echo "build_fuse: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
