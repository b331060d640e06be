#!/usr/bin/env bash
# executor = batch on CPU candidates (mlir-cpu): stage → autosched-measure
# --batch → ingest → … → finish records what a local run of the same seed
# records; a measured folder with a wrong hash, a wrong op, a duplicate or
# a truncated line is refused (exit 2, file and line named, nothing
# recorded); the same folder ingested twice records nothing the second
# time; kill -9 during an ingest loses nothing; the iree backend's CUDA
# candidates staged and measured through autosched-gpu-measure's protocol.
#   test_batch.sh AUTOSCHED AUTOSCHED-MEASURE SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS MEAS SRC
FIX=$SRC/tests/job/fixtures
scratch batch

# A cfg in folder $1 measured by executor $2.
mkcfg() {
	mkdir -p "$1"
	cp "$FIX/small_f32.mlir" "$1/"
	cat > "$1/a.cfg" <<C
[Env]
input_file = small_f32.mlir
executor = $2
[SearchSpace]
$(space tile_m=16,32,64 tile_n=16,48 tile_k=8,32 threads=1)
[SearchStrategy]
tuner = random
n_trial = 10
seed = 3
[Measure]
min_time = 0.01
min_reps = 3
confirm_top = 2
timeout = 5
C
}

# What a job measured, in order: its baseline, then every tune and noise
# trial (phase, config, and whether it was valid: ok and unstable alike, a
# CV over the limit is the machine's noise); then the final and reference
# counts. Which configs the confirm and final steps measure follows the
# figures (the top few, the winner), so those are compared by their form.
trials_of() {
	q "$1" "select phase || ' ' || config_name || ' ' || case when status in ('ok','unstable') then 'valid' else status end from trials where phase in ('tune','noise') or id = (select min(id) from trials) order by id"
	q "$1" "select phase || ' ' || count(*) from trials where phase in ('final','reference') group by phase order by phase"
}

# 1. The local run, the reference.
mkcfg "$T/local" local
deadline 300 "$AS" run "$T/local/a.cfg" --db "$T/local/s.db" --quiet > "$T/local/out.txt" 2>&1
check "local run exits 0" eq "$?" 0

# 2. The same cfg under executor = batch, trip after trip.
mkcfg "$T/b" batch
cd "$T/b" || exit 1
deadline 300 "$AS" run a.cfg --db s.db --stage r1 --quiet > stage.txt 2>&1
check "stage exits 3" eq "$?" 3
check "stage says where it waits" grep -qx "waiting for measurements in r1" stage.txt
check "stage: the manifest names the kernel by its sha256" bash -c \
    "f=\$(ls r1/f-*.so | head -1); grep -q \"\$(sha256sum < \$f | cut -c1-64)\" r1/manifest"
check "stage: nothing measured here" eq "$(q s.db "select count(*) from trials")" 0
i=1
while [ $i -le 12 ]; do
	deadline 300 "$MEAS" --batch r$i 2> meas$i.txt
	check "round $i measured" eq "$?" 0
	n=$((i + 1))
	deadline 300 "$AS" run a.cfg --db s.db --ingest r$i --stage r$n --quiet > ingest$i.txt 2>&1
	rc=$?
	[ $rc = 3 ] || break
	i=$n
done
check "the last ingest finishes (exit 0)" eq "$rc" 0
check "several trips" ge "$i" 3
check "batch: the job is done" eq "$(q s.db "select state from jobs")" done
check "batch records what the local run records" eq "$(trials_of s.db)" "$(trials_of "$T/local/s.db")"
check "batch: one choice" eq "$(q s.db "select count(*) from choices")" 1
check "batch: the confirm step, 3 rounds of its candidates" eq \
    "$(q s.db "select count(*) = 3 * count(distinct config_name) from trials where phase = 'confirm'")" 1
check "batch: the summary" grep -q "^  vs default  :" ingest$i.txt
check "batch: best answers" bash -c "'$AS' best --db s.db --format csv | grep -q matmul_64x48x32"
check "batch: measured where autosched-measure ran" eq \
    "$(q s.db "select count(*) from trials where host = ''")" 0

# 3. The last folder ingested again: nothing recorded, and said.
before=$(q s.db "select count(*) from trials")
deadline 300 "$AS" run a.cfg --db s.db --ingest r$i --quiet > again.txt 2>&1
check "ingest twice exits 0" eq "$?" 0
check "ingest twice says so" grep -q "r$i: its [0-9]* results are already recorded in job 1" again.txt
check "ingest twice records nothing" eq "$(q s.db "select count(*) from trials")" "$before"
check "ingest twice: still one choice" eq "$(q s.db "select count(*) from choices")" 1

# 4. Damaged results refused: exit 2, file and line named, nothing recorded.
mkcfg "$T/r" batch
cd "$T/r" || exit 1
deadline 300 "$AS" run a.cfg --db s.db --stage r1 --quiet > /dev/null 2>&1
check "refusals: round 1 staged" eq "$?" 3
check "round 1: the baseline and the first 8 tune trials" eq \
    "$(grep -c '"tag":"op 1 baseline' r1/manifest) $(grep -c '"tag":"op 1 tune' r1/manifest)" "1 8"
deadline 300 "$MEAS" --batch r1 2> /dev/null
n0=$(q s.db "select count(*) from trials")
# damage NAME PYTHON: r1 copied to NAME, its results' lines L edited.
damage() {
	rm -rf "$1"
	cp -r r1 "$1"
	python3 - "$1/results" "$2" <<'P'
import json, sys
path, how = sys.argv[1], sys.argv[2]
L = open(path).read().split('\n')	# the last is '' after the end line
if how == 'hash':
    j = json.loads(L[2]); j['entry'] = '0' * 64; L[2] = json.dumps(j)
elif how == 'op':
    j = json.loads(L[3]); j['op'] = 'matmul_other'; L[3] = json.dumps(j)
elif how == 'dup':
    L[4] = L[1]
elif how == 'trunc':
    L = L[:-2]; L[-1] = L[-1][:len(L[-1]) // 2]
open(path, 'w').write('\n'.join(L))
P
}
refused() {	# refused NAME PATTERN
	deadline 300 "$AS" run a.cfg --db s.db --ingest "$1" --stage "s$1" --quiet > "$1.txt" 2>&1
	check "$1: exit 2" eq "$?" 2
	check "$1: names the file and line" grep -q "$2" "$1.txt"
	check "$1: nothing recorded" eq "$(q s.db "select count(*) from trials")" "$n0"
	check "$1: nothing staged" test ! -e "s$1"
}
damage hash hash;	refused hash "hash/results:3: entry 3: hash 0* is not the sha256 of hash/manifest:4"
damage op op;		refused op "op/results:4: entry 4: op \"matmul_other\", but op/manifest:5"
damage dup dup;		refused dup "dup/results:5: entry 2 again (its result is line 2)"
damage trunc trunc;	refused trunc "trunc/results:9: truncated"
rm -rf kern && cp -r r1 kern && printf x >> "$(ls kern/f-*.so | head -1)"
refused kern "kern/f-.*\.so: sha256 .*kern/manifest:[0-9]*"
deadline 300 "$MEAS" --batch kern > /dev/null 2> kern_meas.txt
check "a changed kernel is not measured (exit 2)" eq "$?" 2
check "a changed kernel: named" grep -q "kern/f-.*\.so: sha256" kern_meas.txt
rm -rf envx && cp -r r1 envx && sed -i '2s/"OMP_NUM_THREADS=1"/"LD_PRELOAD=x.so"/' envx/manifest
deadline 300 "$MEAS" --batch envx > /dev/null 2> envx.txt
check "a manifest's loader variable refused (exit 2)" eq "$?" 2
check "a manifest's loader variable: named" grep -q "envx/manifest:2: env: \"LD_PRELOAD=x.so\"" envx.txt
rm -rf refx && cp -r r1 refx && sed -i '3s|"@/f-|"@/../f-|' refx/manifest
deadline 300 "$MEAS" --batch refx > /dev/null 2> refx.txt
check "a path out of the folder refused (exit 2)" eq "$?" 2
check "a path out of the folder: named" grep -q "refx/manifest:3: argv: @/../f-" refx.txt
mkdir -p other && cp a.cfg other/ && cp small_f32.mlir other/
deadline 300 "$AS" run other/a.cfg --db s.db --ingest r1 --stage x --quiet > other.txt 2>&1
check "another cfg's folder: exit 2" eq "$?" 2
check "another cfg's folder: said" grep -q "r1/manifest: staged for the cfg" other.txt
mkdir -p r9 && cp r1/manifest r9/
deadline 300 "$AS" run a.cfg --db s.db --stage r9 --quiet > again_stage.txt 2>&1
check "staging into a staged folder: exit 2" eq "$?" 2
sed 's/^executor = batch/executor = local/' a.cfg > l.cfg
deadline 300 "$AS" run l.cfg --db s.db --stage z --quiet > l.txt 2>&1
check "--stage without executor = batch: exit 2" eq "$?" 2
deadline 300 "$AS" run a.cfg --db s.db --quiet > nostage.txt 2>&1
check "executor = batch without --stage: exit 2" eq "$?" 2
check "executor = batch without --stage: says how" grep -q "run \`autosched run .* --stage DIR\`" nostage.txt

# 5. kill -9 during an ingest (compiling afresh: slow enough to be caught
# midway; its own process, not a deadline wrapper, is killed: the test's
# watchdog bounds it), then the same ingest again: nothing lost, nothing twice.
AUTOSCHED_WORK=$T/r/fresh "$AS" run a.cfg --db s.db --ingest r1 --stage k3 --quiet > kill.txt 2>&1 &
pid=$!
while kill -0 $pid 2> /dev/null; do
	n=$(q s.db "select count(*) from trials where phase='tune'" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 2 ] && break
	sleep 0.05
done
kill -9 $pid 2> /dev/null
wait $pid 2> /dev/null
check "kill: some trials were in before the kill" ge "$(q s.db "select count(*) from trials where phase='tune'")" 2
deadline 300 "$AS" run a.cfg --db s.db --ingest r1 --stage k3b --quiet > kill2.txt 2>&1
check "kill: the ingest again stages the next round" eq "$?" 3
check "kill: integrity ok" eq "$(q s.db "pragma integrity_check")" ok
check "kill: every result of the folder recorded once" eq \
    "$(q s.db "select count(*) || ' ' || count(distinct config_name) from trials where phase='tune'")" "8 8"

# 6. xgboost over several ops (its transfer from the other shapes in the
# store): every ingest asks for all of its folder, trip after trip (a rerun
# that trained on records newer than the op's search proposed other configs
# and the folder went unused), the ops' finishes share their trips, and the
# job records what a local run records.
mkxgb() {
	mkdir -p "$1"
	cp "$FIX/four_ops.mlir" "$1/"
	cat > "$1/x.cfg" <<C
[Env]
input_file = four_ops.mlir
executor = $2
[SearchSpace]
threads = [1]
[SearchStrategy]
tuner = xgboost
trial_budget = 48
seed = 1
[Measure]
min_time = 0.005
min_reps = 3
confirm_top = 0
timeout = 5
C
}
mkxgb "$T/xl" local
deadline 300 "$AS" run "$T/xl/x.cfg" --db "$T/xl/s.db" --quiet > "$T/xl/out.txt" 2>&1
check "xgboost: the local run exits 0" eq "$?" 0
mkxgb "$T/xb" batch
cd "$T/xb" || exit 1
deadline 300 "$AS" run x.cfg --db s.db --stage r1 --quiet > stage.txt 2>&1
i=1 unused=0
while [ $i -le 16 ]; do
	deadline 300 "$MEAS" --batch r$i 2> /dev/null
	n=$((i + 1))
	deadline 300 "$AS" run x.cfg --db s.db --ingest r$i --stage r$n --quiet > ingest$i.txt 2>&1
	rc=$?
	grep -q "already recorded\|the others were already" ingest$i.txt && unused=$((unused + 1))
	[ $rc = 3 ] || break
	i=$n
done
check "xgboost: the last ingest finishes (exit 0)" eq "$rc" 0
check "xgboost: every folder's results asked for and recorded" eq "$unused" 0
check "xgboost: one folder carries the final rounds of all four ops" eq \
    "$(cat r$i/manifest | grep -o '"tag":"op [0-9]* final' | sort -u | wc -l)" 4
check "xgboost: batch records what the local run records" eq "$(trials_of s.db)" "$(trials_of "$T/xl/s.db")"

# 7. The iree backend's CUDA candidates (gpu_arch = sm_90a): staged the
# same way, PTX and autosched-gpu-measure lines; measured by the harness's
# stand-in (tests/backends/fixtures: its protocol, no GPU) to the end of
# the job; the real harness's --batch here says there is no GPU, and that
# folder's ingest records nothing. Skipped where IREE's tools are missing.
mkdir -p "$T/g" && cd "$T/g" || exit 1
cat > mm.mlir << 'M'
func.func @mm(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<512x512xf16>, tensor<512x512xf16>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
M
printf '[Env]\ninput_file = mm.mlir\nbackend = iree\ngpu_arch = sm_90a\nexecutor = batch\n[SearchSpace]\ntile_m = [64,128]\ntile_n = [64,128]\ntile_k = [32]\nvector_m = [32,64]\nvector_n = [64]\npack_b = [1]\n[SearchStrategy]\ntuner = grid\nn_trial = 3\n' > g.cfg
GM=$(dirname "$(dirname "$(dirname "$MEAS")")")/measure/autosched-gpu-measure
FAKE=$SRC/tests/backends/fixtures/fake_gpu_measure.sh
AUTOSCHED_WORK=$T/g/work AUTOSCHED_GPU_MEASURE=$FAKE deadline 300 "$AS" run g.cfg --db s.db --stage r1 --quiet > stage.txt 2>&1
rc=$?
if [ $rc = 2 ] && grep -qi "iree" stage.txt; then
	echo "SKIP: the CUDA round trip: $(head -1 stage.txt)" >&2
else
	check "cuda: stage exits 3" eq "$rc" 3
	check "cuda: a PTX kernel named by its sha256" bash -c "ls r1/f-*.ptx > /dev/null"
	check "cuda: an autosched-gpu-measure line with its launch shape" \
	    grep -q '"harness":"gpu","argv":\["--op","512,512,512,f16f32".*"--kernel","candidate,@/f-[0-9a-f]*\.ptx,[a-z_0-9]*,[0-9]*,1,1,[0-9]*,1,1,[0-9]*"' r1/manifest
	rm -rf nogpu && cp -r r1 nogpu
	if [ -x "$GM" ] && ! deadline 30 "$GM" --probe > /dev/null 2>&1; then
		deadline 300 "$GM" --batch nogpu 2> /dev/null
		check "cuda: the real harness measures a folder (exit 0)" eq "$?" 0
		check "cuda: no GPU here: its result says so" grep -q '"status":3,.*no NVIDIA driver here' nogpu/results
		AUTOSCHED_WORK=$T/g/work deadline 300 "$AS" run g.cfg --db s.db --ingest nogpu --stage n2 --quiet > nogpu.txt 2>&1
		check "cuda: no GPU: the ingest fails" eq "$?" 1
		check "cuda: no GPU: said" grep -q "no GPU to measure on here" nogpu.txt
		check "cuda: no GPU: nothing recorded" eq "$(q s.db "select count(*) from trials")" 0
	fi
	i=1
	while [ $i -le 8 ]; do
		AUTOSCHED_GPU_MEASURE=$FAKE deadline 300 "$MEAS" --batch r$i 2> /dev/null
		n=$((i + 1))
		AUTOSCHED_WORK=$T/g/work AUTOSCHED_GPU_MEASURE=$FAKE deadline 300 "$AS" run g.cfg --db s.db --ingest r$i --stage r$n --quiet > ingest$i.txt 2>&1
		rc=$?
		[ $rc = 3 ] || break
		i=$n
	done
	check "cuda: the last ingest finishes (exit 0)" eq "$rc" 0
	check "cuda: every trial verified" eq "$(q s.db "select count(*) from trials where status = 'ok' and (verified = 1 or phase = 'reference')")" "$(q s.db "select count(*) from trials")"
	check "cuda: the reference is cuBLAS" grep -q "cublas" ingest$i.txt
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
