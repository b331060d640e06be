# The store is input too (issue 31): rows a member of the store's group
# writes with sqlite3 are held to what autosched writes. A replayed plan
# with a negative or over-large allocation, a job without its program's
# snapshot and a stored cfg naming replay_db: the job fails cleanly (or runs
# without the key), the log and the job's error say which table, row and
# column, and the service lives on.
. "$(dirname "$0")/lib.sh"
mkjob ok 16 16 16 3
mkjob other 24 24 24 3
jobs_n() { q "$DB" "SELECT count(*) FROM jobs"; }
err_of() { q "$DB" "SELECT error FROM jobs WHERE id = $1"; }
# run_queue: the service runs every queued job, then stops.
run_queue() {
	start_daemon
	check "$1: the jobs end" wait_for 120 all_ended
	check "$1: the service is alive (no crash)" kill -0 "$DPID"
	stop_daemon TERM
	check "$1: the service exits 0" [ "$DRC" -eq 0 ]
}

# --- A job's plan, replayed when the service runs it again.
"$AS" submit "$T/ok.cfg" --db "$DB" > "$T/a.id"
a=$(cat "$T/a.id")
run_queue "first run"
check "job $a is done" is_state "$a" done
check "job $a planned rounds" [ "$(q "$DB" "SELECT count(*) FROM allocations WHERE job_id = $a")" -ge 1 ]
first=$(q "$DB" "SELECT min(id) FROM allocations WHERE job_id = $a")
cp "$DB" "$T/clean.db"

# A negative allocation: refused on read, the job fails, no trial more.
before=$(q "$DB" "SELECT count(*) FROM trials")
q "$DB" "UPDATE allocations SET trials = -5 WHERE id = $first;
    UPDATE jobs SET state = 'queued', finished = NULL WHERE id = $a"
run_queue "trials = -5"
check "trials -5: job $a failed" is_state "$a" failed
check "trials -5: its error names table, row and column" grep -qF \
    "table allocations, row $first, column trials: -5: expected 1 to 64" <<< "$(err_of "$a")"
check "trials -5: the log says so" grep -qF "table allocations, row $first, column trials: -5" "$T/daemon.log"
check "trials -5: nothing measured" [ "$(q "$DB" "SELECT count(*) FROM trials")" -eq "$before" ]

# Far too many: the same.
q "$DB" "UPDATE allocations SET trials = 1000000 WHERE id = $first;
    UPDATE jobs SET state = 'queued', finished = NULL WHERE id = $a"
run_queue "trials = 1000000"
check "trials 1000000: job $a failed" is_state "$a" failed
check "trials 1000000: its error names the column" grep -qF \
    "column trials: 1000000: expected 1 to 64" <<< "$(err_of "$a")"

# Within what a round may be, but above n_trial = 3: n_trial still caps it.
cp "$T/clean.db" "$DB"
rm -f "$DB-wal" "$DB-shm"
q "$DB" "UPDATE allocations SET trials = 60 WHERE id = $first;
    UPDATE jobs SET state = 'queued', finished = NULL WHERE id = $a"
run_queue "trials = 60"
check "trials 60: job $a done" is_state "$a" done
check "trials 60: at most n_trial = 3 tune trials" [ "$(tune_trials "$a")" -le 3 ]

# --- A job without its program's snapshot: never read from its path.
cp "$T/other.mlir" "$T/secret.mlir"
chmod 600 "$T/secret.mlir"
"$AS" submit "$T/ok.cfg" --db "$DB" > "$T/b.id"
b=$(cat "$T/b.id")
q "$DB" "UPDATE jobs SET mlir_text = NULL, mlir_path = '$T/secret.mlir',
    cfg_text = replace(cfg_text, 'input_file = ok.mlir', 'input_file = $T/secret.mlir')
    WHERE id = $b"
run_queue "mlir_text NULL"
check "mlir_text NULL: job $b failed" is_state "$b" failed
check "mlir_text NULL: its error names table, row and column" grep -qF \
    "table jobs, row $b, column mlir_text: NULL; expected the program's text" <<< "$(err_of "$b")"
check "mlir_text NULL: the file's op never reached the store" \
    [ "$(q "$DB" "SELECT count(*) FROM ops WHERE m = 24")" -eq 0 ]
check "mlir_text NULL: no ops recorded for the job" \
    [ "$(q "$DB" "SELECT count(*) FROM job_ops WHERE job_id = $b")" -eq 0 ]

# --- replay_db in a stored cfg: dropped, with a log line; the job runs here.
cp "$T/clean.db" "$T/private.db"
chmod 600 "$T/private.db"
"$AS" submit "$T/ok.cfg" --db "$DB" > "$T/c.id"
c=$(cat "$T/c.id")
q "$DB" "UPDATE jobs SET cfg_text = replace(cfg_text, '[Env]', '[Env]
replay_db = $T/private.db') WHERE id = $c"
run_queue "replay_db"
check "replay_db: job $c done" is_state "$c" done
check "replay_db: the log says it was ignored" grep -qF \
    "[Env] replay_db: names a store the service would open when the job runs, with its own rights; a submitted job may not (replay with autosched run): ignored" "$T/daemon.log"
# The same with backend = replay: without its store the job cannot run, and
# nothing of the private store lands in the shared one.
"$AS" submit "$T/ok.cfg" --db "$DB" > "$T/d.id"
d=$(cat "$T/d.id")
q "$DB" "UPDATE jobs SET cfg_text = replace(replace(cfg_text, 'backend = mlir-cpu',
    'backend = replay'), '[Env]', '[Env]
replay_db = $T/private.db') WHERE id = $d"
run_queue "backend replay, replay_db"
check "backend replay: job $d not done" bash -c "[ \"\$(sqlite3 '$DB' 'SELECT state FROM jobs WHERE id = $d')\" != done ]"
check "backend replay: no trial replayed from the private store" [ "$(tune_trials "$d")" -eq 0 ]
finish
