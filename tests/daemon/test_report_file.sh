# autoschedd and report_file =: the service writes a job's HTML report beside
# its store (job-ID.html) and says so in the job's log; a [Problem] sweep
# submitted as one job runs through the service, every op tuned.
. "$(dirname "$0")/lib.sh"

mkjob a 32 32 16 3
printf '[Env]\nreport_file = wanted-here.html\n' > "$T/hdr"
sed -i -e '/^\[Env\]/r '"$T/hdr" -e '/^\[Env\]/d' "$T/a.cfg"
cat > "$T/sweep.cfg" <<'CFG'
[Problem]
problem_m = [16, 32]
problem_n = 16
problem_k = 16
[SearchSpace]
tile_m = [16]
tile_n = [16]
tile_k = [8,16]
[SearchStrategy]
n_trial = 2
[Measure]
min_time = 0.01
min_reps = 3
confirm_top = 0
CFG

start_daemon
id1=$("$AS" submit "$T/a.cfg" --db "$DB") || fail "submit a"
id2=$("$AS" submit "$T/sweep.cfg" --db "$DB") || fail "submit sweep"
check "both jobs end" wait_for 120 all_ended
check "job $id1 done" is_state "$id1" done
check "the report beside the store" test -s "$T/job-$id1.html"
check "not where the cfg asked" test ! -e "$T/wanted-here.html"
check "the report is of that job" grep -q "id=\"job-$id1\"" "$T/job-$id1.html"
check "the job's log names it" bash -c "'$AS' log '$id1' --db '$DB' | grep -q 'report written to $T/job-$id1.html'"
check "sweep job $id2 done" is_state "$id2" done
check "sweep: no report asked, none written" test ! -e "$T/job-$id2.html"
check "sweep: both ops tuned" [ "$(q "$DB" "SELECT count(DISTINCT op_id) FROM trials WHERE job_id = $id2 AND phase = 'tune'")" -eq 2 ]
# A link planted where the next job's report goes is not followed (issue 19).
echo secret > "$T/victim"
next=$((id2 + 1))
ln -s "$T/victim" "$T/job-$next.html"
id3=$("$AS" submit "$T/a.cfg" --db "$DB") || fail "submit a again"
check "the planted job id" [ "$id3" = "$next" ]
check "job $id3 ends" wait_for 120 all_ended
check "the link's target unchanged" [ "$(cat "$T/victim")" = secret ]
check "the link still a link" test -L "$T/job-$id3.html"
stop_daemon TERM
check "daemon exits 0" [ "$DRC" -eq 0 ]
finish
