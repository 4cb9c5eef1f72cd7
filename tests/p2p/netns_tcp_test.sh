#!/bin/sh
# Point-to-point between two test hosts (network namespaces joined by a bridge, each with a private
# /dev/shm and hostname) over UCX's TCP transport: the whole p2p suite with 2 and 4 ranks split
# across them (RCC_TEST_HOSTS=2: rcc_comm_host must see two hosts).
# Usage: netns_tcp_test.sh RCCRUN P2P_TEST SCRIPTS_DIR
set -u
rccrun=$1
p2p_test=$2
scripts=$3
hosts="rccp-a rccp-b"

if ! "$scripts/netns-hosts.sh" up $hosts; then
  "$scripts/netns-hosts.sh" down $hosts 2>/dev/null
  echo "FAIL: cannot create network namespaces (needs root and iproute2)"
  exit 1
fi
trap '"$scripts/netns-hosts.sh" down $hosts' EXIT

failed=0
for layout in rccp-a:1,rccp-b:1 rccp-a:2,rccp-b:2; do
  echo "=== $layout"
  # UCX_TLS=tcp: the namespaces share one kernel, so UCX would otherwise pick shared memory.
  RCC_SOCKET_IFNAME=rccbr0 "$rccrun" -H "$layout" --rsh "$scripts/netns-rsh" --tag-output --timeout 240 \
    --env UCX_TLS=tcp,self --env RCC_TRANSPORT=ucx --env RCC_TEST_HOSTS=2 --env RCC_TIMEOUT=60 "$p2p_test" --gtest_brief=1 || {
    echo "FAIL: $layout"
    failed=1
  }
done
[ $failed -eq 0 ] && echo PASS
exit $failed
