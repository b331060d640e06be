#!/usr/bin/env bash
# Wrong behaviours of issue 31, each its block: a failed run leaves the
# previous complete CSV in place; a store on a read-only file system (or a
# read-only file) is readable by best, report and export.
#   test_issue31.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
scratch issue31
private_work
cat > "$T/m.mlir" <<MLIR
func.func @m(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
MLIR
printf '[Env]\ninput_file = m.mlir\noutput_file = out.csv\n[SearchSpace]\ntile_m = [8,16]\n[SearchStrategy]\nn_trial = 2\n[Measure]\nmin_time = 0.02\nmin_reps = 3\nconfirm_top = 0\n' > "$T/c.cfg"

# --- A failed rerun leaves the complete CSV of the run before it.
timeout 300 "$AS" run "$T/c.cfg" --db "$T/s.db" > /dev/null 2>&1
check "first run exits 0" eq "$?" 0
cp "$T/out.csv" "$T/first.csv"
check "first run: a CSV with rows" ge "$(wc -l < "$T/out.csv")" 3
AUTOSCHED_MEASURE=$T/no-harness timeout 120 "$AS" run "$T/c.cfg" --db "$T/s.db" --fresh > /dev/null 2> "$T/err.txt"
check "failed rerun: exit nonzero" test "$?" -ne 0
check "failed rerun: the earlier CSV kept" cmp -s "$T/out.csv" "$T/first.csv"
check "failed rerun: says so" grep -qF "out.csv: left as it was (this run failed" "$T/err.txt"
check "failed rerun: no temporary left" bash -c "[ -z \"\$(ls -A '$T' | grep -v -e '^out.csv\$' -e '^first.csv\$' -e '^c.cfg\$' -e '^m.mlir\$' -e '^s.db' -e '^work\$' -e '^err.txt\$')\" ]"
# Without an earlier CSV a failed run still leaves what it has.
rm "$T/out.csv"
AUTOSCHED_MEASURE=$T/no-harness timeout 120 "$AS" run "$T/c.cfg" --db "$T/s.db" --fresh > /dev/null 2>&1
check "failed first run: its CSV (the header) written" test -s "$T/out.csv"

# --- A run killed mid-compile leaves its scratch folder: the next run removes it.
sh -c 'exit 0' &
dead=$!
wait "$dead"
sleep 300 &
alive=$!
for p in "$dead" "$alive"; do
	mkdir -p "$T/work/mlir-cpu/0123456789abcdef.tmp.$p.1"
	echo '// half a dispatch' > "$T/work/mlir-cpu/0123456789abcdef.tmp.$p.1/dispatch.mlir"
done
# and its CSV's temporary beside out.csv.
echo 'half a CSV' > "$T/.out.csv.$dead.AbC123"
echo 'being written' > "$T/.out.csv.$alive.AbC123"
timeout 300 "$AS" run "$T/c.cfg" --db "$T/s.db" --fresh > /dev/null 2>&1
check "next run: exit 0" eq "$?" 0
check "next run: a dead run's CSV temporary removed" test ! -e "$T/.out.csv.$dead.AbC123"
check "next run: a live process's CSV temporary kept" test -e "$T/.out.csv.$alive.AbC123"
rm -f "$T/.out.csv.$alive.AbC123"
check "next run: a dead run's scratch folder removed" test ! -e "$T/work/mlir-cpu/0123456789abcdef.tmp.$dead.1"
check "next run: a live process's scratch folder kept" test -e "$T/work/mlir-cpu/0123456789abcdef.tmp.$alive.1/dispatch.mlir"
kill "$alive"
wait "$alive" 2> /dev/null

# --- One tuning of an op and target at a time, whatever the cfg's path.
mkdir -p "$T/l1" "$T/l2" "$T/l3"
for d in l1 l2 l3; do cp "$T/m.mlir" "$T/$d/"; done
sed 's/^n_trial = 2$/n_trial = 16/; s/^min_time = 0.02$/min_time = 1/; /^output_file/d' "$T/c.cfg" > "$T/l1/c.cfg"
cp "$T/l1/c.cfg" "$T/l2/c.cfg"
sed '/^output_file/d' "$T/c.cfg" > "$T/l3/c.cfg"
"$AS" run "$T/l1/c.cfg" --db "$T/l.db" --quiet > /dev/null 2>&1 &
bg=$!
for _ in $(seq 300); do
	[ "$(sqlite3 -cmd ".timeout 5000" "$T/l.db" "SELECT count(*) FROM trials" 2> /dev/null)" -ge 1 ] 2> /dev/null && break
	sleep 0.1
done
timeout 60 "$AS" run "$T/l2/c.cfg" --db "$T/l.db" --quiet > /dev/null 2> "$T/err.txt"
check "the same op from a copied cfg: exit 2" eq "$?" 2
check "the same op from a copied cfg: names the op" grep -qF "$T/l2/c.cfg: op matmul_16x16x16_f32t_f32t_f32t (backend mlir-cpu) is being tuned by another process on $T/l.db: refused, nothing written" "$T/err.txt"
check "the same op from a copied cfg: no job of it" eq "$(sqlite3 -cmd ".timeout 5000" "$T/l.db" "SELECT count(*) FROM jobs WHERE cfg_path LIKE '%/l2/%'")" 0
kill -9 "$bg"
wait "$bg" 2> /dev/null
timeout 300 "$AS" run "$T/l3/c.cfg" --db "$T/l.db" --quiet > /dev/null 2> "$T/err.txt"
check "the holder killed, the op's lease is free: exit 0" eq "$?" 0
# The killed run's row: "running" until the next run of its cfg marks it.
killed=$(sqlite3 "$T/l.db" "SELECT id FROM jobs WHERE cfg_path = '$T/l1/c.cfg'")
check "killed run: its row left running" eq "$(sqlite3 "$T/l.db" "SELECT state FROM jobs WHERE id = $killed")" running
cp "$T/l3/c.cfg" "$T/l1/c.cfg"
timeout 300 "$AS" run "$T/l1/c.cfg" --db "$T/l.db" --quiet > /dev/null 2> "$T/err.txt"
check "next run of its cfg: exit 0" eq "$?" 0
check "next run of its cfg: the killed row marked failed" eq "$(sqlite3 "$T/l.db" "SELECT state FROM jobs WHERE id = $killed")" failed
check "next run of its cfg: says why" grep -qF "abandoned: its run ended without closing it (killed)" <<< "$(sqlite3 "$T/l.db" "SELECT error FROM jobs WHERE id = $killed")"
check "next run of its cfg: said on stderr" grep -qF "job $killed, an earlier run of $T/l1/c.cfg that was killed, marked failed (abandoned)" "$T/err.txt"

# --- A store on a read-only file system: best, report, export read it.
if [ "$(id -u)" -eq 0 ] && mkdir -p "$T/ro" && mount -t tmpfs none "$T/ro" 2> /dev/null; then
	trap 'umount "$T/ro" 2> /dev/null; rm -rf "$T"' EXIT
	cp "$T/s.db" "$T/ro/s.db"
	mount -o remount,ro "$T/ro"
	for c in "best" "best --format json" "export --format transform" "export --format json" \
	    "report -o $T/ro.html" "status"; do
		# shellcheck disable=SC2086
		timeout 60 "$AS" $c --db "$T/ro/s.db" > "$T/out.txt" 2> "$T/err.txt"
		check "read-only fs: $c: exit 0" eq "$?" 0
		check "read-only fs: $c: no error" test ! -s "$T/err.txt"
	done
	check "read-only fs: the report written" test -s "$T/ro.html"
	# A write-ahead log with commits the file lacks: said what to do.
	umount "$T/ro"
	mount -t tmpfs none "$T/ro"
	cp "$T/s.db" "$T/ro/s.db"
	printf 'not empty' > "$T/ro/s.db-wal"
	mount -o remount,ro "$T/ro"
	timeout 60 "$AS" best --db "$T/ro/s.db" > "$T/out.txt" 2> "$T/err.txt"
	check "read-only fs, a -wal: exit 2" eq "$?" 2
	check "read-only fs, a -wal: says what to do" grep -qF "holds commits the store lacks" "$T/err.txt"
	umount "$T/ro"
fi

# A reader who may not write the store's folder (before its -wal and -shm
# exist): read as immutable, not "attempt to write a readonly database".
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1 && command -v runuser > /dev/null &&
    runuser -u nobody -- test -x "$AS"; then
	R=$(mktemp -d /tmp/autosched-issue31-ro-XXXXXX)
	cp "$T/s.db" "$R/s.db"
	chmod 755 "$R"
	chmod 644 "$R/s.db"
	runuser -u nobody -- "$AS" best --db "$R/s.db" > "$T/out.txt" 2> "$T/err.txt"
	check "another user's store, its folder read-only to us: exit 0" eq "$?" 0
	check "another user's store: no error" test ! -s "$T/err.txt"
	check "another user's store: the best config listed" grep -q "matmul_16x16x16" "$T/out.txt"
	rm -rf "$R"
fi

# --- Messages reworded (each says what is wrong, where, what to do).
# msg WHAT RC WANT COMMAND...: the command exits RC and stderr has WANT.
msg() {
	local what=$1 rc=$2 want=$3
	shift 3
	timeout 60 "$@" > "$T/out.txt" 2> "$T/err.txt"
	check "$what: exit $rc" eq "$?" "$rc"
	check "$what: says '$want'" grep -qF -- "$want" "$T/err.txt"
}
# An unknown job: one answer (exit 2) from every reader.
for c in "best" "best --format json" "export --format json" "export --format transform" \
    "annotate $T/m.mlir" "build $T/m.mlir -o $T/x.so" "report -o $T/x.html"; do
	# shellcheck disable=SC2086
	msg "unknown job: $c" 2 "store $T/s.db: no job 999 (autosched status --db $T/s.db lists the jobs)" \
	    "$AS" $c --job 999 --db "$T/s.db"
done
msg "--job 2^64" 2 "--job 18446744073709551616: expected a job id" "$AS" best --job 18446744073709551616 --db "$T/s.db"
msg "status 2^64" 2 '"18446744073709551616" is not a job id' "$AS" status 18446744073709551616 --db "$T/s.db"
msg "--emit-dispatch ''" 2 "--emit-dispatch : expected an op index" "$AS" analyze "$T/m.mlir" --emit-dispatch ''
# Stores of another schema version.
cp "$T/s.db" "$T/v.db"
sqlite3 "$T/v.db" "PRAGMA user_version = -1"
msg "user_version -1" 2 "schema version -1 (PRAGMA user_version): not one autosched writes" "$AS" best --db "$T/v.db"
sqlite3 "$T/v.db" "PRAGMA user_version = 3"
msg "user_version 3: best" 2 "is older than this autosched's (10); migrate it once, as a user who may write it, with any command that writes the store (autosched submit or run --db $T/v.db" "$AS" best --db "$T/v.db"
msg "user_version 3 over version 9 tables: cancel" 2 "migrating the schema from version 3 to 4: " "$AS" cancel 1 --db "$T/v.db"
check "user_version 3 over version 9 tables: says why" grep -qF "its tables are not those of version 3 (PRAGMA user_version changed by hand?); nothing changed" "$T/err.txt"
check "user_version 3: nothing changed" eq "$(sqlite3 "$T/v.db" "PRAGMA user_version")" 3
# SQLite's files beside a store, links: named as such.
cp "$T/s.db" "$T/l.db"
ln -s "$T/elsewhere" "$T/l.db-wal"
msg "-wal a symbolic link" 2 "l.db-wal: not a regular file (a symbolic link, which SQLite does not follow); expected the store's SQLite write-ahead log" \
    "$AS" best --db "$T/l.db"

# A full stdout: the reason, as every command says it.
timeout 60 "$AS" export --format transform --db "$T/s.db" > /dev/full 2> "$T/err.txt"
check "export transform > /dev/full: exit 1" eq "$?" 1
check "export transform > /dev/full: No space left on device" grep -qF "stdout: No space left on device" "$T/err.txt"
# An output folder no file can be made in: refused before the work.
msg "build -o /proc/self/x.so" 2 "-o /proc/self/x.so: cannot make a file in folder /proc/self" \
    "$AS" build "$T/m.mlir" --db "$T/s.db" -o /proc/self/x.so
check "build -o /proc/self/x.so: refused before compiling" bash -c "! grep -q 'mlir-opt\|dispatch' '$T/err.txt'"
msg "generate -o /proc/self" 2 "-o /proc/self/sweep.cfg: cannot make a file in folder /proc/self" \
    "$AS" generate --problem-m 16:33:16 --problem-n 16 --problem-k 16 -o /proc/self

# [Problem] sizes over the memory limit: the cfg named, the limit's source.
printf '[Problem]\nproblem_m = 100000000\nproblem_n = 16\nproblem_k = 16\n[SearchSpace]\ntile_m = [8]\n' > "$T/p.cfg"
msg "[Problem] too large" 2 "autosched: $T/p.cfg: matmul_100000000x16x16_f32t_f32t_f32t (matmul at $T/p.cfg[Problem]:" \
    "$AS" run "$T/p.cfg" --db "$T/p.db"
check "[Problem] too large: no (null)" bash -c "! grep -q '(null)' '$T/err.txt'"
msg "AUTOSCHED_MEMORY_LIMIT=100" 2 "above the memory limit of 100 MiB (AUTOSCHED_MEMORY_LIMIT; raise it, in MiB)" \
    env AUTOSCHED_MEMORY_LIMIT=100 "$AS" run "$T/p.cfg" --db "$T/p.db"
msg "AUTOSCHED_MEMORY_LIMIT=12x" 2 "warning: AUTOSCHED_MEMORY_LIMIT=12x: not a number of MiB from 1 to 2^40; ignored" \
    env AUTOSCHED_MEMORY_LIMIT=12x "$AS" run "$T/p.cfg" --db "$T/p.db"
check "AUTOSCHED_MEMORY_LIMIT=12x: the limit's source" grep -qF "(half of physical memory: AUTOSCHED_MEMORY_LIMIT=12x is not a number" "$T/err.txt"

# ops_at_once with executor local: said, not ignored without a word.
sed 's/^output_file = out.csv$/ops_at_once = 4/' "$T/c.cfg" > "$T/o.cfg"
timeout 300 "$AS" run "$T/o.cfg" --db "$T/o.db" > /dev/null 2> "$T/err.txt"
check "ops_at_once, executor local: exit 0" eq "$?" 0
check "ops_at_once, executor local: warned" grep -qF "$T/o.cfg: [Env] ops_at_once: for an executor that places measurements on nodes (executor = slurm); measured here one op and one compile at a time: ignored" "$T/err.txt"
check "ops_at_once, executor local: in the job's log" [ "$(sqlite3 "$T/o.db" "SELECT count(*) FROM job_log WHERE message LIKE '%ops_at_once:%ignored'")" -eq 1 ]

# space and run: one validator, one answer for report_file = STORE-wal.
printf '[Env]\ninput_file = m.mlir\ndatabase = w.db\nreport_file = w.db-wal\n[SearchSpace]\ntile_m = [8]\n' > "$T/w.cfg"
for c in space run; do
	msg "report_file = STORE-wal: $c" 2 "[Env] report_file: $T/w.db-wal: that is a side file of the store" "$AS" $c "$T/w.cfg"
done

# build of nested modules, or of two top-level modules: said at the line.
printf 'module {\n  module @inner {\n%s\n  }\n}\n' "$(cat "$T/m.mlir")" > "$T/nested.mlir"
msg "build nested module" 2 "$T/nested.mlir:2:3: a module inside the program's module (or a second top-level module); build compiles one module of functions" \
    "$AS" build "$T/nested.mlir" --db "$T/s.db" -o "$T/n.so"
printf 'module {\n%s\n}\nmodule {\n%s\n}\n' "$(cat "$T/m.mlir")" "$(sed 's/@m(/@m2(/' "$T/m.mlir")" > "$T/two.mlir"
msg "build two modules" 2 "a module inside the program's module (or a second top-level module)" \
    "$AS" build "$T/two.mlir" --db "$T/s.db" -o "$T/t.so"
check "build two modules: no deleted temporary named" bash -c "! grep -q 'autosched-build-' '$T/err.txt'"

# A function named like build's marker: refused by the name checks.
sed 's/@m(/@autosched_built_library(/' "$T/m.mlir" > "$T/bl.mlir"
msg "@autosched_built_library" 2 'function @"autosched_built_library": taken by the marker autosched puts in every library it builds' \
    "$AS" build "$T/bl.mlir" --db "$T/s.db" -o "$T/bl.so"

# annotate over an earlier compilation_info: said, not silently replaced.
timeout 60 "$AS" annotate "$T/m.mlir" --db "$T/s.db" -o "$T/a1.mlir" 2> /dev/null
msg "annotate twice" 0 "already has a compilation_info: replaced by the tuned one" \
    "$AS" annotate "$T/a1.mlir" --db "$T/s.db" -o "$T/a2.mlir"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
