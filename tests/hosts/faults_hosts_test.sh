#!/bin/sh
# A rank killed mid-call on a communicator spread over test hosts, so that it has levels (2 ranks
# on host a, 1 on host b): the survivors on both hosts must name the dead rank, though the rank
# of host b waits only on its partner of host a (the cross level), which lives. The fault driver
# (tests/faults) runs the job with rccrun -H through scripts/netns-rsh, over UCX TCP.
# Usage: faults_hosts_test.sh RCCRUN FAULT_DRIVER VICTIM STRANGER SCRIPTS_DIR
set -u
rccrun=$1
driver=$2
victim=$3
stranger=$4
scripts=$5
. "$(dirname "$0")/lib.sh"
net=${RCC_TEST_NET:-86}
hosts="rcchf-a rcchf-b"
trap 'hosts_down "$net" $hosts' EXIT
hosts_up "$net" $hosts
failed=0
# drive [VAR=VALUE ...] -- GTEST_FILTER: the fault driver over the test hosts, with extra settings
# (forwarded to the ranks too).
drive() {
  extra=""
  while [ "$1" != -- ]; do extra="$extra $1"; shift; done
  forward=RCC_TRANSPORT,UCX_TLS,RCC_TIMEOUT,RCC_BOOTSTRAP_TIMEOUT
  for setting in $extra; do forward="$forward,${setting%%=*}"; done
  env RCC_SOCKET_IFNAME=rccbr$net RCC_TEST_RCCRUN=$rccrun RCC_TEST_VICTIM=$victim RCC_TEST_STRANGER=$stranger \
    RCC_FAULT_HOSTS=rcchf-a:2,rcchf-b:1 RCC_FAULT_RSH="$scripts/netns-rsh" RCC_FAULT_SEEDS=2 \
    RCC_FAULT_FORWARD=$forward RCC_TRANSPORT=ucx UCX_TLS=tcp,self RCC_TIMEOUT=10 RCC_BOOTSTRAP_TIMEOUT=30 $extra \
    "$driver" --gtest_brief=1 --gtest_filter="$2" || failed=1
}
drive -- 'Ops/FaultTest.*/allreduce:Ops/FaultTest.*/broadcast_tree:Ops/FaultTest.*/barrier:Ops/FaultTest.*/allgather:Ops/FaultTest.*/reduce_scatter:Ops/FaultTest.*/inflight:Ops/FaultTest.*/p2p'
# The hierarchical allreduce in pieces (above 512 KiB) cut short: 1 MiB per rank, forced, while
# pieces are in flight between the hosts and through the segment.
drive RCC_ALGO=allreduce:hierarchical RCC_FAULT_MIN_ELEMENTS=262144 -- 'Ops/FaultTest.*/allreduce'
exit $failed
