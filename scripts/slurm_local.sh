#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, from Debian 12's packages, for `make slurm-check` (docs/scaling.md):
#   scripts/slurm_local.sh         install what is missing (apt), start munged, slurmctld and slurmd, wait until the
#                                  node answers idle; running it again starts only what is not running
#   scripts/slurm_local.sh stop    stop the three daemons (and remove the link below)
# The daemons' state, logs, pid files, munge's key and socket and slurm.conf live under one directory
# (FACTLAB_SLURM_DIR, default /tmp/factlab-slurm); /etc/slurm/slurm.conf is a link to that slurm.conf, where every SLURM
# command looks (the Snakemake plugin's srun inside a job drops SLURM_CONF from its environment). A slurm.conf there
# that this script did not link stops it: the machine has its own SLURM.
# It runs as root (the daemons and the jobs run as root) without systemd: the daemons are started directly.
# No accounting database: the Snakemake plugin reads job states with squeue (--slurm-status-command squeue), which
# sees a finished job for MinJobAge seconds; sacct is not needed for that.
# The node is this machine as `slurmd -C` sees it (CPUs, RealMemory); memory is not a consumable resource here
# (CR_CPU), so jobs queue for CPUs only, as on one machine.
set -euo pipefail

state=${FACTLAB_SLURM_DIR:-/tmp/factlab-slurm}
ctld_port=${FACTLAB_SLURM_PORT:-6817}
slurmd_port=$((ctld_port + 1))
conf=$state/slurm.conf
system_conf=/etc/slurm/slurm.conf
socket=$state/munge/munge.socket

alive() { # alive PIDFILE: the process named in PIDFILE is running
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

stop_pid() { # stop_pid NAME PIDFILE: SIGTERM, then wait up to 20 s for it to exit
    if alive "$2"; then
        local pid
        pid=$(cat "$2")
        kill "$pid"
        for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        if kill -0 "$pid" 2>/dev/null; then echo "slurm_local: $1 ($pid) did not stop" >&2; return 1; fi
        echo "slurm_local: stopped $1 ($pid)"
    fi
    rm -f "$2"
}

stop() {
    stop_pid slurmd "$state/run/slurmd.pid"
    stop_pid slurmctld "$state/run/slurmctld.pid"
    stop_pid munged "$state/run/munged.pid"
    if [ "$(readlink "$system_conf")" = "$conf" ]; then rm "$system_conf"; fi
}

case ${1:-start} in
start) ;;
stop) stop; exit ;;
*) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac

[ "$(id -u)" -eq 0 ] || { echo "slurm_local: run as root (it starts the SLURM daemons)" >&2; exit 1; }
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
    ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge
fi

if [ -e "$system_conf" ] && [ "$(readlink "$system_conf")" != "$conf" ]; then
    echo "slurm_local: $system_conf exists and is not this script's link to $conf: this machine has its own SLURM" >&2
    exit 1
fi
mkdir -p "$state"/{ctld,spool,log,run}
mkdir -p -m 0700 "$state/munge"
chmod 0755 "$state" # munged refuses a socket in a directory others may write

# slurm.conf for this host. Finished jobs stay in squeue for MinJobAge seconds: the plugin's status queries read them.
node=$(slurmd -C | head -1) # NodeName=<host> CPUs=... RealMemory=...
name=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<<"$node")
host=$(hostname -s)
cat >"$conf.new" <<EOF
# Written by scripts/slurm_local.sh: a one-node cluster on this machine ($host).
ClusterName=factlab
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/run/slurmctld.pid
SlurmdPidFile=$state/run/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
PropagateResourceLimits=NONE
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
KillWait=10
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=cpu Nodes=$name Default=YES MaxTime=INFINITE State=UP
EOF
if ! cmp -s "$conf.new" "$conf"; then
    [ ! -e "$conf" ] || { echo "slurm_local: slurm.conf changed, restarting"; stop_pid slurmd "$state/run/slurmd.pid"; stop_pid slurmctld "$state/run/slurmctld.pid"; }
    mv "$conf.new" "$conf"
else
    rm "$conf.new"
fi
mkdir -p "$(dirname "$system_conf")"
ln -sfn "$conf" "$system_conf"

if ! alive "$state/run/munged.pid"; then
    [ -s "$state/munge/munge.key" ] || mungekey --create --keyfile="$state/munge/munge.key"
    chmod 0600 "$state/munge/munge.key"
    munged --force --socket="$socket" --key-file="$state/munge/munge.key" --pid-file="$state/run/munged.pid" \
        --log-file="$state/log/munged.log" --seed-file="$state/munge/munged.seed"
    echo "slurm_local: started munged"
fi
if ! alive "$state/run/slurmctld.pid"; then
    slurmctld
    echo "slurm_local: started slurmctld"
fi
if ! alive "$state/run/slurmd.pid"; then
    slurmd
    echo "slurm_local: started slurmd"
fi

# Until the node answers (idle, or running jobs on a second call); a node left down by an earlier stop is resumed.
for _ in $(seq 120); do
    node_state=$(sinfo -h -N -n "$name" -o %T 2>/dev/null || true)
    case $node_state in
    idle | mixed | allocated | completing)
        echo "slurm_local: node $name $node_state ($(sinfo -h -N -n "$name" -o '%c CPUs, %m MB'), partition cpu)"
        exit 0
        ;;
    down* | drain* | drained*) scontrol update nodename="$name" state=resume 2>/dev/null || true ;;
    esac
    sleep 0.5
done
echo "slurm_local: node $name is not up after 60 s (state: ${node_state:-no answer}); logs in $state/log" >&2
tail -n 20 "$state"/log/*.log >&2 || true
exit 1
