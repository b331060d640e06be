#!/bin/bash
# A real Slurm cluster (Debian 12: slurmctld, slurmd, slurm-client, munge;
# Slurm 22.05) on this one machine, as plain processes (no systemd), for the
# executor = slurm tests: one controller and two simulated nodes n1 and n2,
# each with one CPU of its own (n1 CPU 0, n2 CPU 1 on a 2-CPU machine; with
# more CPUs each node gets half), everything on loopback. Partitions:
# autosched (default: n1 and n2) and one (n1 only).
#
#   scripts/slurm-local.sh up     start it; prints the SLURM_CONF to export
#   scripts/slurm-local.sh down   stop every process it started
#   scripts/slurm-local.sh env    print "export SLURM_CONF=…"
#
# Ports: $SLURM_LOCAL_PORT (slurmctld, 16817) and $SLURM_LOCAL_NODE_PORT
# (n1; n2 the next one; 17001), so that two clusters can run on one machine.
# State (config, key, spool, logs, pids) lives in $SLURM_LOCAL_DIR (default
# /tmp/autosched-slurm). Needs root (slurmd runs steps as their user) and
# the packages (scripts/deps.sh installs them). Exit 0 when both nodes are
# idle, 1 on failure with the log's tail, 3 when it cannot run here at all
# (not root, packages missing): tests skip on 3.
set -u
. "$(dirname "$0")/deadline.sh"

DIR=${SLURM_LOCAL_DIR:-/tmp/autosched-slurm}
CTLD_PORT=${SLURM_LOCAL_PORT:-16817}
# The nodes' slurmd ports: this and the next one.
NODE_PORT=${SLURM_LOCAL_NODE_PORT:-17001}
CONF="$DIR/slurm.conf"

die() { echo "slurm-local: $*" >&2; exit 1; }
cannot() { echo "slurm-local: cannot run here: $*" >&2; exit 3; }

# Stop the process whose pid is in file $1 (ours only: we wrote the file).
stop_pidfile() {
	local f=$1 pid i
	[ -s "$f" ] || return 0
	pid=$(cat "$f")
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	fi
	rm -f "$f"
}

down() {
	stop_pidfile "$DIR/slurmd-n1.pid"
	stop_pidfile "$DIR/slurmd-n2.pid"
	stop_pidfile "$DIR/slurmctld.pid"
	stop_pidfile "$DIR/munged.pid"
	return 0
}

write_conf() {
	local ncpu cores sockets tpc mem half spec1 spec2 i
	ncpu=$(nproc --all)
	[ "$ncpu" -ge 2 ] || cannot "two CPUs needed for two nodes, $ncpu here"
	# The real topology (slurmd checks it); each node hides the other's CPUs.
	eval "$(slurmd -C 2>/dev/null | head -1 | tr ' ' '\n' |
	    grep -E '^(CoresPerSocket|SocketsPerBoard|ThreadsPerCore|RealMemory)=' |
	    sed 's/=/_=/')"
	cores=${CoresPerSocket_:-$ncpu}
	sockets=${SocketsPerBoard_:-1}
	tpc=${ThreadsPerCore_:-1}
	mem=${RealMemory_:-1024}
	half=$((ncpu / 2))
	spec1=""; spec2=""
	for i in $(seq "$half" $((ncpu - 1))); do spec1="$spec1${spec1:+,}$i"; done
	for i in $(seq 0 $((half - 1))); do spec2="$spec2${spec2:+,}$i"; done
	mem=$((mem / 4))
	cat > "$CONF" <<EOF
# Written by scripts/slurm-local.sh: a local test cluster, loopback only.
ClusterName=autosched
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge.socket
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/spool-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd-%n.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.txt
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MpiDefault=none
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$NODE_PORT CPUs=$ncpu Sockets=$sockets CoresPerSocket=$cores ThreadsPerCore=$tpc RealMemory=$mem CpuSpecList=$spec1
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((NODE_PORT + 1)) CPUs=$ncpu Sockets=$sockets CoresPerSocket=$cores ThreadsPerCore=$tpc RealMemory=$mem CpuSpecList=$spec2
PartitionName=autosched Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
PartitionName=one Nodes=n1 Default=NO MaxTime=INFINITE State=UP
EOF
}

up() {
	local i state
	[ "$(id -u)" -eq 0 ] || cannot "needs root (slurmd starts steps as their user)"
	for t in munged mungekey slurmctld slurmd srun sinfo scancel; do
		command -v "$t" >/dev/null 2>&1 ||
		    [ -x "/usr/sbin/$t" ] ||
		    cannot "$t missing (scripts/deps.sh installs slurmctld slurmd slurm-client munge)"
	done
	export PATH="$PATH:/usr/sbin"
	down
	mkdir -p "$DIR/ctld" "$DIR/spool-n1" "$DIR/spool-n2" || die "cannot create $DIR"
	chmod 700 "$DIR"
	rm -f "$DIR"/*.log "$DIR/jobcomp.txt"
	rm -rf "$DIR/ctld"/*
	[ -s "$DIR/munge.key" ] || deadline 60 mungekey -c -k "$DIR/munge.key" >/dev/null 2>&1 ||
	    die "mungekey failed"
	chmod 400 "$DIR/munge.key"
	write_conf
	deadline 60 munged --force --key-file="$DIR/munge.key" --socket="$DIR/munge.socket" \
	    --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" \
	    --seed-file="$DIR/munge.seed" ||
	    { tail -5 "$DIR/munged.log" >&2; die "munged did not start"; }
	export SLURM_CONF="$CONF"
	deadline 60 slurmctld -c -f "$CONF" || { tail -20 "$DIR/slurmctld.log" >&2; die "slurmctld did not start"; }
	deadline 60 slurmd -N n1 -f "$CONF" || { tail -20 "$DIR/slurmd-n1.log" >&2; die "slurmd n1 did not start"; }
	deadline 60 slurmd -N n2 -f "$CONF" || { tail -20 "$DIR/slurmd-n2.log" >&2; die "slurmd n2 did not start"; }
	# Up when both nodes are idle.
	for i in $(seq 150); do
		state=$(deadline 10 sinfo -h -N -o '%N %t' 2>/dev/null | sort | tr '\n' ' ')
		case "$state" in
		*"n1 idle"*"n2 idle"*) echo "export SLURM_CONF=$CONF"; return 0 ;;
		esac
		sleep 0.2
	done
	echo "slurm-local: nodes not idle after 30 s: $state" >&2
	tail -5 "$DIR/slurmctld.log" "$DIR/slurmd-n1.log" "$DIR/slurmd-n2.log" >&2
	down
	exit 1
}

case "${1:-}" in
up) up ;;
down) down ;;
env) echo "export SLURM_CONF=$CONF" ;;
*) echo "usage: $0 up|down|env" >&2; exit 2 ;;
esac
