#!/usr/bin/env bash
# backend iree for NVIDIA GPUs, here without a GPU (issue 33): a fixed-seed
# sample of the CUDA space of five ops (f16->f32, a ragged bf16->f32, f16,
# f32, and f16->f32 at 1000^3, which no tile divides: IREE pads them),
# compiled for sm_80 and sm_90a through the backend's own prepare,
# every config compiled or refused by a named rule (no compile failure a
# rule should have caught); the launch shape IREE writes read back equal to
# the knobs' (grid, block, shared memory); `autosched space` for a cfg
# naming gpu_arch, and gpu_arch where it means nothing, exit 2 naming the
# line; autosched-gpu-measure's peak PTX assembled by ptxas, and the harness
# with no driver (or a GPU, if this host has one) ending cleanly. The same
# for a batch matmul and a matmul with B stored NxK (f16, sm_80 and
# sm_90a): candidates compiled, the launch read back matching the knobs
# (a grid of batch x tiles, a transposed B's tile as stored in shared
# memory), `space --count` for both, the harness's --op tail. Exit 77
# when IREE's tools or ptxas are missing.
#   test_gpu.sh AUTOSCHED STAGE MEASURE SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS STAGE GM SRC
scratch gpu
PTXAS=${AUTOSCHED_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ ! -x "$PTXAS" ]; then
	echo "skipped: no ptxas (the CUDA toolkit)"
	exit 77
fi
if ! command -v iree-compile > /dev/null && ! [ -x "${AUTOSCHED_IREE_VENV:-$HOME/.cache/autosched/iree-3.13.0}/bin/iree-compile" ]; then
	echo "skipped: IREE's tools are not installed (scripts/iree-deps.sh)"
	exit 77
fi

# The harness: usage, the peak's PTX, no driver.
"$GM" --op 1,2 > /dev/null 2> "$T/usage.txt"
check "harness: bad --op is exit 2" eq "$?" 2
check "harness: bad --op says what it expected" grep -q "expected M,N,K,TYPE" "$T/usage.txt"
for op in 64,64,64,f16f32,b0 64,64,64,f16,tc 64,64,64,f16,ta,ta 64,64,64,f16,b2,b3 64,64,64,f16,; do
	"$GM" --op "$op" > /dev/null 2>&1
	check "harness: --op $op is exit 2" eq "$?" 2
done
for op in 64,64,64,f16f32,b4 64,64,64,f16,tb 64,64,64,bf16f32,b2,ta,tb; do
	timeout 60 "$GM" --op "$op" --kernel "k,$T/none.ptx,e,1,1,1,128,1,1,0" > /dev/null 2>&1
	rc=$?
	check "harness: --op $op is taken (exit 1 or 3 here, got $rc)" test "$rc" = 3 -o "$rc" = 1
done
for t in f16f32 f16 bf16f32 f32; do
	"$GM" --peak-ptx $t > "$T/peak_$t.ptx"
	for a in sm_80 sm_90a; do
		check "peak PTX $t assembles for $a" timeout 60 "$PTXAS" -arch=$a "$T/peak_$t.ptx" -o "$T/peak.cubin"
	done
done
check "peak PTX is mma.sync" grep -q 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32' "$T/peak_bf16f32.ptx"
timeout 60 "$GM" --probe > "$T/probe.txt" 2> "$T/probe.err"
rc=$?
if [ "$rc" = 3 ]; then
	check "harness without a GPU says so" grep -Eq "no NVIDIA driver here|no usable GPU" "$T/probe.err"
else
	check "harness on this GPU prints the device (exit $rc)" grep -q '"kind":"device"' "$T/probe.txt"
fi
timeout 60 "$GM" --op 64,64,64,f16f32 --kernel "k,$T/none.ptx,e,1,1,1,128,1,1,0" > /dev/null 2>&1
rc=$?
check "harness: a kernel without a GPU ends cleanly (exit 1 or 3, got $rc)" test "$rc" = 3 -o "$rc" = 1

# The candidates: "OUT ARCH M,N,K,TYPE SAMPLE PICKS" (the picks are boundary
# cases: one warp of 32x32, 16 warps of 32x32, 50 KiB of promoted tiles
# (above the 48 KiB a launch gets unasked), 131 KiB (refused on sm_86 before
# compiling, allowed on sm_80, where ptxas finds its spills), a SIMT tile of
# 256 threads, and two of them with unpadded shared-memory rows (pad_smem 0));
# each op is given the picks its checks below read (every compile costs a
# second or two of the suite).
ALL="32,32,16,32,32,1;128,128,32,32,32,1;256,128,64,64,64,1;256,256,128,64,64,1;64,64,16,4,4,0;128,128,32,32,32,1,0;256,256,128,64,64,1,0"
MMA="128,128,32,32,32,1;128,128,32,32,32,1,0"
BIG="128,128,32,32,32,1;256,256,128,64,64,1;256,256,128,64,64,1,0"
RAG="32,32,16,32,32,1;128,128,32,32,32,1;256,128,64,64,64,1"
SIMT="32,32,16,32,32,1;64,64,16,4,4,0"
ONE="128,128,32,32,32,1"
while read -r out arch op n picks; do
	check "stage $out ($arch $op)" timeout 600 "$STAGE" --arch "$arch" --op "$op" --sample "$n" --seed 7 \
	    --out "$T/$out" --work "$T/work" --timeout 120 --extra "${!picks}"
	check "$out: every config compiled or was refused by a rule" \
	    awk -F'\t' '!/^#/ && $2 != "compiled" && $2 != "not_in_space" && $4 !~ /^refused: rule / { print "  " $0 > "/dev/stderr"; bad = 1 } END { exit bad }' "$T/$out/manifest.tsv"
	check "$out: IREE's own config compiled" grep -q "^iree_default	compiled" "$T/$out/manifest.tsv"
	check "$out: tuned configs compiled" ge "$(grep -Ec '^(pick_)?t.*	compiled' "$T/$out/manifest.tsv")" 1
	# name,ptx,entry,gx,gy,gz,bx,by,bz,smem against the knobs in the name
	check "$out: launch shapes read back match the knobs" awk -F, -v op="$op" '
	    function up(a, b) { return int((a + b - 1) / b) }
	    BEGIN { n = split(op, o, ","); M = o[1]; N = o[2]; K = o[3]; mma = o[4] != "f32"
	      acc = o[4] == "f16" ? 2 : 4; B = 1
	      for (i = 5; i <= n; i++) { if (o[i] ~ /^b/) B = substr(o[i], 2); if (o[i] == "ta") ta = 1; if (o[i] == "tb") tb = 1 } }
	    $1 != "iree_default" {
	      s = $1; sub(/^pick_/, "", s); gsub(/[a-z_]+/, " ", s); split(s, v, " ")
	      # v: tm tn tk vm vn; threads 32/warp tile (mma) or 1/thread tile;
	      # a tile that does not divide is padded: one more workgroup, and
	      # unpromoted, the padded result tile in shared memory
	      t = (v[1] / v[4]) * (v[2] / v[5]) * (mma ? 32 : 1)
	      g = B * up(M, v[1]) * up(N, v[2])
	      rag = M % v[1] || N % v[2] || K % v[3]
	      p = $1 ~ /nopad/ ? 0 : 4
	      # a tile in shared memory as its operand is stored (rows padded by p)
	      sa = ta ? v[3] * (v[1] + p) : v[1] * (v[3] + p)
	      sb = tb ? v[2] * (v[3] + p) : v[3] * (v[2] + p)
	      sm = !mma ? -1 : $1 ~ /nopromote/ ? (rag ? v[1] * v[2] * (acc + 1) : 0) : 2 * (sa + sb)
	      if ($4 * $5 * $6 != g || $7 * $8 * $9 != t || (sm >= 0 && $10 != sm)) {
	        print "  " $0 ": want grid " g " threads " t " smem " sm > "/dev/stderr"; bad = 1 } }
	    END { exit bad }' "$T/$out/kernels.txt"
	check "$out: PTX for $arch" grep -q "^\.target $arch" "$T/$out/iree_default.ptx"
done << 'OPS'
f16_80 sm_80 512,512,512,f16f32 4 ALL
f32_80 sm_80 256,256,256,f32 2 SIMT
bf16_90 sm_90a 384,256,512,bf16f32 2 MMA
f16h_90 sm_90a 512,512,512,f16 2 MMA
f16_86 sm_86 512,512,512,f16f32 0 BIG
rag_80 sm_80 1000,1000,1000,f16f32 4 RAG
bmm_80 sm_80 512,384,256,f16f32,b4 1 ONE
bmm_90 sm_90a 1000,1000,1000,f16,b2 1 ONE
mtb_80 sm_80 512,384,256,f16f32,tb 1 ONE
mtb_90 sm_90a 384,256,512,f16,b3,tb 1 ONE
OPS
check "sm_86: 131 KiB of tiles refused by the shared-memory rule" \
    grep -q "^pick_t256x256x128_w64x64	compile_failed.*refused: rule shared-memory: 134144 bytes.*sm_86's 101376" "$T/f16_86/manifest.tsv"
check "sm_80: the same tile passes the shared-memory rule (compiled, or refused after by ptxas)" \
    grep -Eq "^pick_t256x256x128_w64x64	(compiled|compile_failed.*refused: rule (spills|registers))" "$T/f16_80/manifest.tsv"
check "sm_90a: 16 warps of 32x32 compiled" grep -q "^pick_t128x128x32_w32x32	compiled" "$T/f16h_90/manifest.tsv"
# pad_smem 0: IREE's no_reduce_shared_memory_bank_conflicts compiles, its
# PTX differs from the padded one's, the shared-memory rule counts no pad.
differ() { [ -s "$1" ] && [ -s "$2" ] && ! cmp -s "$1" "$2"; }
for out in f16_80 bf16_90 f16h_90; do
	check "$out: unpadded rows compiled" grep -q "^pick_t128x128x32_w32x32_nopad	compiled" "$T/$out/manifest.tsv"
	check "$out: unpadded rows change the PTX" differ "$T/$out/pick_t128x128x32_w32x32.ptx" "$T/$out/pick_t128x128x32_w32x32_nopad.ptx"
done
check "ragged 1000^3: tiles padded up to it compiled (IREE's padding)" ge "$(grep -Ec '^(pick_)?t.*	compiled' "$T/rag_80/manifest.tsv")" 4
check "ragged 1000^3: 128x128x32 compiled" grep -q "^pick_t128x128x32_w32x32	compiled" "$T/rag_80/manifest.tsv"
check "sm_86: unpadded 256x256x128 refused at 128 KiB" \
    grep -q "^pick_t256x256x128_w64x64_nopad	compile_failed.*refused: rule shared-memory: 131072 bytes" "$T/f16_86/manifest.tsv"
check "batch matmul: the op is linalg.batch_matmul" grep -q "^# batch_matmul_4x512x384x256_f16t_f16t_f32t" "$T/bmm_80/manifest.tsv"
check "transposed B: the op reads B stored NxK" grep -q "^# matmul_512x384x256_f16t_f16n_f32t" "$T/mtb_80/manifest.tsv"
for out in bmm_80 bmm_90 mtb_80 mtb_90; do
	check "$out: 128x128x32 of 16 warps compiled" grep -q "^pick_t128x128x32_w32x32	compiled" "$T/$out/manifest.tsv"
done

# autosched space with gpu_arch; gpu_arch where it means nothing.
cat > "$T/mm.mlir" << 'M'
func.func @mm(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf16>, tensor<512x512xf16>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
M
printf '[Env]\ninput_file = mm.mlir\nbackend = iree\ngpu_arch = sm_90a\n[SearchSpace]\npipeline_depth = [2]\n' > "$T/g.cfg"
"$AS" space "$T/g.cfg" --count > "$T/space.txt" 2>&1
check "space --count with gpu_arch = sm_90a" grep -q "valid configs" "$T/space.txt"
check "space says pipeline_depth is ignored here" grep -q "pipeline_depth.*not applicable to backend iree-cuda" "$T/space.txt"
check "space says pipeline_depth does nothing on this target" grep -q "pipeline_depth (IREE's prefetch_num_stages) does nothing" "$T/space.txt"
# pad_smem in the default space: 0 only with pack_b 1, so (pack_b, pad_smem)
# takes 3 values where pad_smem = [1] leaves 2.
check "space lists pad_smem [0,1]" grep -q "pad_smem  *\[0,1\]" "$T/space.txt"
printf '[Env]\ninput_file = mm.mlir\nbackend = iree\ngpu_arch = sm_90a\n[SearchSpace]\npad_smem = [1]\n' > "$T/pad1.cfg"
"$AS" space "$T/pad1.cfg" --count > "$T/pad1.txt" 2>&1
all=$(sed -n 's/.*: \([0-9]*\) valid configs.*/\1/p' "$T/space.txt")
pad1=$(sed -n 's/.*: \([0-9]*\) valid configs.*/\1/p' "$T/pad1.txt")
check "space --count counts pad_smem (3/2 of pad_smem = [1]: $all, $pad1)" eq "$((${all:-0} * 2))" "$((${pad1:-1} * 3))"
# A batch matmul and a matmul of B stored NxK: the space of each.
cat > "$T/bmm.mlir" << 'M'
func.func @bmm(%a: tensor<4x512x256xf16>, %b: tensor<4x256x384xf16>, %c: tensor<4x512x384xf32>) -> tensor<4x512x384xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x512x256xf16>, tensor<4x256x384xf16>) outs(%c : tensor<4x512x384xf32>) -> tensor<4x512x384xf32>
  return %r : tensor<4x512x384xf32>
}
M
cat > "$T/mtb.mlir" << 'M'
func.func @mtb(%a: tensor<512x256xf16>, %b: tensor<384x256xf16>, %c: tensor<512x384xf32>) -> tensor<512x384xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<512x256xf16>, tensor<384x256xf16>) outs(%c : tensor<512x384xf32>) -> tensor<512x384xf32>
  return %r : tensor<512x384xf32>
}
M
for f in bmm mtb; do
	printf '[Env]\ninput_file = %s.mlir\nbackend = iree\ngpu_arch = sm_80\n' $f > "$T/$f.cfg"
	"$AS" space "$T/$f.cfg" --count > "$T/$f.space.txt" 2>&1
	check "space --count for $f: exit 0" eq "$?" 0
	check "space --count for $f counts configs" grep -Eq "[1-9][0-9]* valid configs" "$T/$f.space.txt"
done
check "space of the batch matmul names it" grep -q "batch_matmul_4x512x384x256" "$T/bmm.space.txt"
printf '[Env]\ninput_file = mm.mlir\ngpu_arch = sm_80\n' > "$T/cpu.cfg"
"$AS" space "$T/cpu.cfg" --count > "$T/cpu.txt" 2>&1
check "gpu_arch on mlir-cpu is exit 2" eq "$?" 2
check "gpu_arch on mlir-cpu names the line" grep -q "cpu.cfg:3.*gpu_arch" "$T/cpu.txt"
printf '[Env]\ninput_file = mm.mlir\nbackend = iree\ngpu_arch = sm_75\n' > "$T/bad.cfg"
"$AS" space "$T/bad.cfg" --count > "$T/bad.txt" 2>&1
check "an unknown gpu_arch is exit 2" eq "$?" 2
check "an unknown gpu_arch lists the known ones" grep -q "sm_80, sm_86, sm_89, sm_90a" "$T/bad.txt"

# A whole run on "sm_80" with a stand-in harness (fixtures/fake_gpu_measure.sh:
# the protocol, no GPU): candidates compiled, measured through the executor,
# recorded verified; the reference is cuBLAS; export --format iree-spec says
# IREE ignores specs on CUDA; annotate writes the TileAndFuse compilation_info.
mkdir -p "$T/run"
cp "$T/mm.mlir" "$T/run/"
printf '[Env]\ninput_file = mm.mlir\nbackend = iree\ngpu_arch = sm_80\n[SearchSpace]\ntile_m = [64,128]\ntile_n = [64,128]\ntile_k = [32]\nvector_m = [32,64]\nvector_n = [64]\npack_b = [1]\n[SearchStrategy]\ntuner = GridTuner\nn_trial = 3\n' > "$T/run/g.cfg"
AUTOSCHED_GPU_MEASURE=$SRC/tests/backends/fixtures/fake_gpu_measure.sh AUTOSCHED_WORK=$T/work \
    timeout 600 "$AS" run "$T/run/g.cfg" --db "$T/run/s.db" > "$T/run/out.txt" 2>&1
check "run with gpu_arch = sm_80: exit 0" eq "$?" 0
check "run: verified trials of backend iree-cuda" ge "$(sqlite3 "$T/run/s.db" "select count(*) from trials t join targets g on g.id = t.target_id where t.status = 'ok' and t.verified = 1")" 3
check "run: the reference is cuBLAS" grep -q "cublas" "$T/run/out.txt"
"$AS" export --db "$T/run/s.db" --format iree-spec -o "$T/run/spec.mlir" 2> "$T/run/export.txt"
check "export iree-spec says IREE ignores specs on CUDA" grep -q "never reads a tuning spec for CUDA" "$T/run/export.txt"
"$AS" annotate "$T/run/mm.mlir" --db "$T/run/s.db" -o "$T/run/ann.mlir" 2> "$T/run/ann.txt"
check "annotate writes the TileAndFuse compilation_info" grep -q "iree_gpu.pipeline<TileAndFuse>" "$T/run/ann.mlir"
IC=$(command -v iree-compile || echo "${AUTOSCHED_IREE_VENV:-$HOME/.cache/autosched/iree-3.13.0}/bin/iree-compile")
check "the annotated program compiles for CUDA sm_80" timeout 300 "$IC" "$T/run/ann.mlir" \
    --iree-hal-target-backends=cuda --iree-cuda-target=sm_80 -o "$T/run/ann.vmfb"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
