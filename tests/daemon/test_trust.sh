# What a submitted job may carry (issue 19): where and how it measures
# (executor, slurm_*) is the service's, from autoschedd.conf; iree_bin names
# a program. `autosched submit` and the spool refuse them (exit 2, nothing
# queued); a job queued before that has them ignored when run.
. "$(dirname "$0")/lib.sh"
spool_conf

mkjob ok 16 16 16 2
jobs() { if [ -f "$DB" ]; then q "$DB" "SELECT count(*) FROM jobs"; else echo 0; fi; }

# refused NAME LINE KEY EXPECTED...: ok.cfg with LINE after [Env], submitted.
refused() {
	local name=$1 line=$2 want=$3
	sed "1a $line" "$T/ok.cfg" > "$T/$name.cfg"
	"$AS" submit "$T/$name.cfg" --db "$DB" > "$T/$name.out" 2> "$T/$name.err"
	check "$name: submit exits 2" [ $? -eq 2 ]
	check "$name: says why" grep -qF -- "$want" "$T/$name.err"
	check "$name: nothing queued" [ "$(jobs)" -eq 0 ]
	check "$name: no job id printed" [ ! -s "$T/$name.out" ]
}
refused sh 'slurm_srun_args = /bin/sh /tmp/evil.sh' \
    "$T/sh.cfg:2: [Env] slurm_srun_args: set by the service (autoschedd.conf), not by a submitted job"
refused prolog 'slurm_srun_args = --prolog=/tmp/x' "$T/prolog.cfg:2: [Env] slurm_srun_args:"
refused ntasks 'slurm_srun_args = -n 4' "$T/ntasks.cfg:2: [Env] slurm_srun_args:"
refused allowed 'slurm_srun_args = --qos=low' \
    "$T/allowed.cfg:2: [Env] slurm_srun_args: set by the service (autoschedd.conf), not by a submitted job"
refused slurm 'executor = slurm' \
    "$T/slurm.cfg:2: [Env] executor: set by the service (autoschedd.conf), not by a submitted job"
refused local 'executor = local' "$T/local.cfg:2: [Env] executor: set by the service"
refused partition 'slurm_partition = big' "[Env] slurm_partition: set by the service"
refused steps 'slurm_max_steps = 64' "[Env] slurm_max_steps: set by the service"
refused steptime 'slurm_step_timeout = 5' "[Env] slurm_step_timeout: set by the service"
refused iree 'iree_bin = /tmp/x/iree-compile' "$T/iree.cfg:2: [Env] iree_bin: names a program"
refused replay 'replay_db = /root/private.db' "$T/replay.cfg:2: [Env] replay_db: names a store the service would open"

# The same cfg as the user's own `autosched run` is not refused for its keys
# (only for what the allowlist refuses).
sed '1a slurm_srun_args = /bin/sh /tmp/evil.sh' "$T/ok.cfg" > "$T/ownrun.cfg"
"$AS" run "$T/ownrun.cfg" --db "$T/own.db" > /dev/null 2> "$T/ownrun.err"
check "run: a plain word in slurm_srun_args is exit 2" [ $? -eq 2 ]
check "run: names the word and the allowlist" grep -qF \
    "slurm_srun_args: '/bin/sh' is not an option autosched passes to srun; allowed: --account=" "$T/ownrun.err"

# A job queued before this change, carrying executor = slurm: run locally,
# with the service's settings, and the log says the key was ignored.
"$AS" submit "$T/ok.cfg" --db "$DB" > "$T/old.id" 2>/dev/null
check "ok.cfg is queued" [ "$(jobs)" -eq 1 ]
id=$(cat "$T/old.id")
q "$DB" "UPDATE jobs SET cfg_text = replace(cfg_text, '[Env]', '[Env]
executor = slurm
slurm_partition = nowhere') WHERE id = $id"
start_daemon
check "the old job ends" wait_for 120 all_ended
check "the old job is done (measured locally)" is_state "$id" done
check "the old job has trials" has_trials "$id" 1
check "the log says executor was ignored" grep -q \
    "\[Env\] executor: set by the service (autoschedd.conf), not by a submitted job: ignored" "$T/daemon.log"

# The spool refuses the same keys: failed/, with the reason, nothing queued.
# (Written whole, then renamed in, as a spool writer must: a half-written
# cfg would be refused for what it lacks, not for its key.)
sed -e '1a executor = slurm' -e "s|^input_file = ok.mlir|input_file = $T/ok.mlir|" \
    "$T/ok.cfg" > "$SPOOL/.spooled.tmp" && mv "$SPOOL/.spooled.tmp" "$SPOOL/spooled.cfg"
check "spool: refused" wait_for 30 test -e "$SPOOL/failed/spooled.cfg.reason"
# (The file waits in failed/ under a provisional reason, "taken", while it
# is read: the final one replaces it.)
check "spool: the reason names the key" wait_for 30 grep -q \
    "spooled.cfg:2: \[Env\] executor: set by the service" "$SPOOL/failed/spooled.cfg.reason"
check "spool: nothing more queued" [ "$(jobs)" -eq 1 ]
stop_daemon TERM
finish
