# Sourced by the tests of this folder: hosts_up NET NAME... makes test hosts (scripts/netns-hosts.sh)
# on network NET or fails the test; hosts_down NET NAME... removes them. Needs $scripts.
hosts_up() {
  net=$1
  shift
  if ! RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" up "$@"; then
    echo "FAIL: cannot make the test hosts (needs root, iproute2 and util-linux)"
    exit 1
  fi
}
hosts_down() {
  net=$1
  shift
  RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" down "$@" >/dev/null 2>&1
}

# The partition and freeze cases (partition_test.sh here, tests/vm/cross-partition.sh between two
# guests): 2+2 ranks of partition_loop, host b made unreachable once all four ran a round.
# wait_ready OUT: until the job's output OUT says " ready" four times (at most 180 s; status 1
# then). Callers empty OUT before starting the job: the job's own redirection runs in the
# background shell, on a busy machine after this has looked (it found the last case's four lines
# and host b was frozen before its ranks ran). A missing OUT counts as no line.
wait_ready() {
  waited=0
  while :; do
    ready=$(grep -c ' ready$' "$1" 2>/dev/null) || true
    [ "${ready:-0}" -ge 4 ] && return 0
    [ $waited -ge 1800 ] && return 1
    sleep 0.1
    waited=$((waited + 1))
  done
}
# check_unreachable LABEL OUT STATUS ELAPSED BOUND HOST_B [CALL_BOUND]: the job ended non-zero
# within BOUND seconds, and ranks 0 and 1 (host a) each name rank 2 or 3 of HOST_B as unreachable,
# their failing call having taken at most CALL_BOUND seconds (when given). Prints the output; sets
# failed=1 otherwise.
check_unreachable() {
  cat "$2"
  echo "job ended $4 s after host $6 became unreachable, exit status $3"
  [ "$3" -ne 0 ] || { echo "FAIL: $1: rccrun exited 0"; failed=1; }
  if [ "$(echo "$4 > $5" | bc)" = 1 ]; then
    echo "FAIL: $1: the job took $4 s to end (bound $5 s)"
    failed=1
  fi
  for r in 0 1; do
    line=$(grep "^\[$r\] rank $r failed after" "$2")
    case "$line" in
    *"rank 2 (host $6) is unreachable"* | *"rank 3 (host $6) is unreachable"*) ;;
    *) echo "FAIL: $1: rank $r does not name an unreachable rank of $6: '$line'"; failed=1 ;;
    esac
    took=$(echo "$line" | sed -n 's/.* failed after \([0-9.]*\) s:.*/\1/p')
    if [ -n "${7:-}" ] && { [ -z "$took" ] || [ "$(echo "$took > $7" | bc)" = 1 ]; }; then
      echo "FAIL: $1: rank $r's failing call took '$took' s (bound $7 s)"
      failed=1
    fi
  done
}
