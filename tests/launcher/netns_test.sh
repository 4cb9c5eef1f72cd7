#!/bin/sh
# rccrun across two "hosts" (network namespaces joined by a bridge), ranks started through
# scripts/netns-rsh, rendezvous over 10.77.0.1. Usage: netns_test.sh RCCRUN PROBE SCRIPTS_DIR
set -u
rccrun=$1
probe=$2
scripts=$3
hosts="rcct-a rcct-b"

if ! "$scripts/netns-hosts.sh" up $hosts; then
  "$scripts/netns-hosts.sh" down $hosts 2>/dev/null
  if [ "${RCC_TEST_NO_NETNS:-}" = 1 ]; then
    echo "SKIP: network namespaces unavailable and RCC_TEST_NO_NETNS=1"
    exit 77
  fi
  echo "FAIL: cannot create network namespaces (needs root and iproute2; set RCC_TEST_NO_NETNS=1 to skip)"
  exit 1
fi
trap '"$scripts/netns-hosts.sh" down $hosts' EXIT

failed=0
expect() {  # expect TEXT OUTPUT
  case "$2" in
  *"$1"*) ;;
  *) echo "FAIL: missing '$1'"; failed=1 ;;
  esac
}

# Where each rank runs: its eth0 address says which namespace.
out=$(RCC_SOCKET_IFNAME=rccbr0 "$rccrun" -H rcct-a:2,rcct-b:2 --rsh "$scripts/netns-rsh" --tag-output --timeout 30 \
  sh -c 'echo "addr $(ip -4 -o addr show dev eth0 | awk "{print \$4}")"' 2>&1)
echo "$out"
expect "[0] addr 10.77.0.2/24" "$out"
expect "[1] addr 10.77.0.2/24" "$out"
expect "[2] addr 10.77.0.3/24" "$out"
expect "[3] addr 10.77.0.3/24" "$out"

# The rendezvous across namespaces.
out=$(RCC_SOCKET_IFNAME=rccbr0 "$rccrun" -H rcct-a:2,rcct-b:2 --rsh "$scripts/netns-rsh" --tag-output --timeout 60 \
  "$probe" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: rccrun exited $rc"; failed=1; }
for r in 0 1 2 3; do expect "[$r] probe rank $r of 4 (rccrun) ok" "$out"; done

# A failing remote rank stops the job.
out=$(RCC_SOCKET_IFNAME=rccbr0 "$rccrun" -H rcct-a:1,rcct-b:1 --rsh "$scripts/netns-rsh" --timeout 30 \
  sh -c 'if [ "$RCC_RANK" = 1 ]; then exit 4; fi; sleep 30' 2>&1)
rc=$?
echo "$out"
[ $rc -eq 4 ] || { echo "FAIL: expected exit 4, got $rc"; failed=1; }
expect "rank 1 (host rcct-b" "$out"

[ $failed -eq 0 ] && echo PASS
exit $failed
