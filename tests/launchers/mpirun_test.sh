#!/bin/bash
# rcc under Open MPI's mpirun (a PMIx server): mpirun -n 1..4 runs the launch probe (rank, size and
# rendezvous from PMIx, no rank hosting a store), the p2p suite and the collectives suite; a rank
# that never starts fails the others in bounded time naming it; RCC_PMIX=0 falls back to Open
# MPI's variables; MPI programs built on rcc's MPI run under it.
#   mpirun_test.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
set_programs "$build"
# As root, Open MPI asks for both (and would otherwise refuse to start).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
store=$(mktemp -d)
trap 'rm -rf "$store"' EXIT
mpirun="mpirun.openmpi --oversubscribe --bind-to none"

for n in 1 2 3 4; do
  run_job "mpirun -n $n launch probe" 0 "launch probe: $n ranks ok" "from pmix" \
    "rendezvous through the PMIx server" -- $mpirun -n $n -x RCC_DEBUG=INFO "$probe"
  run_job "mpirun -n $n p2p suite" 0 -- $mpirun -n $n "$p2p" --gtest_brief=1
  run_job "mpirun -n $n collectives suite" 0 -- $mpirun -n $n -x RCC_TEST_QUICK=1 "$coll" --gtest_brief=1
done
# MPI programs on rcc's MPI (rcc-mpicc), started by Open MPI's own mpirun.
for n in 2 4; do
  run_job "mpirun -n $n MPI collectives (rcc's MPI)" 0 "collectives: OK" -- $mpirun -n $n "$mpi_coll"
  run_job "mpirun -n $n MPI communicators (rcc's MPI)" 0 "comms: OK" -- $mpirun -n $n "$mpi_comms"
done
run_job "mpirun, a rank never joins the fence" fail "rank 2 of 3 did not arrive at the PMIx fence" -- \
  $mpirun -n 3 -x RCC_TEST_STALL_RANK=2 -x RCC_BOOTSTRAP_TIMEOUT=3 "$probe"
# A rank that aborted a communicator leaves at its last rcc_comm_destroy without the closing fence;
# the others' fence ends as its process does, which is no warning (and no wait for RCC_TIMEOUT).
JOB_LIMIT=20 run_job "mpirun -n 3, a rank that aborted leaves first" 0 "rank 0 left without meeting the others" \
  '!WARN' -- $mpirun -n 3 -x RCC_DEBUG=INFO -x RCC_TIMEOUT=60 "$p2p" --gtest_brief=1 \
  --gtest_filter=PointToPoint.AbortEndsSendsWaitingForRoom
run_job "mpirun with RCC_PMIX=0 (Open MPI's variables)" 0 "launch probe: 3 ranks ok" "from openmpi" -- \
  $mpirun -n 3 -x RCC_PMIX=0 -x RCC_DEBUG=INFO -x RCC_STORE_DIR="$store" "$probe"
finish
