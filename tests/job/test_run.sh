#!/usr/bin/env bash
# Integration tests of `autosched run` with the real toolchain on small
# matmuls: f32, i8 and f16 verified; resume; the CSV and JSON reports; every
# fault kind recorded while the job goes on; kill -9 mid-job then a rerun;
# bad cfgs and bad MLIR refused with exit 2 and nothing written.
#   test_run.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
FIX=$SRC/tests/job/fixtures
scratch job


# A cfg for MLIR file $2 in folder $1, with extra lines from stdin.
mkcfg() {
	local dir=$1 mlir=$2
	mkdir -p "$dir"
	cp "$FIX/$mlir" "$dir/"
	{
		printf '[Env]\ninput_file = %s\noutput_file = out.csv\n' "$mlir"
		cat
		printf '[Measure]\nmin_time = 0.01\nmin_reps = 3\nconfirm_top = 2\ntimeout = 5\n'
	} > "$dir/a.cfg"
}

# 1. f32: a real job, verified, with CSV and JSON reports.
mkcfg "$T/f32" small_f32.mlir <<C
[SearchSpace]
$(space tile_m=16,32,64 tile_n=16,48 tile_k=8,32 threads=1,2)
[SearchStrategy]
tuner = grid
n_trial = 6
C
"$AS" run "$T/f32/a.cfg" --db "$T/f32/s.db" > "$T/f32/out.txt" 2>&1
rc=$?
check "f32 run exits 0" eq "$rc" 0
check "f32: 6 tune trials" eq "$(q "$T/f32/s.db" "select count(*) from trials where phase='tune'")" 6
check "f32: all verified" eq "$(q "$T/f32/s.db" "select count(*) from trials where phase='tune' and verified=1 and status in ('ok','unstable')")" 6
check "f32: baseline, tune, confirm, final, reference recorded" eq \
    "$(q "$T/f32/s.db" "select count(distinct phase) from trials where phase in ('baseline','tune','confirm','final','reference')")" 5
check "f32: the winner measured 5 times after the choice" eq \
    "$(q "$T/f32/s.db" "select count(*) || ' ' || count(distinct config_name) from trials where phase='final'")" "5 1"
check "f32: speedup with a confidence interval" grep -Eq '^  vs default  : [0-9.]+x \[[0-9.]+, [0-9.]+\] 95% CI' "$T/f32/out.txt"
check "f32: the dispatch profiler's block" grep -q '^Verification  : SUCCESS' "$T/f32/out.txt"
check "f32: summary with the library ratio, named" grep -q '^  vs library  : .*openblas:sgemm' "$T/f32/out.txt"
check "f32: CSV header" grep -q '^Provider,op_kind,Operation,bytes,flops' "$T/f32/out.csv"
check "f32: CSV rows" ge "$(wc -l < "$T/f32/out.csv")" 8
check "f32: job done" eq "$(q "$T/f32/s.db" "select state from jobs")" done
check "f32: best answers" bash -c "'$AS' best --db '$T/f32/s.db' --format csv | grep -q matmul_64x48x32"

# 1b. A 2-thread winner is compared with the default at 2 threads (and at
# 1), from rounds measured after the choice; the default is re-measured
# between batches (the noise floor).
mkcfg "$T/thr" small_f32.mlir <<C
[SearchSpace]
$(space tile_m=8,16,32,64 tile_n=16,48 tile_k=8,16,32 threads=2)
[SearchStrategy]
tuner = random
n_trial = 9
C
"$AS" run "$T/thr/a.cfg" --db "$T/thr/s.db" --json --cpus 0,1 > "$T/thr/run.json" 2>"$T/thr/err.txt"
check "2 threads: exit 0" eq "$?" 0
check "2 threads: the baseline at the winner's thread count" python3 -c "
import json,sys; o=json.load(open('$T/thr/run.json'))['ops'][0]
s=o['speedup_ci']; s1=o['speedup_vs_1thread']
ok = o['knobs']['threads']==2 and o['baseline_threads']==2 and \
    s['lo']<=s['est']<=s['hi'] and s['rounds']==5 and s1 is not None and \
    s1['rounds']==5 and o['baseline1_gflops']>0 and o['baseline_gflops']>0
sys.exit(0 if ok else 1)"
check "2 threads: default at 2 threads measured 5 times after the choice" eq \
    "$(q "$T/thr/s.db" "select count(*) from trials where phase='baseline' and threads=2")" 5
# (A default kept, the winner not measurably faster: its own rounds there.)
check "2 threads: the reported GFLOP/s is the median of the final rounds" python3 -c "
import json,sqlite3,statistics,sys; o=json.load(open('$T/thr/run.json'))['ops'][0]
ph='baseline' if o['default_kept'] else 'final'
v=[r[0] for r in sqlite3.connect('$T/thr/s.db').execute(
  \"select gflops from trials where phase=? and config_name=?\", (ph, o['best']))]
sys.exit(0 if len(v)==5 and abs(statistics.median(v)-o['gflops'])<=1e-9*o['gflops'] else 1)"
check "2 threads: the default re-measured between batches" ge \
    "$(q "$T/thr/s.db" "select count(*) from trials where phase='noise' and threads=1")" 1
check "2 threads: a noise floor over the job" python3 -c "
import json,sys; d=json.load(open('$T/thr/run.json')); o=d['ops'][0]
sys.exit(0 if o['noise_measurements']>=7 and d['noise_measurements']>=7 and d['noise_floor_cv']>0 else 1)"
check "2 threads: best answers with the 2-thread baseline" python3 -c "
import json,subprocess,sys
b=json.loads(subprocess.check_output(['$AS','best','--db','$T/thr/s.db','--format','json']))
b=b[0] if isinstance(b,list) else b
o=json.load(open('$T/thr/run.json'))['ops'][0]
sys.exit(0 if abs(b['gflops']-o['gflops'])<=1e-9*o['gflops'] else 1)"
check "2 threads: best's baseline and reference are the job's means at 2 threads" python3 -c "
import json,sqlite3,subprocess,sys
b=json.loads(subprocess.check_output(['$AS','best','--db','$T/thr/s.db','--format','json']))
b=b[0] if isinstance(b,list) else b
db=sqlite3.connect('$T/thr/s.db')
m=lambda ph: db.execute(\"select avg(gflops) from trials where phase=? and threads=2 and status in ('ok','unstable')\", (ph,)).fetchone()[0]
ok = abs(b['baseline_gflops']-m('baseline'))<=1e-9*m('baseline') and abs(b['reference_gflops']-m('reference'))<=1e-9*m('reference')
sys.exit(0 if ok else 1)"

# 2. Resume: the same job again measures no config twice.
"$AS" run "$T/f32/a.cfg" --db "$T/f32/s.db" --json > "$T/f32/run2.json" 2>/dev/null
rc=$?
check "rerun exits 0" eq "$rc" 0
check "rerun: still 6 tune trials" eq "$(q "$T/f32/s.db" "select count(*) from trials where phase='tune'")" 6
check "rerun: JSON says 0 measured, a best" python3 -c "
import json,sys; d=json.load(open('$T/f32/run2.json')); o=d['ops'][0]
sys.exit(0 if o['measured']==0 and o['trials']==6 and o['best'] and o['gflops']>0 else 1)"
"$AS" run "$T/f32/a.cfg" --db "$T/f32/s.db" --fresh --quiet > /dev/null 2>&1
check "--fresh measures again" eq "$(q "$T/f32/s.db" "select count(*) from trials where phase='tune'")" 12

# 3. i8 (exact check) and f16 (rhs transposed), and a file with two ops.
for m in small_i8 small_f16; do
	mkcfg "$T/$m" $m.mlir <<'C'
[SearchSpace]
tile_m = [16,32]
tile_n = [16,32]
tile_k = [16,64]
[SearchStrategy]
tuner = random
n_trial = 3
C
	"$AS" run "$T/$m/a.cfg" --db "$T/$m/s.db" --quiet > "$T/$m/out.txt" 2>&1
	rc=$?
	check "$m exits 0" eq "$rc" 0
	check "$m: verified" eq "$(q "$T/$m/s.db" "select count(*) from trials where phase='tune' and verified=1")" 3
done
# The library ratio is "vs" only when the library computes the op's precision.
check "i8: vs oneDNN's int8 matmul" grep -Eq '^  vs library  : .*onednn:matmul_s8s8s32' "$T/small_i8/out.txt"
check "f16: sgemm is named as not like for like" grep -Eq '^  of library  : .*openblas:sgemm.*not the op.s precision' "$T/small_f16/out.txt"
mkcfg "$T/two" two_ops.mlir <<'C'
[SearchSpace]
tile_m = [16]
tile_n = [16]
tile_k = [16,32]
[SearchStrategy]
n_trial = 2
C
"$AS" run "$T/two/a.cfg" --db "$T/two/s.db" --quiet > "$T/two/out.txt" 2>&1
check "two ops: exit 0" eq "$?" 0
check "two ops: both tuned" eq "$(q "$T/two/s.db" "select count(distinct op_id) from trials where phase='tune'")" 2
check "two ops: the dynamic one reported" grep -q 'not tuned: dynamic' "$T/two/out.txt"

# 4. Faults: each kind is a recorded outcome, the job completes, never best.
fault_case() {	# KIND STATUS
	local d=$T/fault_$1
	mkcfg "$d" small_f32.mlir <<C
[SearchSpace]
$(space tile_m=16,32,64 tile_n=48 tile_k=32 vector_m=4 vector_n=16 threads=1 pack_b=1)
[SearchStrategy]
n_trial = 3
[Measure]
compile_timeout = 5
C
	sed -i 's/^timeout = 5/timeout = 3/' "$d/a.cfg"
	AUTOSCHED_TEST_FAULT="$1:tile_32x48x32" "$AS" run "$d/a.cfg" --db "$d/s.db" \
	    --quiet > "$d/out.txt" 2>&1
	local rc=$?
	check "fault $1: job completes (exit 0)" eq "$rc" 0
	check "fault $1: recorded as $2" eq "$(q "$d/s.db" \
	    "select status from trials where phase='tune' and config_name like 'tile_32x48x32%'")" "$2"
	check "fault $1: the others measured" eq "$(q "$d/s.db" \
	    "select count(*) from trials where phase='tune' and status in ('ok','unstable')")" 2
	check "fault $1: not the best" bash -c "! '$AS' best --db '$d/s.db' --format csv | grep -q tile_32x48x32"
}
fault_case compile_fail compile_failed
fault_case compile_hang compile_timeout
fault_case crash crashed
fault_case hang timeout
fault_case wrong wrong_result

# 5. kill -9 in the middle of a job, then run it again.
mkcfg "$T/kill" small_f32.mlir <<'C'
[SearchSpace]
tile_m = [8,16,32,64]
tile_n = [16,48]
tile_k = [8,16,32]
[SearchStrategy]
tuner = random
n_trial = 10
C
sed -i 's/^min_time = 0.01/min_time = 0.3/' "$T/kill/a.cfg"
"$AS" run "$T/kill/a.cfg" --db "$T/kill/s.db" --quiet > /dev/null 2>&1 &
pid=$!
# (However long a loaded machine takes to get there: the test's own
# deadline bounds the wait, not a count of polls.)
while kill -0 $pid 2> /dev/null; do
	n=$(q "$T/kill/s.db" "select count(*) from trials where phase='tune'" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 3 ] && break
	sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
before=$(q "$T/kill/s.db" "select count(*) from trials where phase='tune'")
check "kill: some trials were in before the kill" ge "$before" 3
"$AS" run "$T/kill/a.cfg" --db "$T/kill/s.db" --quiet > "$T/kill/out.txt" 2>&1
check "kill: rerun exits 0" eq "$?" 0
check "kill: integrity ok" eq "$(q "$T/kill/s.db" "pragma integrity_check")" ok
check "kill: no config measured twice" eq "$(q "$T/kill/s.db" \
    "select count(*) from (select config_name from trials where phase='tune' group by op_id, config_name having count(*) > 1)")" 0
check "kill: the budget is met" eq "$(q "$T/kill/s.db" "select count(distinct config_name) from trials where phase='tune'")" 10

# 6. Bad cfgs and bad MLIR: exit 2, one message, nothing written.
for f in "$SRC"/tests/cfg/bad/*.cfg; do
	name=$(basename "$f" .cfg)
	out=$("$AS" run "$f" --db "$T/bad_$name.db" 2>&1)
	rc=$?
	check "bad cfg $name: exit 2" eq "$rc" 2
	check "bad cfg $name: names the file" bash -c "grep -q '$name.cfg' <<< \"\$1\"" _ "$out"
	check "bad cfg $name: nothing written" test ! -e "$T/bad_$name.db"
done
for f in "$SRC"/tests/analysis/fixtures/bad_*.mlir; do
	name=$(basename "$f" .mlir)
	mkdir -p "$T/$name"
	cp "$f" "$T/$name/"
	printf '[Env]\ninput_file = %s\n' "$name.mlir" > "$T/$name/a.cfg"
	out=$("$AS" run "$T/$name/a.cfg" --db "$T/$name/s.db" 2>&1)
	rc=$?
	check "bad MLIR $name: exit 2" eq "$rc" 2
	check "bad MLIR $name: file:line:col" bash -c "grep -Eq '$name.mlir:[0-9]+:[0-9]+' <<< \"\$1\"" _ "$out"
	check "bad MLIR $name: nothing written" test ! -e "$T/$name/s.db"
done
# A register tile wider than every cache tile listed: no config.
mkcfg "$T/nospace" small_f32.mlir <<'C'
[SearchSpace]
tile_m = [2]
vector_m = [4]
C
"$AS" run "$T/nospace/a.cfg" --db "$T/nospace/s.db" > "$T/nospace/out.txt" 2>&1
check "empty space: exit 2" eq "$?" 2
check "empty space: says why" grep -q 'no valid config' "$T/nospace/out.txt"
check "empty space: nothing written" test ! -e "$T/nospace/s.db"
mkcfg "$T/badtuner" small_f32.mlir <<'C'
[SearchStrategy]
tuner = XGBoostTuner
epsilon = 2
C
"$AS" run "$T/badtuner/a.cfg" --db "$T/badtuner/s.db" > "$T/badtuner/out.txt" 2>&1
check "bad tuner key: exit 2" eq "$?" 2
check "bad tuner key: file, line, key" grep -q 'a.cfg:6: \[SearchStrategy\] epsilon' "$T/badtuner/out.txt"
check "bad tuner key: nothing written" test ! -e "$T/badtuner/s.db"
"$AS" run > /dev/null 2>&1
check "usage: exit 2" eq "$?" 2
"$AS" frobnicate > /dev/null 2>&1
check "unknown command: exit 2" eq "$?" 2

# 7. The seed's example, as written: analyze and space.
check "seed: analyze" bash -c "'$AS' analyze '$SRC/configs/seed/matmul.mlir' --json | grep -q matmul_1024x512x256_f32t_f32t_f32t"
# The seed lists tile_m/n/k only: the register tile and threads are searched
# over the backend's default candidates, the listed knobs stay as listed.
"$AS" space "$SRC/configs/seed/auto-scheduler.cfg" --json > "$T/seed_space.json" 2>/dev/null
check "seed: listed knobs from the cfg, the rest default candidates" python3 -c "
import json,sys; o=json.load(open('$T/seed_space.json'))['ops'][0]; k=o['knobs']
ok = k['tile_m']=={'values':[64,128],'from':'cfg line 10'} and \
    k['tile_k']['values']==[32,64,128,256] and k['vector_m']['from']=='default' and \
    len(k['vector_m']['values'])>1 and len(k['vector_n']['values'])>1 and \
    k['threads']['from']=='default' and o['count']>16
sys.exit(0 if ok else 1)"
mkcfg "$T/pinned" small_f32.mlir <<'C'
[SearchSpace]
threads = [1]
vector_m = [6]
C
"$AS" space "$T/pinned/a.cfg" --json > "$T/pinned/space.json" 2>/dev/null
check "a knob given one value stays pinned" python3 -c "
import json,sys; k=json.load(open('$T/pinned/space.json'))['ops'][0]['knobs']
sys.exit(0 if k['threads']['values']==[1] and k['vector_m']['values']==[6] and len(k['tile_m']['values'])>1 else 1)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
