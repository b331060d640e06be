# autoschedd end to end: three jobs, kill -9 in the middle of the second,
# restart: all finish, nothing measured twice, a sound store, and the same
# trials as `autosched run`. Then SIGTERM mid-job, restart, resume; submits
# taken while a job runs; status and best answer while the daemon writes.
. "$(dirname "$0")/lib.sh"

mkjob a 64 32 32 5
mkjob b 32 64 32 8
mkjob c 32 32 64 4
mkjob d 64 64 32 8

# What `autosched run` records for the same cfgs, in a store (and compile
# cache) of its own. Exit 1 (nothing valid found) is an outcome too.
RUNDB=$T/run.db
for j in a b c d; do
	AUTOSCHED_WORK=$T/work-run "$AS" run --db "$RUNDB" --quiet "$T/$j.cfg" \
	    > /dev/null 2> "$T/run.log"
	rc=$?
	[ $rc -le 1 ] || fail "autosched run $j.cfg (exit $rc): $(tail -n 3 "$T/run.log")"
done

start_daemon
id1=$("$AS" submit "$T/a.cfg" --db "$DB") || fail "submit a"
id2=$("$AS" submit "$T/b.cfg" --db "$DB") || fail "submit b"
check "job 1 runs" wait_for 60 is_state "$id1" running
# A submit while a job runs is taken.
id3=$("$AS" submit "$T/c.cfg" --db "$DB") || fail "submit c"
check "job 3 queued" is_state "$id3" queued

# kill -9 in the middle of the second job.
check "job 2 starts measuring" wait_for 120 has_trials "$id2" 2
check "job 2 still running" is_state "$id2" running
before=$(tune_trials "$id2")
stop_daemon KILL
check "job 2 left running by the crash" is_state "$id2" running
check "integrity after kill -9" integrity_ok "$DB"

start_daemon
check "all three finish after the restart" wait_for 120 all_ended
for id in "$id1" "$id2" "$id3"; do
	check "job $id done" is_state "$id" done
done
check "job 2 resumed, not restarted ($before before the crash)" \
    [ "$(tune_trials "$id2")" -ge "$before" ]
grep -q "left running by a crash" "$T/daemon.log" ||
    fail "the restart did not say it requeued job 2"

# SIGTERM mid-job: back in the queue, exit 0 at the next trial boundary, then resumed.
id4=$("$AS" submit "$T/d.cfg" --db "$DB") || fail "submit d"
check "job 4 starts measuring" wait_for 60 has_trials "$id4" 1
# status and best answer while the daemon writes.
for i in 1 2 3 4 5; do
	"$AS" status "$id4" --db "$DB" > "$T/status.out" || fail "status while running"
	"$AS" status --db "$DB" --json > /dev/null || fail "status --json while running"
	"$AS" best --all --db "$DB" > /dev/null || fail "best --all while running"
done
grep -q "^job $id4: running" "$T/status.out" || fail "status says running"
grep -q "trials:" "$T/status.out" || fail "status shows trials"
stop_daemon TERM
check "SIGTERM: exit 0" [ "$DRC" -eq 0 ]
# Stopped at a trial boundary, not at the end of the job.
check "SIGTERM: stopped before the job's budget" [ "$(tune_trials "$id4")" -lt 8 ]
check "SIGTERM: job 4 back in the queue" is_state "$id4" queued
check "integrity after SIGTERM" integrity_ok "$DB"
start_daemon
check "job 4 resumes and completes" wait_for 120 is_state "$id4" done
stop_daemon TERM

check "no trial measured twice" no_duplicates "$DB"
check "integrity at the end" integrity_ok "$DB"
# Each job's trials equal those of `autosched run` (configs and outcomes).
for id in "$id1" "$id2" "$id3" "$id4"; do
	sig=$(q "$DB" "SELECT DISTINCT o.signature FROM trials t JOIN ops o
	    ON o.id = t.op_id WHERE t.job_id = $id")
	if [ -z "$sig" ] || [ "$(op_trials "$DB" "$sig")" != "$(op_trials "$RUNDB" "$sig")" ]; then
		fail "job $id ($sig): trials differ from autosched run"
		diff <(op_trials "$DB" "$sig") <(op_trials "$RUNDB" "$sig") >&2
	else
		ok
	fi
done
# The log shows what the daemon did.
"$AS" log "$id2" --db "$DB" > "$T/log.out" || fail "log"
check "log has lines" [ -s "$T/log.out" ]
"$AS" status "$id2" --db "$DB" --json > "$T/status.json" || fail "status --json"
check "status --json names the state" grep -q '"state": "done"' "$T/status.json"
finish
