#!/bin/sh
# The whole collectives suite (every collective, algorithm, datatype and op, checked exactly, the
# same result on every rank) across 2 and 3 test hosts with private /dev/shm and uneven rank
# counts, over UCX's TCP transport between the hosts; then the sub-communicator suite (split, dup,
# groups: their communicators get levels too) on 2+2. Usage: collectives_hosts_test.sh RCCRUN
# COLLECTIVES_TEST SPLIT_TEST SCRIPTS_DIR [LAYOUT ...] (default: 1+1+1, 3+1, 2+2+1, 4+2 ranks per
# host; with 2 or more ranks on a host the collectives run hierarchical too).
set -u
rccrun=$1
suite=$2
split_suite=$3
scripts=$4
. "$(dirname "$0")/lib.sh"
shift 4
net=${RCC_TEST_NET:-82}
hosts="rcch-a rcch-b rcch-c"
layouts=${*:-"rcch-a:1,rcch-b:1,rcch-c:1 rcch-a:3,rcch-b:1 rcch-a:2,rcch-b:2,rcch-c:1 rcch-a:4,rcch-b:2"}
trap 'hosts_down "$net" $hosts' EXIT
hosts_up "$net" $hosts

failed=0
run() {  # run LAYOUT PROGRAM
  echo "=== $1: $(basename "$2")"
  # A layout with several ranks on some host has levels: their tests must run, not skip.
  local require=0
  case $1 in *:[2-9]*) require=1 ;; esac
  # UCX_TLS=tcp,self: the hosts share one kernel, and UCX must not look for shared memory.
  RCC_SOCKET_IFNAME=rccbr$net "$rccrun" -H "$1" --rsh "$scripts/netns-rsh" --timeout 400 \
    --env UCX_TLS=tcp,self --env RCC_TRANSPORT=ucx --env RCC_TIMEOUT=60 --env RCC_TEST_REQUIRE_LEVELS=$require \
    "$2" --gtest_brief=1 || {
    echo "FAIL: $1: $(basename "$2")"
    failed=1
  }
}
for layout in $layouts; do run "$layout" "$suite"; done
run rcch-a:2,rcch-b:2 "$split_suite"
[ $failed -eq 0 ] && echo PASS
exit $failed
