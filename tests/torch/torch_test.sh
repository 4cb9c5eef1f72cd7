#!/bin/bash
# The torch.distributed backend "rcc" under real launchers (Debian's PyTorch, /usr/bin/python3):
# torchrun -n 1..4 runs every operation, dtype and op against local values and gloo; DDP at 2
# and 4 ranks against gloo (also in several buckets through a communication hook); the other ways
# torch initialises a group (tcp://, file://, an explicit store) and rcc's own (rcc:// under
# rccrun); torchrun across two hosts (network namespaces with a hostname and /etc/hosts each) with
# the c10d rendezvous; a rank killed mid-training.
#   torch_test.sh BUILD_DIR SCRIPTS_DIR
set -u
build=$1
scripts=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../launchers/lib/common.sh"
python=/usr/bin/python3
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH} RCC_TIMEOUT=60 RCC_BOOTSTRAP_TIMEOUT=60
"$python" -c 'import rcc_torch' || { echo "FAIL: rcc_torch does not import from $build/python"; exit 1; }
dir=$(mktemp -d /var/tmp/rcc-torch.XXXXXX)
net=81
hosts="rcct-a rcct-b"
cleanup() {
  RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" down $hosts >/dev/null 2>&1
  rm -rf "$dir"
}
trap cleanup EXIT
free_port() { "$here/../launchers/lib/free_port"; }
# torch 1.13 on Python 3.11 crashes in start_processes without an explicit per-rank redirect map.
torchrun="$python -m torch.distributed.run --redirects 9:1 --tee 9:1 --monitor_interval 0.1"

for n in 1 2 3 4; do
  run_job "torchrun -n $n: every op, dtype and size (against gloo)" 0 "ops_test: [0-9]+ checks passed on $n rank" -- \
    $torchrun --nproc_per_node=$n --master_port="$(free_port)" "$here/ops_test.py"
done
for n in 2 4; do
  run_job "torchrun -n $n: DDP, 30 steps, against gloo" 0 "ddp_test: $n ranks, 30 steps, MLP: parameters bitwise identical" \
    "ddp_test: $n ranks, 30 steps, wide MLP, [0-9]+ buckets of [0-9-]+ bytes, allreduce hook: parameters bitwise identical" -- \
    $torchrun --nproc_per_node=$n --master_port="$(free_port)" "$here/ddp_test.py"
done

# init_method tcp:// and file://: the processes started here, rank and size in the URL.
spawn() {  # N INIT_URL_PREFIX (rank and world_size appended)
  n=$1
  pids=""
  for r in $(seq 0 $((n - 1))); do
    RCC_TEST_INIT="${2}rank=$r&world_size=$n" RCC_TEST_QUICK=1 "$python" "$here/ops_test.py" &
    pids="$pids $!"
  done
  status=0
  for p in $pids; do wait "$p" || status=1; done
  return $status
}
export -f spawn
export here python
run_job "init_method tcp:// (3 ranks)" 0 "ops_test: [0-9]+ checks passed on 3 rank.*tcp://" -- \
  bash -c "spawn 3 'tcp://127.0.0.1:$(free_port)?'"
run_job "init_method file:// (2 ranks)" 0 "ops_test: [0-9]+ checks passed on 2 rank.*file://" -- \
  bash -c "spawn 2 'file://$dir/filestore?'"
run_job "an explicit store: init_process_group(store=FileStore) (2 ranks)" 0 \
  "ops_test: [0-9]+ checks passed on 2 rank.*store:" -- \
  env RCC_TEST_INIT="store:$dir/explicit-store" RCC_TEST_QUICK=1 \
  $torchrun --nproc_per_node=2 --master_port="$(free_port)" "$here/ops_test.py"
run_job "init_method rcc:// under rccrun (3 ranks)" 0 "ops_test: [0-9]+ checks passed on 3 rank.*rcc://" -- \
  env RCC_TEST_INIT=rcc:// RCC_TEST_QUICK=1 "$build/launcher/rccrun" -n 3 "$python" "$here/ops_test.py"
# Without RCC_TIMEOUT, so that the timeout given to init_process_group (20 s) is the one in force.
run_job "a rank killed mid-training (4 ranks)" fail "failure_test rank 0: raised after" \
  "failure_test rank 1: destroy_process_group returned" "failure_test rank 2: raised after" \
  "!failure_test rank [0-9]+: FAIL" -- \
  env -u RCC_TIMEOUT $torchrun --nproc_per_node=4 --master_port="$(free_port)" "$here/failure_test.py"

# Two hosts: each a network namespace with its own hostname and /etc/hosts (unshare), torchrun
# on each with the c10d rendezvous at host a, 2 processes per host.
if RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" up $hosts; then
  printf '127.0.0.1 localhost\n10.%s.0.2 rcct-a\n10.%s.0.3 rcct-b\n' $net $net >"$dir/hosts"
  port=$(free_port)
  on_host() {  # HOST COMMAND...: in HOST's network namespace, with its hostname and hosts file
    h=$1
    shift
    ip netns exec "$h" unshare --uts --mount sh -c "hostname $h && mount --bind '$dir/hosts' /etc/hosts && exec \"\$@\"" \
      sh "$@"
  }
  two_hosts() {
    on_host rcct-a env RCC_SOCKET_IFNAME=eth0 $torchrun --nnodes=2 --nproc_per_node=2 --rdzv_backend=c10d \
      --rdzv_endpoint="10.$net.0.2:$port" --rdzv_id=rcc-two-hosts "$here/ops_test.py" >"$dir/host-a.out" 2>&1 &
    a=$!
    on_host rcct-b env RCC_SOCKET_IFNAME=eth0 $torchrun --nnodes=2 --nproc_per_node=2 --rdzv_backend=c10d \
      --rdzv_endpoint="10.$net.0.2:$port" --rdzv_id=rcc-two-hosts "$here/ops_test.py" >"$dir/host-b.out" 2>&1
    b=$?
    wait $a
    a=$?
    cat "$dir/host-a.out" "$dir/host-b.out"
    [ $a -eq 0 ] && [ $b -eq 0 ]
  }
  run_job "torchrun on two hosts (c10d rendezvous, 2 x 2 ranks)" 0 "ops_test: [0-9]+ checks passed on 4 rank" -- \
    bash -c "$(declare -f on_host two_hosts); dir='$dir' torchrun='$torchrun' here='$here' net=$net port=$port RCC_TEST_QUICK=1 two_hosts"
else
  echo "FAIL: cannot make the two hosts"
  failed=$((failed + 1))
fi
finish
