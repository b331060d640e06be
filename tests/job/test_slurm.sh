#!/usr/bin/env bash
# executor = slurm end to end on a real local Slurm cluster
# (scripts/slurm-local.sh: two simulated nodes n1 and n2, one CPU each):
# a small matmul tuned with every measurement an srun job step, two steps
# at once on both nodes, the rounds compared side by side on one node; all
# verified, no config twice; a step cancelled from outside is measured
# again, not recorded as the candidate's failure; a node whose steps die
# twice gets no more work; SIGTERM of autosched cancels its step; a node of
# another target is refused; kill -9 of autosched: the next run cancels
# its steps and resumes without measuring a config twice.
# Skips (exit 77, with the reason) when the cluster cannot start here.
#   test_slurm.sh AUTOSCHED SOURCE_DIR   (KEEP=DIR keeps its folder there)
. "$(dirname "$0")/../checks.sh"
args AS SRC
FIX=$SRC/tests/job/fixtures
slurm_up slurm-test "$SRC"

mkcfg() {	# mkcfg DIR: a cfg for small_f32.mlir, extra lines from stdin
	mkdir -p "$1"
	cp "$FIX/small_f32.mlir" "$1/"
	{
		printf '[Env]\ninput_file = small_f32.mlir\nexecutor = slurm\n'
		printf 'slurm_partition = autosched\nslurm_step_timeout = 60\n'
		# An allowlisted srun option goes through to the real srun.
		printf 'slurm_srun_args = --comment=autosched-test\n'
		cat
		printf '[Measure]\nmin_time = 0.05\nmin_reps = 3\nconfirm_top = 1\ntimeout = 20\n'
	} > "$1/a.cfg"
}

# 1. Tuned through Slurm on both nodes at once (slurm_max_steps defaults to
# one step per node: 2): the tune steps overlap (squeue sees two of ours
# running), the rounds compared side by side (baseline, noise, confirm,
# final, reference) all ran on one node, the first that measured.
mkcfg "$T/two" <<C
[SearchSpace]
$(space tile_m=8,16,32,64 tile_n=16,48 tile_k=8,32 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 8
C
sed -i 's/^min_time = 0.05/min_time = 0.6\nmax_reps = 1000000/; s/^confirm_top = 1/confirm_top = 2/' "$T/two/a.cfg"
"$AS" run "$T/two/a.cfg" --db "$T/two/s.db" > "$T/two/out.txt" 2>&1 &
bg=$!
most=0
while kill -0 "$bg" 2>/dev/null; do
	n=$(squeue -h -t R -o '%j' 2>/dev/null | grep -c '^autosched-')
	[ "$n" -gt "$most" ] && most=$n
	sleep 0.1
done
wait "$bg"
rc=$?
bg=
check "slurm run exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/two/out.txt" >&2
check "two steps ran at once" eq "$most" 2
check "8 tune trials" eq "$(q "$T/two/s.db" "select count(*) from trials where phase='tune'")" 8
check "all tune trials verified" eq "$(q "$T/two/s.db" "select count(*) from trials where phase='tune' and verified=1 and status in ('ok','unstable')")" 8
check "no config measured twice" eq "$(q "$T/two/s.db" "select count(distinct config_name) from trials where phase='tune'")" 8
check "tune trials from both nodes" eq "$(q "$T/two/s.db" "select group_concat(h) from (select distinct host h from trials where phase='tune' order by h)")" "n1,n2"
check "every trial has its host" eq "$(q "$T/two/s.db" "select count(*) from trials where host is null or host not in ('n1','n2')")" 0
check "rounds side by side on one node, the first that measured" eq \
    "$(q "$T/two/s.db" "select count(distinct host) || ' ' || (min(host) = (select host from trials order by id limit 1)) from trials where phase <> 'tune'")" "1 1"
check "confirm rounds were measured" ge "$(q "$T/two/s.db" "select count(*) from trials where phase='confirm'")" 2
check "the reference ran as a step too" ge "$(q "$T/two/s.db" "select count(*) from trials where phase='reference' and host in ('n1','n2')")" 1
check "job done" eq "$(q "$T/two/s.db" "select state from jobs")" done
check "the log says how many at once" ge "$(q "$T/two/s.db" "select count(*) from job_log where message like '%up to 2 measurements at once%'")" 1

# 1b. The same best config class through Slurm as locally: a space whose two
# classes differ by far more than the noise (register tiles of 4 rows run
# far faster than 1 row on mid_f32, 192x192x128); both runs must pick the
# same, and not 1 row: 4 rows, or the default if it beats them. (4 x 16
# fits the vector registers of AVX2 and AVX-512 alike.)
mkcfg "$T/cls" <<C
[SearchSpace]
$(space tile_m=32,64 tile_n=64 tile_k=64 vector_m=1,4 vector_n=16 pack_b=1 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 4
C
# Every config confirmed side by side (interleaved rounds), not one tune
# timing each: another test compiling on the same CPU cannot flip the class.
sed -i 's/^confirm_top = 1$/confirm_top = 4/; s/small_f32/mid_f32/' "$T/cls/a.cfg"
cp "$FIX/mid_f32.mlir" "$T/cls/"
sed 's/^executor = slurm/executor = local/' "$T/cls/a.cfg" > "$T/cls/local.cfg"
"$AS" run "$T/cls/a.cfg" --db "$T/cls/slurm.db" > "$T/cls/out.txt" 2>&1
check "class run through slurm exits 0" eq "$?" 0
"$AS" run "$T/cls/local.cfg" --db "$T/cls/local.db" --cpus 0 > "$T/cls/local.txt" 2>&1
check "class run locally exits 0" eq "$?" 0
check "the slurm run measured on the nodes" eq "$(q "$T/cls/slurm.db" "select count(*) from trials where phase='tune' and host in ('n1','n2')")" 4
# The search's winner: the fastest in the confirm rounds, side by side
# (what the job then stores may be the default, which can beat both).
won="select vector_m from trials where phase = 'confirm' group by config_name order by avg(gflops) desc limit 1"
check "the same winner through slurm as locally: 4 rows" eq \
    "$(q "$T/cls/slurm.db" "$won") $(q "$T/cls/local.db" "$won")" "4 4"

# 1c. Spaces that fit the nodes: a cfg that lists no threads searches the
# nodes' CPUs (one per node here), not this machine's; one that asks for
# more threads than a node has is refused before anything runs.
mkdir -p "$T/nothr"
cp "$FIX/small_f32.mlir" "$T/nothr/"
printf '[Env]\ninput_file = small_f32.mlir\nexecutor = slurm\nslurm_partition = autosched\nslurm_step_timeout = 60\n[SearchStrategy]\nn_trial = 4\n[Measure]\nmin_time = 0.02\nmin_reps = 3\nconfirm_top = 1\ntimeout = 20\n' > "$T/nothr/a.cfg"
"$AS" space "$T/nothr/a.cfg" > "$T/nothr/space.txt" 2>&1
check "no threads listed: the space's threads are the nodes' (1)" grep -Eq '^  threads +\[1\]' "$T/nothr/space.txt"
"$AS" run "$T/nothr/a.cfg" --db "$T/nothr/s.db" --quiet > "$T/nothr/out.txt" 2>&1
check "no threads listed under slurm: run exits 0" eq "$?" 0
check "no threads listed: every trial ran on a node at 1 thread" eq \
    "$(q "$T/nothr/s.db" "select count(*) from trials where phase='tune' and (threads <> 1 or host not in ('n1','n2'))")" 0
check "no threads listed: trials recorded" ge "$(q "$T/nothr/s.db" "select count(*) from trials where phase='tune'")" 4
sed -i 's/^\[SearchStrategy\]/[SearchSpace]\nthreads = [2]\n[SearchStrategy]/' "$T/nothr/a.cfg"
"$AS" run "$T/nothr/a.cfg" --db "$T/nothr/s2.db" > "$T/nothr/out2.txt" 2>&1
check "threads = [2] on 1-CPU nodes: exit 2" eq "$?" 2
check "threads = [2] on 1-CPU nodes: says the nodes' size" grep -q 'Slurm nodes that measure have 1 CPU' "$T/nothr/out2.txt"
check "threads = [2] on 1-CPU nodes: nothing written" test ! -e "$T/nothr/s2.db"

# 2. A step cancelled from outside (scancel) is measured again: the hanging
# candidate's first step is cancelled, its second one times out as the
# candidate's own result, recorded once.
mkcfg "$T/kill" <<C
[SearchSpace]
$(space tile_m=16 tile_n=32 tile_k=8 vector_m=2 vector_n=16,32 pack_b=1 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 2
C
sed -i 's/timeout = 20/timeout = 6/' "$T/kill/a.cfg"
# One step at a time: which step is the hanging one stays plain.
sed -i 's/^slurm_step_timeout = 60/&\nslurm_max_steps = 1/' "$T/kill/a.cfg"
AUTOSCHED_TEST_FAULT=hang:tile_16x32x8_vec_2x16x1 "$AS" run "$T/kill/a.cfg" --db "$T/kill/s.db" \
    > "$T/kill/out.txt" 2>&1 &
bg=$!
cancelled=0
for _ in $(seq 600); do
	# The hanging step: the only one running for longer than a second.
	id=$(squeue -h -t R -o '%i %M %k' 2>/dev/null | awk '$2 !~ /^0:0[01]$/ {print $1; exit}')
	if [ -n "$id" ]; then
		scancel "$id" && cancelled=1
		break
	fi
	kill -0 "$bg" 2>/dev/null || break
	sleep 0.2
done
wait "$bg"
rc=$?
bg=
check "run with a cancelled step exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/kill/out.txt" >&2
check "a step was cancelled from outside" eq "$cancelled" 1
check "the hanging candidate recorded once, as a timeout" eq \
    "$(q "$T/kill/s.db" "select count(*) || ' ' || status || ' ' || (host in ('n1','n2')) from trials where phase='tune' and config_name like '%tile_16x32x8_vec_2x16x1%'")" "1 timeout 1"
check "the other candidate verified" eq \
    "$(q "$T/kill/s.db" "select count(*) from trials where phase='tune' and verified=1")" 1

# 2b. A node whose steps die twice gets no more work: the hanging
# candidate's steps are cancelled until one node has lost two (where a step
# lands is Slurm's choice: a node still cleaning up is passed over); its
# next step runs on the other node (srun --exclude=) and times out there,
# recorded once.
rm -rf "$T/kill/s.db"*
AUTOSCHED_TEST_FAULT=hang:tile_16x32x8_vec_2x16x1 "$AS" run "$T/kill/a.cfg" --db "$T/kill/s.db" \
    > "$T/kill/excl.txt" 2>&1 &
bg=$!
nodes=
last=
twice=
for _ in $(seq 900); do
	set -- $(squeue -h -t R -o '%i %M %N' 2>/dev/null | awk '$2 !~ /^0:0[01]$/ {print $1, $3; exit}')
	if [ $# -eq 2 ] && [ "$1" != "$last" ]; then
		scancel "$1"
		last=$1
		case ",$nodes," in *",$2,"*) twice=$2 ;; esac
		nodes="$nodes${nodes:+,}$2"
		[ -n "$twice" ] && break
	fi
	kill -0 "$bg" 2>/dev/null || break
	sleep 0.2
done
wait "$bg"
rc=$?
bg=
other=n2
[ "$twice" = n2 ] && other=n1
check "exclude: run exits 0" eq "$rc" 0
check "exclude: a node lost two steps (cancelled: $nodes)" test -n "$twice"
check "exclude: the candidate measured on the other node at last, once" eq \
    "$(q "$T/kill/s.db" "select count(*) || ' ' || status || ' ' || host from trials where phase='tune' and config_name like '%tile_16x32x8_vec_2x16x1%'")" "1 timeout $other"
# (Tune trials of the hanging candidate's batch may have been measured on
# it before its second loss and recorded after: results are recorded in the
# batch's order. What is sent after the batch is not.)
check "exclude: nothing on $twice after that batch" eq \
    "$(q "$T/kill/s.db" "select count(*) from trials where host = '$twice' and phase != 'tune' and id >= (select min(id) from trials where config_name like '%tile_16x32x8_vec_2x16x1%' and phase='tune')")" 0
check "exclude: trials after it recorded" ge \
    "$(q "$T/kill/s.db" "select count(*) from trials where id > (select min(id) from trials where config_name like '%tile_16x32x8_vec_2x16x1%' and phase='tune')")" 1

# 3. SIGTERM of autosched mid-step: the step is cancelled (scancel), the
# candidate not recorded. The hang would last 30 s: it must be gone within 5 s
# (scancel; Slurm also ends the job of a killed srun by itself).
rm -rf "$T/kill/s.db"*
sed -i 's/^timeout = 6/timeout = 30/' "$T/kill/a.cfg"
AUTOSCHED_TEST_FAULT=hang:tile_16x32x8_vec_2x16x1 "$AS" run "$T/kill/a.cfg" --db "$T/kill/s.db" \
    > "$T/kill/term.txt" 2>&1 &
bg=$!
running=0
for _ in $(seq 600); do
	id=$(squeue -h -t R -o '%i %M' 2>/dev/null | awk '$2 !~ /^0:0[01]$/ {print $1; exit}')
	if [ -n "$id" ]; then
		running=1
		kill -TERM "$bg"
		break
	fi
	kill -0 "$bg" 2>/dev/null || break
	sleep 0.2
done
wait "$bg"
bg=
check "a step was running when SIGTERM came" eq "$running" 1
left=$(slurm_queue_left)
check "SIGTERM: no step left in the queue" eq "$left" 0
check "SIGTERM: the hanging candidate not recorded" eq \
    "$(q "$T/kill/s.db" "select count(*) from trials where config_name like '%tile_16x32x8_vec_2x16x1%'")" 0

# 4. autoschedd.conf's executor: the service's, for every submitted job (its
# trials come from the nodes); a submitted cfg saying executor = local is
# refused at submit (exit 2, nothing queued: issue 19); a bad value in the
# conf is refused (exit 2).
ASD=$(dirname "$AS")/autoschedd
mkdir -p "$T/svc"
cat > "$T/svc/bad.conf" <<'C'
[autoschedd]
executor = pbs
C
"$ASD" -n -f "$T/svc/bad.conf" --db "$T/svc/q.db" > "$T/svc/bad.txt" 2>&1
check "conf: a bad executor exits 2" eq "$?" 2
check "conf: the message names file, line, key and what is expected" \
    grep -q "bad.conf:2: executor: unknown executor 'pbs'; expected local, slurm or batch" "$T/svc/bad.txt"
cat > "$T/svc/d.conf" <<'C'
[autoschedd]
executor = slurm
slurm_partition = autosched
slurm_step_timeout = 60
slurm_srun_args = --comment=autosched-svc
poll_interval = 1
C
"$ASD" -n -f "$T/svc/d.conf" --db "$T/svc/q.db" > /dev/null 2>&1
check "conf: executor = slurm is OK" eq "$?" 0
for which in dflt own; do
	mkdir -p "$T/svc/$which"
	cp "$FIX/small_f32.mlir" "$T/svc/$which/"
	{
		printf '[Env]\ninput_file = small_f32.mlir\n'
		[ "$which" = own ] && printf 'executor = local\n'
		# Other configs for each job: none is taken from the other's.
		tm='[16,32]'
		[ "$which" = own ] && tm='[8,64]'
		printf '[SearchSpace]\ntile_m = %s\ntile_n = [16]\ntile_k = [8]\nthreads = [1]\n' "$tm"
		printf '[SearchStrategy]\ntuner = grid\nn_trial = 2\n'
		printf '[Measure]\nmin_time = 0.05\nmin_reps = 3\nconfirm_top = 1\ntimeout = 20\n'
	} > "$T/svc/$which/a.cfg"
	"$AS" submit "$T/svc/$which/a.cfg" --db "$T/svc/q.db" > /dev/null 2> "$T/svc/$which.err"
	echo $? > "$T/svc/$which.rc"
done
check "submit: a cfg's executor = local is refused (exit 2)" eq "$(cat "$T/svc/own.rc")" 2
check "submit: ... set by the service" grep -q \
    "a.cfg:3: \[Env\] executor: set by the service (autoschedd.conf), not by a submitted job" "$T/svc/own.err"
AUTOSCHED_WORK=$T/svc/work "$ASD" -d -f "$T/svc/d.conf" --db "$T/svc/q.db" \
    > "$T/svc/daemon.txt" 2>&1 &
bg=$!
for _ in $(seq 600); do
	[ "$(q "$T/svc/q.db" "select count(*) from jobs where state in ('done','failed')" 2>/dev/null)" = 1 ] && break
	kill -0 "$bg" 2>/dev/null || break
	sleep 0.2
done
kill -TERM "$bg" 2>/dev/null
wait "$bg"
bg=
check "daemon: the one job queued is done" eq "$(q "$T/svc/q.db" "select group_concat(state) from jobs")" "done"
check "daemon: the cfg without executor measured on the nodes (the conf's)" eq \
    "$(q "$T/svc/q.db" "select count(*) from trials where job_id=1 and phase='tune' and host in ('n1','n2')")" 2

# 5. The target check: n2 says it is another CPU (the harness's test hook,
# answered on the node): it is refused with a line naming it and what
# differs, and measures nothing; with no node matching the job stops (2).
mkcfg "$T/tgt" <<C
[SearchSpace]
$(space tile_m=8,16,32,64 tile_n=16 tile_k=8 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 4
C
AUTOSCHED_TEST_TARGET_NODE=n2 "$AS" run "$T/tgt/a.cfg" --db "$T/tgt/s.db" > "$T/tgt/out.txt" 2>&1
rc=$?
check "target: run with n2 refused exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/tgt/out.txt" >&2
check "target: the console names n2 and its CPU" \
    grep -q "Slurm node n2 refused: cpu 'Test CPU (AUTOSCHED_TEST_TARGET_NODE)' there" "$T/tgt/out.txt"
check "target: no trial has host n2" eq "$(q "$T/tgt/s.db" "select count(*) from trials where host='n2'")" 0
check "target: the tune trials ran on n1" eq "$(q "$T/tgt/s.db" "select count(*) from trials where phase='tune' and host='n1'")" 4
AUTOSCHED_TEST_TARGET_NODE=n1,n2 "$AS" run "$T/tgt/a.cfg" --db "$T/tgt/none.db" > "$T/tgt/none.txt" 2>&1
check "target: no node matching exits 2" eq "$?" 2
check "target: ... saying so" grep -q "no node of partition autosched measures for this target" "$T/tgt/none.txt"
check "target: ... having measured nothing" eq "$(q "$T/tgt/none.db" "select count(*) from trials")" 0

# 6. kill -9 of autosched mid-search: its steps outlive it (a hanging
# candidate's runs for 20 s); the next run of the same job cancels them
# before measuring (squeue: gone long before the hang would end), resumes,
# and measures no tune config twice.
mkcfg "$T/k9" <<C
[SearchSpace]
$(space tile_m=8,16,32,64 tile_n=16,48 tile_k=8 vector_m=2 vector_n=16 vector_k=1 threads=1)
[SearchStrategy]
tuner = grid
n_trial = 8
C
AUTOSCHED_TEST_FAULT=hang:tile_32x16x8_vec_2x16x1 "$AS" run "$T/k9/a.cfg" --db "$T/k9/s.db" \
    > "$T/k9/out1.txt" 2>&1 &
bg=$!
ids=
for _ in $(seq 600); do
	# The hanging step: one of ours running for more than a second.
	if squeue -h -t R -o '%i %M %j' 2>/dev/null | awk '$2 !~ /^0:0[01]$/ && $3 ~ /^autosched-/' | grep -q .; then
		ids=$(squeue -h -o '%i %j' 2>/dev/null | awk '$2 ~ /^autosched-/ {print $1}' | sort | tr '\n' ' ')
		kill -9 "$bg"
		break
	fi
	kill -0 "$bg" 2>/dev/null || break
	sleep 0.2
done
wait "$bg" 2>/dev/null
bg=
check "kill -9: steps were running when it died" test -n "$ids"
left=$(squeue -h -o '%i' 2>/dev/null | sort | tr '\n' ' ')
check "kill -9: its steps outlived it" test -n "$left"
t0=$(date +%s)
"$AS" run "$T/k9/a.cfg" --db "$T/k9/s.db" > "$T/k9/out2.txt" 2>&1 &
bg=$!
gone=
for _ in $(seq 300); do
	still=0
	for id in $ids; do
		squeue -h -j "$id" 2>/dev/null | grep -q . && still=1
	done
	if [ "$still" -eq 0 ]; then gone=$(( $(date +%s) - t0 )); break; fi
	sleep 0.1
done
wait "$bg"
rc=$?
bg=
check "kill -9: the next run exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/k9/out2.txt" >&2
check "kill -9: the old steps are gone soon after the restart (${gone:-never} s)" \
    test -n "$gone" -a "${gone:-99}" -le 10
check "kill -9: the restart says it cancelled them" grep -q "Slurm job.* a previous run of this job left" "$T/k9/out2.txt"
check "kill -9: every tune config once" eq \
    "$(q "$T/k9/s.db" "select count(*) || ' ' || count(distinct config_name) from trials where phase='tune'")" "8 8"
check "kill -9: nothing of ours left in the queue" eq "$(squeue -h -o '%j' 2>/dev/null | grep -c '^autosched-')" 0

echo "test_slurm: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
