#!/bin/sh
# MPI_ERRORS_ARE_FATAL (the default): rank 0's MPI_Send to an invalid rank prints the call and
# rcc's reason and ends the whole job, the other ranks (blocked in a barrier) included, in bounded
# time; the job exits non-zero and the send never returns.
#   fatal_test.sh RCCRUN MPI_FATAL
set -u
rccrun=$1
program=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
RCC_TIMEOUT=60 "$rccrun" -n 3 --timeout 60 "$program" >"$out" 2>&1
status=$?
elapsed=$(($(date +%s) - start))
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$status" -ne 0 ] || fail "the job exited 0"
grep -q UNREACHABLE "$out" && fail "MPI_Send returned under MPI_ERRORS_ARE_FATAL"
grep -q "rank 0: MPI_Send: rank 3 is not a rank of the communicator" "$out" || fail "no message naming MPI_Send and the rank"
grep -q "MPI_ERR_RANK" "$out" || fail "the message does not give the class"
[ "$elapsed" -lt 30 ] || fail "the job took ${elapsed} s to end"
echo "PASS (exit $status after ${elapsed} s)"
