# A real Slurm cluster on this machine for the launcher tests (sourced; needs root, and
# slurmctld, slurmd, slurm-client and munge installed by scripts/setup.sh).
#   slurm_up_local DIR          one node, named localhost, its slurmd on this host
#   slurm_up_two DIR NET        two nodes rccnode1 and rccnode2, each slurmd in a network namespace
#                               (scripts/netns-hosts.sh, network NET) with its own /tmp and /etc/hosts
#   slurm_down DIR              cancels the jobs, stops every daemon it started by its pid file
# DIR holds slurm.conf, state, logs and pid files; it must not be under /tmp (two-node hosts
# each see a /tmp of their own). Export SLURM_CONF=DIR/slurm.conf before srun.

slurm_common_conf() {  # DIR CONTROLLER_LINE
  cat <<CONF
ClusterName=rcctest
$2
SlurmctldPort=6917
SlurmdPort=6918
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$1/state
SlurmdSpoolDir=$1/spool.%n
SlurmctldPidFile=$1/slurmctld.pid
SlurmdPidFile=$1/slurmd.%n.pid
SlurmctldLogFile=$1/slurmctld.log
SlurmdLogFile=$1/slurmd.%n.log
SlurmdParameters=config_overrides
ReturnToService=2
MessageTimeout=30
CONF
}

# munged, unless one runs already (then it is not ours to stop).
slurm_start_munge() {  # DIR
  if [ -f /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then return 0; fi
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- /usr/sbin/munged || return 1
  cp /run/munge/munged.pid "$1/munged.ours.pid"
}

# Waits until sinfo shows N idle nodes (up to 30 s).
slurm_wait_idle() {  # N
  i=0
  while [ $i -lt 60 ]; do
    idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)
    [ "${idle:-0}" -ge "$1" ] && return 0
    sleep 0.5
    i=$((i + 1))
  done
  echo "slurm: the nodes did not become idle:" >&2
  sinfo >&2
  tail -20 "$SLURM_DIR"/slurm*.log >&2
  return 1
}

slurm_up_local() {  # DIR
  SLURM_DIR=$1
  mkdir -p "$1/state"
  {
    slurm_common_conf "$1" "SlurmctldHost=localhost"
    echo "NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN"
    echo "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP"
  } >"$1/slurm.conf"
  export SLURM_CONF="$1/slurm.conf"
  slurm_start_munge "$1" || return 1
  /usr/sbin/slurmctld -f "$SLURM_CONF" || return 1
  /usr/sbin/slurmd -f "$SLURM_CONF" -N localhost || return 1
  slurm_wait_idle 1
}

slurm_up_two() {  # DIR NET
  SLURM_DIR=$1
  SLURM_NET=$2
  mkdir -p "$1/state"
  RCC_NETNS_NET=$2 "$SLURM_SCRIPTS/netns-hosts.sh" up rccs$2-1 rccs$2-2 || return 1
  ctl=$(hostname)
  {
    slurm_common_conf "$1" "SlurmctldHost=$ctl(10.$2.0.1)"
    echo "NodeName=rccnode1 NodeAddr=10.$2.0.2 CPUs=4 State=UNKNOWN"
    echo "NodeName=rccnode2 NodeAddr=10.$2.0.3 CPUs=4 State=UNKNOWN"
    echo "PartitionName=two Nodes=rccnode[1-2] Default=YES MaxTime=INFINITE State=UP"
  } >"$1/slurm.conf"
  printf '127.0.0.1 localhost\n10.%s.0.1 %s\n10.%s.0.2 rccnode1\n10.%s.0.3 rccnode2\n' "$2" "$ctl" "$2" "$2" >"$1/hosts"
  export SLURM_CONF="$1/slurm.conf"
  slurm_start_munge "$1" || return 1
  /usr/sbin/slurmctld -f "$SLURM_CONF" || return 1
  # Each node: the namespace's network only (not `ip netns exec`, which remounts /sys and hides the
  # cgroup tree slurmd wants), its own /tmp (Slurm's PMIx plugin keeps per-step files there) and an
  # /etc/hosts naming the nodes.
  for n in 1 2; do
    mkdir -p "$1/tmp.rccnode$n" && chmod 1777 "$1/tmp.rccnode$n"
    unshare --mount sh -c "mount --bind '$1/hosts' /etc/hosts && mount --bind '$1/tmp.rccnode$n' /tmp &&
      exec nsenter --net=/run/netns/rccs$2-$n /usr/sbin/slurmd -f '$SLURM_CONF' -N rccnode$n" || return 1
  done
  slurm_wait_idle 2
}

slurm_down() {  # DIR
  [ -n "${SLURM_CONF:-}" ] && scancel --full --quiet --user=root >/dev/null 2>&1
  sleep 0.5
  for pidfile in "$1"/slurmd.*.pid "$1/slurmctld.pid"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
  done
  # A step daemon outlives its slurmd until its step ends; ours end with the cluster.
  pkill -KILL -f '^slurmstepd: \[' 2>/dev/null
  if [ -f "$1/munged.ours.pid" ]; then kill "$(cat "$1/munged.ours.pid")" 2>/dev/null; fi
  if [ -n "${SLURM_NET:-}" ]; then
    RCC_NETNS_NET=$SLURM_NET "$SLURM_SCRIPTS/netns-hosts.sh" down rccs$SLURM_NET-1 rccs$SLURM_NET-2
  fi
  sleep 0.5
  return 0
}
