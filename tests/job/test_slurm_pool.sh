#!/usr/bin/env bash
# The coordinator's compile pool under executor = slurm, on a real local
# Slurm cluster (scripts/slurm-local.sh: nodes n1 and n2, one CPU each),
# with short measurements (min_time 0.05): candidates are compiled two at
# once here while the steps measure, both nodes measure within one batch,
# and what is recorded is what the serial path (compile_jobs = 1) records:
# the same configs in the same order, verified. A two-op job works on its
# two ops at once (each op's series on a node of its own), and is stopped
# and resumed so. Last, a node taken down (scontrol state=down) while a
# two-op job runs: the job ends on n1, exit 0, no recorded trial lost, no
# config twice. Behaviour only, never timings.
# Skips (exit 77, with the reason) when the cluster cannot start here.
#   test_slurm_pool.sh AUTOSCHED SOURCE_DIR   (KEEP=DIR keeps its folder there)
. "$(dirname "$0")/../checks.sh"
args AS SRC
FIX=$SRC/tests/job/fixtures
slurm_up slurm-pool "$SRC"

mkcfg() {	# mkcfg DIR INPUT COMPILE_JOBS: a cfg, its other sections from stdin
	mkdir -p "$1"
	cp "$FIX/$2" "$1/"
	{
		printf '[Env]\ninput_file = %s\nexecutor = slurm\n' "$2"
		printf 'slurm_partition = autosched\nslurm_step_timeout = 60\n'
		printf 'compile_jobs = %s\n' "$3"
		cat
		printf '[Measure]\nmin_time = 0.05\nmin_reps = 3\nconfirm_top = 1\ntimeout = 20\n'
	} > "$1/a.cfg"
}

# 1. The pool: 16 candidates in two batches of 8, compiled two at once
# (compile_jobs = 2, each run with a compile cache of its own: every
# candidate is compiled), measured on both nodes.
space='[SearchSpace]
tile_m = [8,16,32,64]
tile_n = [16,48]
tile_k = [8,32]
threads = [1]
[SearchStrategy]
tuner = grid
n_trial = 16'
mkcfg "$T/pool" small_f32.mlir 2 <<< "$space"
mkcfg "$T/serial" small_f32.mlir 1 <<< "$space"
# Measurements of 1 s: a step is still running when the next candidate
# compiled comes (the pair compiled at once ends close together even on a
# loaded machine), so the batch's steps overlap and Slurm puts the second
# on the other node. (With 0.05 s a step could end before the next compile
# did, on a CI machine running four tests at once: every step on n1.)
sed -i 's/^min_time = 0.05/min_time = 1/' "$T/pool/a.cfg"
"$AS" run "$T/pool/a.cfg" --db "$T/pool/s.db" > "$T/pool/out.txt" 2>&1
rc=$?
check "pool: run exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/pool/out.txt" >&2
check "pool: the log says two compiles at once" eq \
    "$(q "$T/pool/s.db" "select count(*) from job_log where message like 'up to 2 compiles at once here (compile_jobs)'")" 1
check "pool: 16 candidates compiled, two at once at some point" eq \
    "$(q "$T/pool/s.db" "select count(*) from job_log where message like '%: 16 tune candidates compiled here, up to 2 at once (of 2)'")" 1
check "pool: every tune trial compiled (not cached)" eq \
    "$(q "$T/pool/s.db" "select count(*) from trials where phase='tune' and compile_s > 0")" 16
# A batch is 8 tune trials in id order: one of them measured on both nodes.
check "pool: both nodes measured within one batch" ge \
    "$(q "$T/pool/s.db" "select count(*) from (select b, count(distinct host) h from (select (row_number() over (order by id) - 1) / 8 b, host from trials where phase='tune') group by b) where h = 2")" 1

# 1b. The serial path (compile_jobs = 1: one compile at a time, one ahead)
# records the same: the configs in the same order, verified alike.
"$AS" run "$T/serial/a.cfg" --db "$T/serial/s.db" > "$T/serial/out.txt" 2>&1
check "serial: run exits 0" eq "$?" 0
check "serial: the log says one compile at a time" eq \
    "$(q "$T/serial/s.db" "select count(*) from job_log where message like '%: 16 tune candidates compiled here, up to 1 at once (of 1)'")" 1
same="select group_concat(config_name || ':' || verified || ':' || (status in ('ok','unstable')), ' ') from (select * from trials where phase='tune' order by id)"
check "pool and serial record the same trials" eq \
    "$(q "$T/pool/s.db" "$same")" "$(q "$T/serial/s.db" "$same")"
check "all 16 verified" eq "$(q "$T/pool/s.db" "select count(*) from trials where phase='tune' and verified=1 and status in ('ok','unstable')")" 16
check "no config twice" eq "$(q "$T/pool/s.db" "select count(distinct config_name) from trials where phase='tune'")" 16

# 2. Ops at once: a two-op job (the dynamic op is skipped) with short
# measurements (min_time 0.05) and no threads listed. Each op's side-by-side rounds (baseline,
# noise, confirm, final, reference) stay on one node, the two ops' on
# different nodes.
mkcfg "$T/lanes" two_ops.mlir 2 <<'C'
[SearchSpace]
tile_m = [8,16]
tile_n = [8,16]
tile_k = [8,16,32]
[SearchStrategy]
tuner = grid
n_trial = 12
C
sed -i 's/^confirm_top = 1/confirm_top = 2/' "$T/lanes/a.cfg"
"$AS" run "$T/lanes/a.cfg" --db "$T/lanes/s.db" > "$T/lanes/out.txt" 2>&1
rc=$?
check "lanes: run exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/lanes/out.txt" >&2
check "lanes: the log says two ops at once" eq \
    "$(q "$T/lanes/s.db" "select count(*) from job_log where message like '2 ops worked on at once%'")" 1
check "lanes: each op's side-by-side rounds on one node" eq \
    "$(q "$T/lanes/s.db" "select group_concat(h) from (select count(distinct host) h from trials where phase != 'tune' group by op_id)")" "1,1"
check "lanes: the two ops' on different nodes" eq \
    "$(q "$T/lanes/s.db" "select count(distinct host) from trials where phase != 'tune'")" 2
# (Whether the two ops' finishes overlap in time is not checked: on a
# loaded machine one op's tune can end after the other's finish has ended,
# and the check failed a fresh-clone run that way. The log's line and the
# two nodes above are what two lanes leave.)
check "lanes: both ops tuned to n_trial, each config once" eq \
    "$(q "$T/lanes/s.db" "select count(*) || ' ' || count(distinct op_id || config_name) from trials where phase='tune'")" "24 24"
check "lanes: both ops chose" eq "$(q "$T/lanes/s.db" "select count(*) from choices")" 2
check "lanes: job done" eq "$(q "$T/lanes/s.db" "select state from jobs")" done

# 3. A stop with two ops at once: SIGTERM once both ops have tune trials
# recorded; each lane ends its unit, the job stops, no step is left. Run
# again, it resumes: every tune trial recorded once, both ops chose.
rm -f "$T/lanes/s.db"*
"$AS" run "$T/lanes/a.cfg" --db "$T/lanes/s.db" > "$T/lanes/term.txt" 2>&1 &
bg=$!
termed=0
for _ in $(seq 3000); do
	if [ "$(q "$T/lanes/s.db" "select count(distinct op_id) from trials where phase='tune'" 2>/dev/null)" = 2 ]; then
		kill -TERM "$bg"
		termed=1
		break
	fi
	kill -0 "$bg" 2>/dev/null || break
	sleep 0.05
done
wait "$bg"
rc=$?
bg=
check "stop: SIGTERM came while both ops were searched" eq "$termed" 1
check "stop: the job stopped" eq \
    "$(q "$T/lanes/s.db" "select count(*) from job_log where message like 'job stopped%'")" 1
left=$(slurm_queue_left)
check "stop: no step left in the queue" eq "$left" 0
before=$(q "$T/lanes/s.db" "select count(*) from trials where phase='tune'")
"$AS" run "$T/lanes/a.cfg" --db "$T/lanes/s.db" > "$T/lanes/resume.txt" 2>&1
rc=$?
check "resume: exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/lanes/resume.txt" >&2
check "resume: it had stopped short of the end" lt "$before" 24
check "resume: every tune trial once" eq \
    "$(q "$T/lanes/s.db" "select count(*) || ' ' || count(distinct op_id || config_name) from trials where phase='tune'")" "24 24"
check "resume: both ops chose" ge "$(q "$T/lanes/s.db" "select count(distinct op_id) from choices")" 2

# 4. A node taken down mid-job (last: n2 stays down): the two-op job,
# measurements long enough (min_time 0.3) that two steps overlap and one
# lands on n2. While a tune
# step of ours runs there, n2 is lost (its slurmd killed, the node set
# down). The job ends on n1 with every trial it had recorded, each config
# once, exit 0; nothing later comes from n2.
mkcfg "$T/down" two_ops.mlir 2 <<C
[SearchSpace]
$(space tile_m=8,16 tile_n=8,16 tile_k=8,16,32 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 12
C
# A step sent to n2 after it was lost waits for slurm_step_timeout before it
# counts as lost; 20 s (steps here measure for 2 s at most) rather than 60.
sed -i -e 's/^min_time = 0.05/min_time = 0.3/' \
    -e 's/^slurm_step_timeout = 60/slurm_step_timeout = 20/' "$T/down/a.cfg"
"$AS" run "$T/down/a.cfg" --db "$T/down/s.db" > "$T/down/out.txt" 2>&1 &
bg=$!
before=
for _ in $(seq 3000); do
	n=$(q "$T/down/s.db" "select count(*) from trials where phase='tune'" 2>/dev/null)
	if [ "${n:-0}" -ge 2 ] && squeue -h -t R -o '%j %N' 2>/dev/null |
	    grep -q '^autosched-.* n2$'; then
		before=$(q "$T/down/s.db" "select group_concat(id) from trials")
		# Its slurmd killed first: else Slurm returns it to service
		# as soon as it answers.
		kill -KILL "$(cat "$SLURM_LOCAL_DIR/slurmd-n2.pid")"
		scontrol update nodename=n2 state=down reason=autosched-test
		last=$(q "$T/down/s.db" "select max(id) from trials")
		break
	fi
	kill -0 "$bg" 2>/dev/null || break
	sleep 0.1
done
wait "$bg"
rc=$?
bg=
check "node down: n2 went down under a step of ours" test -n "$before"
check "node down: run exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/down/out.txt" >&2
check "node down: no trial recorded before it lost" eq \
    "$(q "$T/down/s.db" "select count(*) from trials where id in (${before:-0})")" \
    "$(echo "${before:-0}" | tr ',' '\n' | grep -c .)"
check "node down: both ops tuned to the end" eq \
    "$(q "$T/down/s.db" "select count(*) from trials where phase='tune'")" 24
check "node down: no config twice" eq \
    "$(q "$T/down/s.db" "select count(*) from (select op_id, config_name from trials where phase='tune' group by op_id, config_name)")" 24
# The two steps in flight when it went down may have ended there; after
# them, n1 alone.
after="from trials where id > ${last:-0} + 2"
check "node down: everything measured after it on n1" eq \
    "$(q "$T/down/s.db" "select count(*) || ' ' || total(host = 'n1') $after")" \
    "$(q "$T/down/s.db" "select count(*) || ' ' || count(*) || '.0' $after")"
check "node down: job done" eq "$(q "$T/down/s.db" "select state from jobs")" done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
