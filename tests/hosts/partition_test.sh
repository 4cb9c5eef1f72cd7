#!/bin/sh
# A host that stops answering (issue 29): its link cut mid-collective (ip link set down in its
# namespace), or its ranks frozen (SIGSTOP). Nothing closes their connections, so only the
# liveness heartbeats can tell: every surviving rank must fail naming the unreachable ranks within
# a bound set by RCC_PEER_TIMEOUT (2 s here; RCC_TIMEOUT is 300 s, so that cannot be what fires),
# and rccrun must exit non-zero. Over UCX TCP between test hosts with private /dev/shm.
# Usage: partition_test.sh RCCRUN PARTITION_LOOP SCRIPTS_DIR
set -u
rccrun=$1
loop=$2
scripts=$3
. "$(dirname "$0")/lib.sh"
net=${RCC_TEST_NET:-85}
hosts="rcchp-a rcchp-b"
dir=$(mktemp -d /tmp/rcc-partition.XXXXXX)
job=
cleanup() {
  for pid in $(ip netns pids rcchp-b 2>/dev/null); do kill -CONT "$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null; done
  [ -z "$job" ] || kill -KILL "$job" 2>/dev/null
  hosts_down "$net" $hosts
  rm -rf "$dir"
}
trap cleanup EXIT
hosts_up "$net" $hosts

failed=0
bound=30  # seconds from the cut to the end of the job; each failing call within 6 s (RCC_PEER_TIMEOUT=2)
now() { date +%s.%N; }

# One case: start 2+2 ranks, wait until all ran a round, apply $1 (a shell command), then the job
# must end non-zero within the bound, each rank of host a naming ranks 2 and 3 as unreachable.
check() {
  label=$1
  action=$2
  echo "=== $label"
  ip -n rcchp-b link set eth0 up
  # Emptied here, not by the job's redirection: that runs in the background shell, on a busy machine
  # after wait_ready has already counted the last case's four "ready" lines.
  : >"$dir/out"
  RCC_SOCKET_IFNAME=rccbr$net "$rccrun" -H rcchp-a:2,rcchp-b:2 --rsh "$scripts/netns-rsh" --tag-output \
    --timeout 120 --failure-grace 2 --env UCX_TLS=tcp,self --env RCC_TRANSPORT=ucx --env RCC_TIMEOUT=300 \
    --env RCC_PEER_TIMEOUT=2 "$loop" 100 >"$dir/out" 2>&1 &
  job=$!
  wait_ready "$dir/out" || { echo "FAIL: $label: not all 4 ranks ran a round within 180 s"; failed=1; }
  cut_at=$(now)
  sh -c "$action"
  rc=0
  wait $job || rc=$?
  job=
  check_unreachable "$label" "$dir/out" $rc "$(echo "$(now) - $cut_at" | bc)" $bound rcchp-b 6
  if [ "$label" = "ranks frozen" ]; then
    case "$(cat "$dir/out")" in
    *"ranks 2 (host rcchp-b), 3 (host rcchp-b) still running 2 s after the failure"*) ;;
    *) echo "FAIL: $label: rccrun does not name the frozen ranks"; failed=1 ;;
    esac
  fi
  for pid in $(ip netns pids rcchp-b); do kill -CONT "$pid" 2>/dev/null; done
}

check "link cut" "ip -n rcchp-b link set eth0 down"
check "ranks frozen" 'for pid in $(ip netns pids rcchp-b); do kill -STOP $pid; done'

[ $failed -eq 0 ] && echo PASS
exit $failed
