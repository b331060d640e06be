#!/usr/bin/env bash
# Hostile and careless input to `autosched run`, `submit`, `analyze` and
# `space`: nothing destroyed, nothing hung, nothing leaked. Each class of
# issue 11 has its block; most are refusals (exit 2, nothing written) that
# cost no measurement.
#   test_harden.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
FIX=$SRC/tests/job/fixtures
scratch harden
private_work
BG=
trap '[ -n "$BG" ] && kill -9 $BG 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

has() { grep -q -- "$2" "$1" || { echo "  $1 lacks '$2':" >&2; head -c 600 "$1" >&2; return 1; }; }
same() { cmp -s "$1" "$2" || { echo "  $1 changed" >&2; return 1; }; }

# mkcfg DIR KEY=VALUE-LINES: a cfg for the small f32 matmul; extra lines from stdin.
mkcfg() {
	local dir=$1
	mkdir -p "$dir"
	cp "$FIX/small_f32.mlir" "$dir/m.mlir"
	{
		printf '[Env]\ninput_file = m.mlir\n'
		cat
		printf '[SearchSpace]\ntile_m = [16,32]\ntile_n = [16,48]\ntile_k = [8,32]\n'
		printf '[SearchStrategy]\ntuner = grid\nn_trial = 2\n'
		printf '[Measure]\nmin_time = 0.01\nmin_reps = 3\nconfirm_top = 0\ntimeout = 5\n'
	} > "$dir/a.cfg"
}

# --- 1. Data loss: output_file naming the store, its WAL, the input, the cfg,
# or a file the job did not write; through run and submit.
D=$T/out
mkcfg "$D" < /dev/null
sqlite3 "$D/s.db" "PRAGMA journal_mode=WAL; CREATE TABLE keep(x); INSERT INTO keep VALUES (42);" > /dev/null
: > "$D/s.db-wal"
echo "my notes" > "$D/notes.txt"
cp "$D/s.db" "$D/s.db.orig"; cp "$D/m.mlir" "$D/m.mlir.orig"; cp "$D/notes.txt" "$D/notes.orig"
mkdir -p "$D/sub"
for target in s.db s.db-wal m.mlir sub/../m.mlir a.cfg notes.txt; do
	sed -i "/^output_file/d" "$D/a.cfg"
	sed -i "2i output_file = $target" "$D/a.cfg"
	timeout 60 "$AS" run "$D/a.cfg" --db "$D/s.db" > "$D/run.out" 2> "$D/run.err"
	check "output_file = $target: run exit 2" eq "$?" 2
	check "output_file = $target: the refusal names output_file" has "$D/run.err" "output_file"
	timeout 60 "$AS" submit "$D/a.cfg" --db "$D/s.db" > /dev/null 2> "$D/sub.err"
	check "output_file = $target: submit exit 2" eq "$?" 2
done
check "the store survived" same "$D/s.db" "$D/s.db.orig"
check "the store still answers" eq "$(q "$D/s.db" "select x from keep")" 42
check "the input survived" same "$D/m.mlir" "$D/m.mlir.orig"
check "the notes survived" same "$D/notes.txt" "$D/notes.orig"
check "the cfg was not overwritten" has "$D/a.cfg" "^input_file = m.mlir"
# The store through a symbolic link spelling.
ln -s s.db "$D/link.db"
sed -i "/^output_file/d" "$D/a.cfg"; sed -i "2i output_file = link.db" "$D/a.cfg"
timeout 60 "$AS" run "$D/a.cfg" --db "$D/s.db" > /dev/null 2>&1
check "output_file = a link to the store: exit 2" eq "$?" 2
check "the store survived the link" same "$D/s.db" "$D/s.db.orig"
# report_file (the HTML report) under the same one writer (issue 19).
sed -i "/^output_file/d" "$D/a.cfg"
# Devices: private look-alikes (tests/checks.sh), never the machine's own.
mkdir "$D/dev"
DNULL=$(dev_like null "$D/dev")
DFULL=$(dev_like full "$D/dev")
DSTDOUT=$(link_like_stdout "$D/dev")
for target in s.db s.db-wal m.mlir a.cfg notes.txt link.db "$DNULL"; do
	sed -i "/^report_file/d" "$D/a.cfg"
	sed -i "2i report_file = $target" "$D/a.cfg"
	timeout 60 "$AS" run "$D/a.cfg" --db "$D/s.db" > "$D/run.out" 2> "$D/run.err"
	check "report_file = $target: run exit 2" eq "$?" 2
	check "report_file = $target: the refusal names report_file" has "$D/run.err" "report_file"
done
check "report_file: the store survived" same "$D/s.db" "$D/s.db.orig"
check "report_file: the store still answers" eq "$(q "$D/s.db" "select x from keep")" 42
check "report_file: the input survived" same "$D/m.mlir" "$D/m.mlir.orig"
check "report_file: the notes survived" same "$D/notes.txt" "$D/notes.orig"
check "report_file: the cfg was not overwritten" has "$D/a.cfg" "^input_file = m.mlir"
check "report_file = $DNULL: still a character device" test -c "$DNULL"
sed -i "/^report_file/d" "$D/a.cfg"
sed -i "2i output_file = same.out\nreport_file = same.out" "$D/a.cfg"
timeout 60 "$AS" run "$D/a.cfg" --db "$D/s.db" > "$D/run.out" 2> "$D/run.err"
check "output_file = report_file: exit 2" eq "$?" 2
check "output_file = report_file: the refusal names both" has "$D/run.err" "output_file.*report_file"
check "output_file = report_file: nothing written" test ! -e "$D/same.out"
for dev in "$DFULL" "$DSTDOUT"; do
	sed -i "/^output_file/d; /^report_file/d" "$D/a.cfg"
	sed -i "2i output_file = $dev" "$D/a.cfg"
	timeout 60 "$AS" run "$D/a.cfg" --db "$D/s.db" > /dev/null 2> "$D/run.err"
	check "output_file = $dev: exit 2" eq "$?" 2
done
check "output_file = $DFULL: still a character device" test -c "$DFULL"
check "output_file = $DSTDOUT: still a link" test -L "$DSTDOUT"
sed -i "/^output_file/d" "$D/a.cfg"

# --- 2. Special files: a FIFO as cfg, as MLIR, as the daemon's conf never blocks.
mkfifo "$T/fifo.cfg" "$T/fifo.mlir"
timeout 10 "$AS" run "$T/fifo.cfg" --db "$T/fifo.db" > /dev/null 2> "$T/fifo.err"
check "run of a FIFO cfg: exit 2, no hang" eq "$?" 2
check "the FIFO is named as not a regular file" has "$T/fifo.err" "not a regular file"
timeout 10 "$AS" submit "$T/fifo.cfg" --db "$T/fifo.db" > /dev/null 2>&1
check "submit of a FIFO cfg: exit 2, no hang" eq "$?" 2
timeout 10 "$AS" analyze "$T/fifo.mlir" > /dev/null 2>&1
check "analyze of a FIFO: exit 2, no hang" eq "$?" 2
timeout 10 "$AS" space "$T/fifo.cfg" > /dev/null 2>&1
check "space of a FIFO cfg: exit 2, no hang" eq "$?" 2
check "nothing written for the FIFOs" test ! -e "$T/fifo.db"

# --- 3. Nesting: a deeply nested file is refused before MLIR's parser recurses.
python3 -c "
n = 100000
print('func.func @f() attributes {a = ' + '[' * n + ']' * n + '} { return }')" > "$T/deep.mlir"
timeout 60 "$AS" analyze "$T/deep.mlir" > /dev/null 2> "$T/deep.err"
check "analyze of a 100000-deep file: exit 2 (no crash)" eq "$?" 2
check "the refusal says nesting" has "$T/deep.err" "nest"
mkcfg "$T/deep" < /dev/null
cp "$T/deep.mlir" "$T/deep/m.mlir"
timeout 60 "$AS" run "$T/deep/a.cfg" --db "$T/deep/s.db" > /dev/null 2>&1
check "run of a deep file: exit 2 (no crash)" eq "$?" 2
timeout 60 "$AS" submit "$T/deep/a.cfg" --db "$T/deep/s.db" > /dev/null 2>&1
check "submit of a deep file: exit 2 (no crash)" eq "$?" 2
check "nothing written for the deep file" test ! -e "$T/deep/s.db"

# --- 4. Sizes: buffers over the memory limit, and products that overflow.
mksize() {	# mksize DIR M N K
	mkcfg "$1" < /dev/null
	cat > "$1/m.mlir" <<MLIR
func.func @big(%a: tensor<${2}x${4}xf32>, %b: tensor<${4}x${3}xf32>, %c: tensor<${2}x${3}xf32>) -> tensor<${2}x${3}xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<${2}x${4}xf32>, tensor<${4}x${3}xf32>) outs(%c : tensor<${2}x${3}xf32>) -> tensor<${2}x${3}xf32>
  return %0 : tensor<${2}x${3}xf32>
}
MLIR
}
mksize "$T/big" 65536 65536 65536
timeout 60 "$AS" run "$T/big/a.cfg" --db "$T/big/s.db" > /dev/null 2> "$T/big.err"
check "65536^3: run exit 2" eq "$?" 2
check "65536^3: names the memory limit" has "$T/big.err" "memory"
timeout 60 "$AS" submit "$T/big/a.cfg" --db "$T/big/s.db" > /dev/null 2>&1
check "65536^3: submit exit 2" eq "$?" 2
mksize "$T/wrap" 2147483648 16 2147483648
timeout 60 "$AS" run "$T/wrap/a.cfg" --db "$T/wrap/s.db" > /dev/null 2> "$T/wrap.err"
check "2^31x16x2^31: run exit 2" eq "$?" 2
check "nothing written for the big shapes" test ! -e "$T/big/s.db" -o -e "$T/wrap/s.db"

# --- 5. Threads and CPUs: more threads than measurement CPUs, CPUs the machine lacks.
mkcfg "$T/thr" <<'C'
C
sed -i 's/^tile_k = .*/&\nthreads = [1,128]/' "$T/thr/a.cfg"
timeout 60 "$AS" run "$T/thr/a.cfg" --db "$T/thr/s.db" --cpus 0 > /dev/null 2> "$T/thr.err"
check "threads 128 on one CPU: exit 2" eq "$?" 2
check "the refusal names threads" has "$T/thr.err" "threads"
timeout 60 "$AS" submit "$T/thr/a.cfg" --db "$T/thr/s.db" > /dev/null 2>&1
check "threads 128: submit exit 2" eq "$?" 2
mkcfg "$T/cpu" < /dev/null
timeout 60 "$AS" run "$T/cpu/a.cfg" --db "$T/cpu/s.db" --cpus 4000 > /dev/null 2> "$T/cpu.err"
check "--cpus 4000: exit 2" eq "$?" 2
check "--cpus 4000: says the CPU does not exist" has "$T/cpu.err" "4000"
timeout 60 "$AS" run "$T/cpu/a.cfg" --db "$T/cpu/s.db" --cpus 0,0 > /dev/null 2>&1
check "--cpus 0,0: exit 2" eq "$?" 2
check "nothing written for bad CPUs" test ! -e "$T/cpu/s.db" -a ! -e "$T/thr/s.db"

# --- 6. One validator: submit refuses what run refuses.
mkcfg "$T/eps" < /dev/null
sed -i 's/^n_trial = 2/&\nepsilon = 2/' "$T/eps/a.cfg"
timeout 60 "$AS" run "$T/eps/a.cfg" --db "$T/eps/s.db" > /dev/null 2>&1
check "epsilon = 2: run exit 2" eq "$?" 2
timeout 60 "$AS" submit "$T/eps/a.cfg" --db "$T/eps/s.db" > /dev/null 2>&1
check "epsilon = 2: submit exit 2" eq "$?" 2
mkcfg "$T/empty" < /dev/null
# No register tile fits its cache tile: an empty space.
sed -i 's/^tile_m = .*/tile_m = [2]\nvector_m = [4]/' "$T/empty/a.cfg"
timeout 60 "$AS" submit "$T/empty/a.cfg" --db "$T/empty/s.db" > /dev/null 2>&1
check "empty space: submit exit 2" eq "$?" 2
check "nothing queued by refused submits" test ! -e "$T/eps/s.db" -a ! -e "$T/empty/s.db"

# --- 7. Transient failures: a full disk or a missing tool is the environment's
# failure, not the candidate's: the job fails with the reason, nothing is
# recorded as compile_failed, and a later run measures those configs.
mkdir -p "$T/fake"
real=$(sed -n 's/^LLVM_VERSION=//p' "$SRC/toolchain.env")
for tool in mlir-opt mlir-translate clang-$real; do
	cat > "$T/fake/$tool" <<SH
#!/bin/sh
case "\$1" in --version) exec /usr/lib/llvm-$real/bin/$tool "\$@";; esac
echo "error: could not write output: No space left on device" >&2
exit 1
SH
	chmod +x "$T/fake/$tool"
done
mkcfg "$T/env" < /dev/null
AUTOSCHED_LLVM_BIN=$T/fake timeout 120 "$AS" run "$T/env/a.cfg" --db "$T/env/s.db" > /dev/null 2> "$T/env.err"
rc=$?
check "full disk: the job does not succeed" test "$rc" -ne 0 -a "$rc" -ne 124
check "full disk: the reason is given" has "$T/env.err" "No space left"
check "full disk: no compile_failed recorded" eq "$(q "$T/env/s.db" "select count(*) from trials where status = 'compile_failed'")" 0
check "full disk: the job is marked failed" eq "$(q "$T/env/s.db" "select state from jobs")" failed
# A legacy 'error' row is not taken as a result on resume.
timeout 120 "$AS" run "$T/env/a.cfg" --db "$T/env/s.db" --quiet > /dev/null 2>&1
check "after the disk: the run succeeds" eq "$?" 0
q "$T/env/s.db" "update trials set status = 'error', gflops = 0 where phase = 'tune'"
timeout 120 "$AS" run "$T/env/a.cfg" --db "$T/env/s.db" --json > "$T/env.json" 2>/dev/null
check "error rows are measured again" python3 -c "
import json,sys; d=json.load(open('$T/env.json')); sys.exit(0 if d['ops'][0]['measured'] == 2 else 1)"

# A replay_db that is not a regular file: refused up front (exit 2) with its key.
mkcfg "$T/replayfifo" <<'E'
backend = replay
replay_db = f.db
E
mkfifo "$T/replayfifo/f.db"
timeout 20 "$AS" run "$T/replayfifo/a.cfg" --db "$T/replayfifo/s.db" > /dev/null 2> "$T/replayfifo.err"
check "a FIFO replay_db is refused (exit 2)" eq "$?" 2
check "the refusal names the key" has "$T/replayfifo.err" "a.cfg:4: \[Env\] replay_db: .*f.db: not a regular file"

# --- 8. Abandoned jobs and a second runner of the same job.
mkcfg "$T/lease" < /dev/null
sed -i "s/^n_trial = 2/n_trial = 16/; s/^min_time = 0.01/min_time = 1/" "$T/lease/a.cfg"
"$AS" run "$T/lease/a.cfg" --db "$T/lease/s.db" --quiet > /dev/null 2>&1 &
BG=$!
for i in $(seq 1 300); do
	[ "$(q "$T/lease/s.db" "select count(*) from trials" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
timeout 30 "$AS" run "$T/lease/a.cfg" --db "$T/lease/s.db" --quiet > /dev/null 2> "$T/lease2.err"
check "a second runner of the same job is refused" eq "$?" 2
check "the refusal names the running job" has "$T/lease2.err" "running"
check "the refusal names the holder's pid" has "$T/lease2.err" "(pid $BG)"
kill -9 $BG; wait $BG 2>/dev/null; BG=
check "the killed job is still 'running' in the store" eq "$(q "$T/lease/s.db" "select state from jobs")" running
"$AS" status --db "$T/lease/s.db" 1 > "$T/lease.status" 2>&1
check "status says the job is abandoned" has "$T/lease.status" "abandoned"
timeout 10 "$AS" cancel 1 --db "$T/lease/s.db" > "$T/lease.cancel" 2>&1
check "cancel of an abandoned job: exit 0" eq "$?" 0
check "cancel of an abandoned job ends it at once" eq "$(q "$T/lease/s.db" "select state from jobs")" cancelled

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
