#!/usr/bin/env bash
# Scale-out: how many trials a minute autosched measures with executor =
# local and = slurm (1 and 2 nodes of the local cluster of
# scripts/slurm-local.sh), with the coordinator's compiles one at a time
# (compile_jobs = 1) and pooled; a whole model's distinct ops (MobileBERT,
# a small trial budget) on this machine, 1 node, 2 nodes one op at a time
# and 2 nodes with two ops at once; and what the recorded sweeps of
# bench/data/ say it would do on 1…64 nodes with P compile threads on the
# coordinator. Prints three tables; takes 8-12 minutes.
#   bench/scale.sh               BUILD=build (autosched built there)
#                                P=n: compile threads the model assumes
#                                (default: this machine's CPUs)
#                                MODEL=file.mlir (default: MobileBERT of
#                                ../shared/models), MODEL_TRIALS=56,
#                                OPS=n: distinct ops the model assumes (7)
#                                LIVE=0: the model alone, OVERHEAD=s its
#                                step overhead (default: measured, else 0.15)
# Without root or the Slurm packages the live Slurm rows are skipped and the
# model uses an assumed step overhead (said in its header).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deadline.sh"
build=${BUILD:-$top/build}
AS=$build/daemon/autosched
[ -x "$AS" ] || { echo "scale.sh: build autosched first ($AS missing)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "scale.sh: sqlite3 missing" >&2; exit 2; }
T=$(mktemp -d /tmp/autosched-scale-XXXXXX)
export SLURM_LOCAL_DIR=$T/cluster
export PATH="$PATH:/usr/sbin"
cleanup() {
	bash "$top/scripts/slurm-local.sh" down >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

# The job: mm512 (the sweep's op), 16 configs of its space, each measured
# for 0.25 s (MIN_TIME), so that a measurement costs about as much as a
# compile.
mkjob() {	# mkjob NAME [ENV LINES]   (MIN_TIME=0.25)
	mkdir -p "$T/$1"
	cp "$top/bench/sweeps/mm512.mlir" "$T/$1/"
	{
		printf '[Env]\ninput_file = mm512.mlir\n'
		printf '%s' "${2:-}"
		printf '[SearchSpace]\ntile_m = [32,64]\ntile_n = [64,128]\n'
		printf 'tile_k = [64,128]\nvector_m = [4,8]\nvector_n = [16]\n'
		printf 'vector_k = [1]\nthreads = [1]\n'
		printf '[SearchStrategy]\ntuner = grid\nn_trial = 16\n'
		printf '[Measure]\nmin_time = %s\nmin_reps = 3\nmax_reps = 100000\n' \
		    "${MIN_TIME:-0.25}"
		printf 'confirm_top = 1\ntimeout = 30\n'
	} > "$T/$1/a.cfg"
}

# job NAME: the job from a fresh store, with a cache of its own (every run
# compiles its kernels); its wall seconds in W. 1 when it failed.
job() {
	local t0
	t0=$(date +%s.%N)
	if ! AUTOSCHED_WORK=$T/$1/work deadline "${RUN_DEADLINE:-14400}" "$AS" run "$T/$1/a.cfg" \
	    --db "$T/$1/s.db" --quiet > "$T/$1/out.txt" 2>&1; then
		echo "scale.sh: $1 failed:" >&2
		tail -5 "$T/$1/out.txt" >&2
		return 1
	fi
	W=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
}

# run NAME: the job; prints "wall tune_per_min measure_s"
run() {
	job "$1" || return 1
	sqlite3 "$T/$1/s.db" "select printf('%.1f %.1f %.3f', $W,
	    (count(*) - 1) * 60.0 / (max(created) - min(created)), avg(measure_s))
	    from trials where phase = 'tune'"
}

# A whole model: its distinct ops, MODEL_TRIALS tune trials spread by the
# scheduler (xgboost, seed 42), short measurements; every op baselined,
# searched and finished (confirm, final rounds, reference): one thread per
# measurement here; on Slurm one op at a time or two at once.
model=${MODEL:-$top/../shared/models/mobilebert_squad_f32_linalg.mlir}
mkmodel() {	# mkmodel NAME [ENV LINES]
	mkdir -p "$T/$1"
	cp "$model" "$T/$1/model.mlir"
	{
		printf '[Env]\ninput_file = model.mlir\n%s' "${2:-}"
		printf '[SearchSpace]\nthreads = [1]\n'
		printf '[SearchStrategy]\ntuner = xgboost\nseed = 42\n'
		printf 'trial_budget = %s\n' "${MODEL_TRIALS:-56}"
		printf '[Measure]\nmin_time = 0.05\ntimeout = 60\n'
	} > "$T/$1/a.cfg"
}
# mrun NAME: the job; prints "wall tune measurements measurements_per_min ops"
mrun() {
	job "$1" || return 1
	sqlite3 "$T/$1/s.db" "select printf('%.1f %d %d %.0f %d', $W,
	    (select count(*) from trials where phase = 'tune'), count(*),
	    count(*) * 60.0 / $W, (select count(*) from choices)) from trials"
}
model_rows() {
	local row local_wall label
	[ -r "$model" ] || { echo "model rows skipped: $model not found"; return; }
	echo
	echo "== live: a whole model, $(basename "$model"): its distinct ops, ${MODEL_TRIALS:-56} tune trials (xgboost), min_time 0.05"
	printf '%-30s %8s %6s %13s %10s %6s %9s\n' executor "wall s" tune \
	    measurements "meas/min" ops "vs local"
	mkmodel m-local
	row=$(mrun m-local) || return
	set -- $row
	local_wall=$1
	printf '%-30s %8s %6s %13s %10s %6s %9s\n' "local (one at a time)" "$1" \
	    "$2" "$3" "$4" "$5" 1.00x
	for v in one lane1 lanes; do
		env="executor = slurm
slurm_step_timeout = 300
"
		case $v in
		one) env="${env}slurm_partition = one
"; label="slurm, 1 node" ;;
		lane1) env="${env}slurm_partition = autosched
ops_at_once = 1
"; label="slurm, 2 nodes, 1 op at once" ;;
		lanes) env="${env}slurm_partition = autosched
"; label="slurm, 2 nodes, 2 ops at once" ;;
		esac
		mkmodel "m-$v" "$env"
		row=$(mrun "m-$v") || continue
		set -- $row
		printf '%-30s %8s %6s %13s %10s %6s %8.2fx\n' "$label" "$1" "$2" \
		    "$3" "$4" "$5" "$(awk -v a="$local_wall" -v b="$1" 'BEGIN { print a / b }')"
	done
	echo "(measurements: every trial row, tune, baseline, noise, confirm, final and"
	echo "reference; the local run measures on one CPU, each node has one)"
}

overhead=${OVERHEAD:-}
if [ "${LIVE:-1}" = 0 ]; then
	echo "== live runs skipped (LIVE=0)"
else
echo "== live: the same job (mm512, 16 tune trials of 0.25 s) on this machine ($(nproc) CPUs)"
printf '%-26s %8s %14s %12s\n' executor "wall s" "tune trials/min" "measure_s"
mkjob local
local_row=$(run local) || exit 1
set -- $local_row
printf '%-26s %8s %14s %12s\n' "local (one at a time)" "$1" "$2" "$3"
local_ms=$3
if up=$(bash "$top/scripts/slurm-local.sh" up 2>&1); then
	export SLURM_CONF=$SLURM_LOCAL_DIR/slurm.conf
	for p in one autosched; do
		mkjob "slurm-$p" "executor = slurm
slurm_partition = $p
slurm_step_timeout = 120
"
		row=$(run "slurm-$p") || continue
		set -- $row
		label="slurm, 1 node (n1)"
		[ "$p" = autosched ] && label="slurm, 2 nodes (n1, n2)"
		printf '%-26s %8s %14s %12s\n' "$label" "$1" "$2" "$3"
		overhead=$(awk -v a="$3" -v b="$local_ms" 'BEGIN { d = a - b; if (d < 0) d = 0; printf "%.3f", d }')
	done
	# Short measurements (0.05 s): the compiles are the limit; one at a
	# time, then pooled (compile_jobs unset: one per CPU here).
	for cj in 1 pool; do
		env="executor = slurm
slurm_partition = autosched
slurm_step_timeout = 120
"
		[ "$cj" = 1 ] && env="${env}compile_jobs = 1
"
		MIN_TIME=0.05 mkjob "short-$cj" "$env"
		row=$(run "short-$cj") || continue
		set -- $row
		label="2 nodes, 0.05 s, serial"
		[ "$cj" = pool ] && label="2 nodes, 0.05 s, pool $(nproc)"
		printf '%-26s %8s %14s %12s\n' "$label" "$1" "$2" "$3"
	done
	model_rows
	bash "$top/scripts/slurm-local.sh" down >/dev/null 2>&1
else
	echo "slurm rows skipped: no local cluster here ($(echo "$up" | tail -1))"
fi
echo "(the two simulated nodes share this machine's CPUs with the coordinator's compiles)"
fi

assumed=
if [ -z "$overhead" ]; then
	overhead=0.15
	assumed=" (assumed: no live Slurm run)"
elif [ -n "${OVERHEAD:-}" ]; then
	assumed=" (OVERHEAD)"
fi
P=${P:-$(nproc)}
O=${OPS:-7}
echo
echo "== model: trials/min on N nodes from the recorded sweeps (bench/data)"
echo "per trial: compile (on the coordinator), tuner + store (the engine's"
echo "thread: the gap between two trials not spent compiling or measuring,"
echo "median) and a step = measure + step overhead ${overhead} s${assumed}."
echo "serial (compile_jobs = 1, main before the pool): 60 / max(compile + tuner,"
echo "step / N). pool (P = $P compile threads): 60 / max(compile / P, tuner,"
echo "step / min(N, 8)): a round is 8 candidates, so at most 8 steps at once, one"
echo "op at a time. ops (pool, and min(N, O = $O) distinct ops worked on at once):"
echo "60 / max(compile / P, tuner, step / min(N, 8 O)); the tuner and store stay"
echo "one thread (the lanes share the engine's lock)."
for db in "$top"/bench/data/*.db; do
	name=$(basename "$db" .db)
	stats=$(sqlite3 "$db" "with g as (select created - lag(created) over
	    (order by id) - compile_s - measure_s as r from trials where
	    phase = 'tune'), s as (select r from g where r is not null order by r)
	    select printf('%.4f %.4f %.4f %d', (select avg(compile_s) from trials
	    where phase = 'tune'), (select avg(measure_s) from trials where
	    phase = 'tune'), max(0, (select r from s limit 1 offset
	    (select count(*) / 2 from s))), (select count(*) from trials where
	    phase = 'tune'))")
	echo "$name $stats"
done > "$T/model.txt"
awk -v o="$overhead" -v P="$P" -v O="$O" '
	# One cell: trials/min and what limits it. serial: compile and tuner
	# in one thread; else a pool of P compile threads and the tuner apart,
	# and lanes ops worked on at once (8 steps each at most).
	function cell(comp, rest, meas, N, serial, lanes,    t, b, x, k) {
		k = N < 8 * lanes ? N : 8 * lanes
		if (serial) {
			t = comp + rest; b = "(coord)"
			x = (meas + o) / N
			if (x > t) { t = x; b = "(nodes)" }
		} else {
			t = comp / P; b = "(compile)"
			if (rest > t) { t = rest; b = "(engine)" }
			x = (meas + o) / k
			if (x > t) { t = x; b = N > k ? (lanes > 1 ? "(ops)" : "(round)") : "(nodes)" }
		}
		return sprintf(" %7.0f %-9s", 60 / t, b)
	}
	{ name[NR] = $1; comp[NR] = $2; meas[NR] = $3; rest[NR] = $4; n[NR] = $5 }
	END {
		printf "%-6s", "sweep"
		printf " %9s %9s %9s %7s\n", "compile s", "tuner+st s", "measure s", "trials"
		for (i = 1; i <= NR; i++)
			printf "%-6s %9.3f %9.4f %9.3f %7d\n", name[i], comp[i], rest[i], meas[i], n[i]
		# The sweeps measured for min_time 0.05 s: what longer ones give.
		for (i = 1; i <= NR; i++) {
			mc += comp[i] / NR
			mr += rest[i] / NR
			mm += meas[i] / NR
		}
		printf "\n%5s", "nodes"
		for (i = 1; i <= NR; i++)
			printf " %17s %17s", name[i] " serial", name[i] " pool " P
		printf " %17s %17s %17s\n", "0.2 s serial", "0.2 s pool " P, "0.2 s ops " O
		split("1 2 4 8 16 32 64", ns, " ")
		for (k = 1; k <= 7; k++) {
			N = ns[k]
			printf "%5d", N
			for (i = 1; i <= NR; i++)
				printf "%s%s", cell(comp[i], rest[i], meas[i], N, 1, 1),
				    cell(comp[i], rest[i], meas[i], N, 0, 1)
			x = mm - 0.05 + 0.2
			printf "%s%s%s\n", cell(mc, mr, x, N, 1, 1),
			    cell(mc, mr, x, N, 0, 1),
			    cell(mc, mr, x, N, 0, N < O ? N : O)
		}
	}' "$T/model.txt"
echo "The last three columns: the sweeps' mean with min_time raised from the"
echo "recorded 0.05 s to 0.2 s (the cfg's default)."
echo "(coord): the serial compile + tuner + store is the limit; (compile): the"
echo "pool's P threads; (engine): the tuner and store on the engine's one thread;"
echo "(nodes): the measurements; (round): 8 steps at once, whatever the nodes;"
echo "(ops): 8 steps for each of the O ops at once."
echo "Not modelled: a round's end waits for its last step before the tuner"
echo "proposes the next (the pipeline drains 8 trials at a time)."
