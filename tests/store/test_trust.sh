#!/usr/bin/env bash
# The store as a trust boundary (issue 19): a store path naming a FIFO or a
# folder is refused at once, strings from the store reach MLIR, HTML and the
# terminal escaped for each, and absurd knob values in a stored best config
# are refused by every reader.
#   test_trust.sh AUTOSCHED AUTOSCHEDD SOURCE_DIR MLIR_OPT
. "$(dirname "$0")/../checks.sh"
args AS ASD SRC OPT
scratch trust
unset AUTOSCHED_DB
export AUTOSCHED_WORK=$T/work

# --- 1. A FIFO (or a folder) as the store: exit 2 at once, with the message.
mkfifo "$T/fifo.db"
mkdir "$T/dir.db"
MSG='not a regular file; expected an SQLite store'
# refused WHAT COMMAND...: exit 2 within the timeout, stderr naming the path.
refused() {
	local what=$1
	shift
	timeout "${TRUST_TIMEOUT:-20}" "$@" > "$T/out.txt" 2> "$T/err.txt"
	check "$what: exit 2" eq "$?" 2
	check "$what: says why" grep -q "$MSG" "$T/err.txt"
}
for db in "$T/fifo.db" "$T/dir.db"; do
	k=$(basename "$db")
	refused "best --db $k" "$AS" best --db "$db"
	refused "status --db $k" "$AS" status --db "$db"
	refused "export --db $k" "$AS" export --format transform --db "$db"
	refused "report --db $k" "$AS" report --db "$db" -o "$T/r.html"
	refused "watch --once --db $k" "$AS" watch --once --db "$db"
	refused "AUTOSCHED_DB=$k best" env AUTOSCHED_DB="$db" "$AS" best
	refused "AUTOSCHED_DB=$k status" env AUTOSCHED_DB="$db" "$AS" status
	refused "AUTOSCHED_DB=$k export" env AUTOSCHED_DB="$db" "$AS" export --format iree-spec
	refused "AUTOSCHED_DB=$k watch --once" env AUTOSCHED_DB="$db" "$AS" watch --once
	printf '[autoschedd]\ndatabase = %s\n' "$db" > "$T/d.conf"
	refused "autoschedd -n, database $k" "$ASD" -n -f "$T/d.conf"
	refused "autoschedd -d, database $k" "$ASD" -d -f "$T/d.conf"
done
check "no report written" test ! -e "$T/r.html"
# SQLite's files and the service's beside a store are held to the same.
touch "$T/b.db"
mkfifo "$T/b.db-wal"
MSG="b.db-wal: not a regular file; expected the store's SQLite write-ahead log"
refused "best, a FIFO as the store's -wal" "$AS" best --db "$T/b.db"
rm "$T/b.db-wal"
mkfifo "$T/b.db.lock"
printf '[autoschedd]\ndatabase = %s\n' "$T/b.db" > "$T/d.conf"
timeout "${TRUST_TIMEOUT:-20}" "$ASD" -d -f "$T/d.conf" > /dev/null 2> "$T/err.txt"
check "autoschedd, a FIFO as DB.lock: exit 1 at once" eq "$?" 1
check "autoschedd, a FIFO as DB.lock: says why" grep -q "b.db.lock: not a regular file; expected the store's lock file" "$T/err.txt"
rm "$T/b.db.lock"
# A lock file is truncated for the pid: never one holding anything else, nor
# a second name of another file (the store itself).
printf '[[package]]\nname = "x"\n' > "$T/b.db.lock"
timeout "${TRUST_TIMEOUT:-20}" "$ASD" -d -f "$T/d.conf" > /dev/null 2> "$T/err.txt"
check "autoschedd, a foreign file as DB.lock: exit 1 at once" eq "$?" 1
check "autoschedd, a foreign file as DB.lock: says why" grep -q "b.db.lock: holds something other than a process id" "$T/err.txt"
check "autoschedd, a foreign file as DB.lock: kept" grep -q '^name = "x"$' "$T/b.db.lock"
rm "$T/b.db.lock"
echo 'keep me' > "$T/b.db"
ln "$T/b.db" "$T/b.db.lock"
timeout "${TRUST_TIMEOUT:-20}" "$ASD" -d -f "$T/d.conf" > /dev/null 2> "$T/err.txt"
check "autoschedd, DB.lock a hard link: exit 1 at once" eq "$?" 1
check "autoschedd, DB.lock a hard link: says why" grep -q "b.db.lock: has 2 names (a hard link)" "$T/err.txt"
check "autoschedd, DB.lock a hard link: its file kept" grep -q '^keep me$' "$T/b.db"
rm "$T/b.db.lock" "$T/b.db"
touch "$T/b.db"
echo keep > "$T/b.db.wake"
"$ASD" -d -f "$T/d.conf" > /dev/null 2> "$T/err.txt" &
dpid=$!
for _ in $(seq 200); do
	grep -q "b.db.wake: not a socket" "$T/err.txt" && break
	sleep 0.1
done
kill "$dpid" 2> /dev/null
wait "$dpid" 2> /dev/null
check "autoschedd says why it cannot be woken" grep -q "b.db.wake: not a socket" "$T/err.txt"
check "autoschedd leaves a file that is not its socket as DB.wake" grep -q keep "$T/b.db.wake"
rm -f "$T/b.db"*

# A store with best configs for two ops (a few seconds), and copies of it
# tampered with by sqlite3 as anyone who can write the store could.
tuned_store "$AS" "$T" "$SRC/tests/export/fixtures"
# tamper NAME SQL: $T/NAME.db, a copy of the store with SQL applied.
tamper() {
	cp "$T/s.db" "$T/$1.db"
	sqlite3 "$T/$1.db" "$2"
}
BEST="phase IN ('tune', 'confirm', 'final')"

# --- 2. Strings from the store reach MLIR, HTML and the terminal escaped.
# MLIR: a newline in a config name or the CPU string adds no line of IR.
INJ="char(10) || '} transform.yield' || char(10) || 'module {' || char(13) || '}'"
tamper inj "UPDATE trials SET config_name = config_name || $INJ WHERE $BEST;
    UPDATE targets SET cpu = cpu || $INJ"
for fmt in transform iree-spec; do
	"$AS" export --db "$T/s.db" --format $fmt -o "$T/clean.mlir"
	"$AS" export --db "$T/inj.db" --format $fmt -o "$T/inj.mlir"
	check "$fmt: export of the tampered store exits 0" eq "$?" 0
	check "$fmt: no extra lines" eq "$(wc -l < "$T/inj.mlir")" "$(wc -l < "$T/clean.mlir")"
	check "$fmt: no injected line" bash -c "! grep -q '^} transform.yield\|^module {\$' '$T/inj.mlir'"
	check "$fmt: no carriage return" bash -c "! grep -q \$'\\r' '$T/inj.mlir'"
	check "$fmt: the name is kept, escaped" grep -q 'tile_16x16x16_vec_[46]x16x1_thr_1[a-z_]*\\n} transform.yield\\nmodule {\\x0d}' "$T/inj.mlir"
done
"$AS" export --db "$T/inj.db" --format transform -o "$T/inj.mlir"
deadline 120 "$OPT" "$T/tuned.mlir" --transform-preload-library=transform-library-paths="$T/inj.mlir" \
    --transform-interpreter -o "$T/inj_out.mlir" 2> "$T/opt.txt"
check "the tampered store's library parses and applies (mlir-opt)" eq "$?" 0
"$AS" export --db "$T/inj.db" --format iree-spec --iree-matcher upstream -o "$T/inj_spec.mlir"
deadline 120 "$OPT" --allow-unregistered-dialect "$T/tuned.mlir" \
    --transform-preload-library=transform-library-paths="$T/inj_spec.mlir" \
    --transform-interpreter=entry-point=__kernel_config -o /dev/null 2> "$T/opt.txt"
check "the tampered store's IREE spec parses and runs (mlir-opt)" eq "$?" 0
"$AS" build "$T/tuned.mlir" --db "$T/inj.db" -o "$T/inj.so" > /dev/null 2> "$T/build.txt"
check "build with the tampered names exits 0" eq "$?" 0

# HTML: markup in a job's tuner, a phase, a config name or an op name is text.
XSS="'<script>alert(1)</script>\"'"
tamper xss "UPDATE jobs SET tuner = $XSS, cfg_path = $XSS, error = $XSS;
    UPDATE ops SET name = name || $XSS"
"$AS" report --db "$T/xss.db" -o "$T/xss.html" > /dev/null 2> "$T/report.txt"
check "report of the tampered store exits 0" eq "$?" 0
check "report: no raw <script>alert" bash -c "! grep -q '<script>alert' '$T/xss.html'"
check "report: the tuner shown escaped" grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/xss.html"
check "report: one <script> element (its own)" eq "$(grep -o '<script>' "$T/xss.html" | wc -l)" 1

# Terminal: an escape sequence in a cfg path, a log line, a config name.
ESC="char(27) || '[2J' || char(27) || ']0;pwned' || char(7)"
tamper esc "UPDATE jobs SET cfg_path = 'x' || $ESC || '.cfg', tuner = 'grid' || $ESC,
    error = 'e' || $ESC;
    UPDATE trials SET config_name = config_name || $ESC WHERE $BEST;
    UPDATE ops SET name = name || $ESC;
    INSERT INTO job_log (job_id, time, level, message) SELECT id, 0, 'info' || $ESC, 'm' || $ESC FROM jobs"
# raw FILE: no ESC or BEL byte in it.
raw() { ! LC_ALL=C grep -q "$(printf '[\033\007]')" "$1"; }
for c in "status" "status 1" "status --json" "best" "best --format csv" "log 1" "watch --once 1"; do
	# shellcheck disable=SC2086
	timeout 20 "$AS" $c --db "$T/esc.db" > "$T/term.txt" 2>&1
	check "$c: exit 0" eq "$?" 0
	check "$c: no raw escape sequence" raw "$T/term.txt"
done
"$AS" status --db "$T/esc.db" > "$T/term.txt"
check "status: the cfg path printed escaped" grep -qF 'x\x1b[2J\x1b]0;pwned\x07.cfg' "$T/term.txt"

# Numbers: an infinite or NaN measurement reads as none (no NaN in a chart, no inf on a terminal).
tamper huge "UPDATE trials SET gflops = 9e999, runtime_ms = -9e999 WHERE $BEST;
    UPDATE trials SET cv = 9e999 - 9e999"
check "huge: the tampered store holds inf" eq "$(sqlite3 "$T/huge.db" "SELECT count(*) FROM trials WHERE gflops > 1e308")" \
    "$(sqlite3 "$T/huge.db" "SELECT count(*) FROM trials WHERE $BEST")"
"$AS" report --db "$T/huge.db" -o "$T/huge.html" > /dev/null 2>&1
check "huge: report exits 0" eq "$?" 0
check "huge: report draws no NaN or inf" bash -c "! grep -qiwE 'inf|-?nan' '$T/huge.html'"
for c in "status 1" "best" "watch --once 1"; do
	# shellcheck disable=SC2086
	timeout 20 "$AS" $c --db "$T/huge.db" > "$T/term.txt" 2>&1
	check "huge: $c prints no inf or nan" bash -c "! grep -qiwE 'inf|-?nan' '$T/term.txt'"
done

# --- 3. Absurd knob values in a stored best config (pad_smem 1: a knob
# mlir-cpu lacks): refused by every reader.
for kv in tile_m=0 tile_n=-16 tile_k=2147483648 threads=1000 pack_b=7 pad_smem=1 \
    vector_n=48 block_dim_x=4; do
	k=${kv%=*}
	v=${kv#*=}
	tamper knob "UPDATE trials SET $kv WHERE $BEST"
	for c in "export --format transform" "export --format iree-spec" "export --format json" \
	    "annotate $T/tuned.mlir" "build $T/tuned.mlir -o $T/k.so" \
	    "best --format json" "best" "report -o $T/k.html"; do
		rm -f "$T/k.so" "$T/k.html"
		# shellcheck disable=SC2086
		timeout 60 "$AS" $c --db "$T/knob.db" > "$T/out.txt" 2> "$T/err.txt"
		check "$kv: $c: exit 2" eq "$?" 2
		check "$kv: $c: names store, op, config and knob" \
		    grep -q "store $T/knob.db: op .*: config tile_.*: $k $v: .*expected" "$T/err.txt"
		check "$kv: $c: emits nothing" test ! -s "$T/out.txt" -a ! -e "$T/k.so" -a ! -e "$T/k.html"
	done
	timeout 20 "$AS" status 1 --db "$T/knob.db" > /dev/null 2> "$T/err.txt"
	check "$kv: status 1: exit 2" eq "$?" 2
	check "$kv: status 1: names the knob" grep -q ": $k $v: " "$T/err.txt"
done

# --- 4. Figures outside any physical range, ops no program has (issue 31):
# refused by every reader naming the table, the row and the column, not
# printed as a 309-digit number.
tamper absurd "UPDATE trials SET gflops = 1e300"
tamper negms "UPDATE trials SET runtime_ms = -3"
tamper opm "UPDATE ops SET m = -1"
tamper optype "UPDATE ops SET lhs = 'f99'"
for case in "absurd:column gflops: 1e+300: expected 0 to 1e+09" \
    "negms:column runtime_ms: -3: expected 0 to 1e+10" \
    "opm:ops, row [0-9]*, column m: -1: expected 1 to 1099511627776" \
    "optype:ops, row [0-9]*, column lhs: not an element type"; do
	db=${case%%:*}
	want=${case#*:}
	for c in "best" "best --format json" "export --format transform" "report -o $T/a.html"; do
		rm -f "$T/a.html"
		# shellcheck disable=SC2086
		timeout 60 "$AS" $c --db "$T/$db.db" > "$T/out.txt" 2> "$T/err.txt"
		check "$db: $c: exit 2" eq "$?" 2
		check "$db: $c: names table, row and column" grep -q "store $T/$db.db: table .*$want" "$T/err.txt"
		check "$db: $c: no 309-digit number" bash -c "! grep -qE '[0-9]{40}' '$T/out.txt' '$T/err.txt'"
		check "$db: $c: emits nothing" test ! -s "$T/out.txt" -a ! -e "$T/a.html"
	done
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
