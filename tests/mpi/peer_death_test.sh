#!/bin/sh
# A rank of an MPI job dies: with MPI_ERRORS_RETURN every survivor's pending call (a receive from
# it, an allreduce) fails in bounded time with an error string naming the dead rank; the job then
# exits non-zero. At 2, 3 and 5 ranks.
#   peer_death_test.sh RCCRUN PEER_DEATH
set -u
rccrun=$1
program=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for n in 2 3 5; do
  dead=$((n - 1))
  start=$(date +%s)
  RCC_TIMEOUT=60 "$rccrun" -n $n --timeout 60 "$program" >"$out" 2>&1
  status=$?
  elapsed=$(($(date +%s) - start))
  cat "$out"
  [ "$status" -ne 0 ] || fail "$n ranks: the job exited 0 although rank $dead died"
  [ "$elapsed" -lt 30 ] || fail "$n ranks: the job took ${elapsed} s"
  survivors=$(grep -c "^survivor .* failed after .*rank $dead .*died" "$out")
  [ "$survivors" -eq $((n - 1)) ] || fail "$n ranks: $survivors of $((n - 1)) survivors reported rank $dead's death"
  echo "ok: $n ranks, rank $dead died, $survivors survivors told, ${elapsed} s"
done
echo PASS
