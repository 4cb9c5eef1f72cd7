#!/bin/sh
# The whole collectives suite (every collective, algorithm, datatype and op, checked exactly, the
# same result on every rank) across 2 and 3 test hosts with private /dev/shm and uneven rank
# counts, over UCX's TCP transport between the hosts. Usage: collectives_hosts_test.sh RCCRUN
# COLLECTIVES_TEST SCRIPTS_DIR [LAYOUT ...] (default: 1+1+1, 3+1, 2+2+1, 4+2 ranks per host).
set -u
rccrun=$1
suite=$2
scripts=$3
shift 3
net=${RCC_TEST_NET:-82}
hosts="rcch-a rcch-b rcch-c"
layouts=${*:-"rcch-a:1,rcch-b:1,rcch-c:1 rcch-a:3,rcch-b:1 rcch-a:2,rcch-b:2,rcch-c:1 rcch-a:4,rcch-b:2"}
trap 'RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" down $hosts >/dev/null 2>&1' EXIT
if ! RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" up $hosts; then
  echo "FAIL: cannot make the test hosts (needs root, iproute2 and util-linux)"
  exit 1
fi

failed=0
for layout in $layouts; do
  echo "=== $layout"
  # UCX_TLS=tcp,self: the hosts share one kernel, and UCX must not look for shared memory.
  RCC_SOCKET_IFNAME=rccbr$net "$rccrun" -H "$layout" --rsh "$scripts/netns-rsh" --timeout 400 \
    --env UCX_TLS=tcp,self --env RCC_TRANSPORT=ucx --env RCC_TIMEOUT=60 "$suite" --gtest_brief=1 || {
    echo "FAIL: $layout"
    failed=1
  }
done
[ $failed -eq 0 ] && echo PASS
exit $failed
