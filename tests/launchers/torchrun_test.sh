#!/bin/bash
# rcc under PyTorch's torchrun (Debian's python3-torch, /usr/bin/python3 -m torch.distributed.run
# --no_python): with the default static rendezvous its agent already serves a TCPStore on
# MASTER_PORT and rcc joins it as torch's own workers do; with the c10d rendezvous rank 0 hosts
# the store on MASTER_PORT. 1..4 processes run the launch probe, the p2p suite and the collectives
# suite; a wrong WORLD_SIZE fails in bounded time naming the rank that never comes.
#   torchrun_test.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
set_programs "$build"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# torchrun N ARGS...: Debian's torchrun on a free port (lib/free_port). A script, not a function:
# the runs go through timeout(1). torch 1.13 on Python 3.11 crashes in start_processes without an
# explicit per-rank redirect map.
cat >"$dir/torchrun" <<TORCHRUN
#!/bin/sh
n=\$1
shift
port=\$("$here/lib/free_port")
exec /usr/bin/python3 -m torch.distributed.run --no_python --nproc_per_node="\$n" --redirects 9:1 --tee 9:1 \
  --monitor_interval 0.1 --master_port="\$port" "\$@"
TORCHRUN
chmod +x "$dir/torchrun"
torchrun=$dir/torchrun
free_port() { "$here/lib/free_port"; }

for n in 1 2 3 4; do
  run_job "torchrun -n $n launch probe (agent store)" 0 "launch probe: $n ranks ok" "from torchrun" \
    "rendezvous through torchrun's store" "!RCC_JOB_SECRET is not set" -- "$torchrun" $n env RCC_DEBUG=INFO "$probe"
  run_job "torchrun -n $n p2p suite" 0 -- "$torchrun" $n "$p2p" --gtest_brief=1
  run_job "torchrun -n $n collectives suite" 0 -- "$torchrun" $n env RCC_TEST_QUICK=1 "$coll" --gtest_brief=1
done
run_job "torchrun --rdzv_backend=c10d -n 3 launch probe (rank 0 hosts)" 0 "launch probe: 3 ranks ok" \
  "rendezvous through the store at" -- \
  /usr/bin/python3 -m torch.distributed.run --no_python --nproc_per_node=3 --redirects 9:1 --tee 9:1 --monitor_interval 0.1 \
  --rdzv_backend=c10d --rdzv_endpoint="127.0.0.1:$(free_port)" env RCC_DEBUG=INFO "$probe"
# Two jobs in a row under one agent: keys of the first never meet the second.
cat >"$dir/twice.sh" <<TWICE
#!/bin/sh
"$probe" && "$probe"
TWICE
chmod +x "$dir/twice.sh"
run_job "torchrun -n 2, two jobs one after the other" 0 "launch probe: 2 ranks ok" -- "$torchrun" 2 "$dir/twice.sh"
# The agent's store outlives every job under it: a job leaves no key behind (its keys are read a
# known number of times, and the last read removes them). The store here is torch's own TCPStore
# server, the ranks get the variables torchrun's static rendezvous sets.
cat >"$dir/keys_left.py" <<KEYS
import os, subprocess, sys
from datetime import timedelta
import torch.distributed as dist
store = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=30), wait_for_workers=False)
before = store.num_keys()
env = dict(os.environ, WORLD_SIZE="3", LOCAL_WORLD_SIZE="3", MASTER_ADDR="127.0.0.1",
           MASTER_PORT=str(store.port), TORCHELASTIC_USE_AGENT_STORE="True", TORCHELASTIC_RUN_ID="keys",
           TORCHELASTIC_RESTART_COUNT="0")
for job in range(3):
    ranks = [subprocess.Popen(["$probe"], env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(3)]
    if any(p.wait(timeout=120) != 0 for p in ranks):
        sys.exit("a rank failed")
print(f"keys before {before}, after 3 jobs {store.num_keys()}")
sys.exit(0 if store.num_keys() == before else 1)
KEYS
run_job "three jobs on one torch store leave no key" 0 "after 3 jobs" -- /usr/bin/python3 "$dir/keys_left.py"

cat >"$dir/wrong_size.sh" <<WRONG
#!/bin/sh
WORLD_SIZE=3 RCC_BOOTSTRAP_TIMEOUT=3 exec "$probe"
WRONG
chmod +x "$dir/wrong_size.sh"
run_job "torchrun -n 2 with WORLD_SIZE=3" fail "rank 2 of 3 did not arrive at the rendezvous" -- \
  "$torchrun" 2 "$dir/wrong_size.sh"
finish
