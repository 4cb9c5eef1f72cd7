#!/bin/bash
# Real jobs in which one rank goes astray (tests/debugging/stuck.c): the error names the
# communicator, the collective and its number; rccrun's table puts the odd rank first; SIGUSR1
# shows a healthy job's table and the job still succeeds; a rank killed during a dump does not
# hang it; rcc-dump reads a directory the user chose; the recorder keeps RCC_CALL_RECORD calls.
#   stuck_test.sh RCCRUN STUCK RCC_DUMP
set -u
rccrun=$1 stuck=$2 rcc_dump=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
pass() { echo "ok: $1"; }
fail() {
  echo "FAILED: $1"
  failures=$((failures + 1))
}
# expect NAME FILE [!]EXTENDED-REGEX
expect() {
  local name=$1 file=$2 pattern=$3
  if [ "${pattern:0:1}" = "!" ]; then
    if grep -qE -- "${pattern:1}" "$file"; then fail "$name: found '${pattern:1}'"; sed 's/^/    /' "$file"; else pass "$name"; fi
  elif grep -qE -- "$pattern" "$file"; then
    pass "$name"
  else
    fail "$name: no '$pattern' in:"
    sed 's/^/    /' "$file"
  fi
}
# The line after "comm ID ..." that rccrun's table lists first.
first_row() { awk -v head="comm $2 (" 'index($0, head) == 1 {getline; print; exit}' "$1"; }

# 1. World, 4 ranks: rank 3 sleeps where the others call their 4th allreduce.
timeout 120 "$rccrun" -n 4 --env RCC_TIMEOUT=2 "$stuck" sleep 3 world 6 6 >"$tmp/1" 2>&1
status=$?
[ $status -ne 0 ] && pass "sleeping rank: the job fails" || fail "sleeping rank: the job succeeded"
expect "sleeping rank: the timeout names the collective, its number and comm" "$tmp/1" \
  'status RCC_ERR_TIMEOUT in allreduce message allreduce #3 of comm 0 \(rank [0-2] of 4\): '
expect "sleeping rank: rccrun prints the table" "$tmp/1" 'where the ranks were when the job timed out'
row=$(first_row "$tmp/1" 0)
echo "$row" | grep -qE '^ *rank 3: past allreduce #2 of comm 0' && pass "sleeping rank: it is the first row" ||
  fail "sleeping rank: first row is '$row'"
expect "sleeping rank: the others are in allreduce #3" "$tmp/1" 'ranks 0-2 are in allreduce #3 of comm 0'

# 1b. The same through messages (a ring): the table says whom each rank waits for.
timeout 120 "$rccrun" -n 4 --env RCC_TIMEOUT=2 --env RCC_ALGO=allreduce:ring "$stuck" sleep 3 world 6 6 >"$tmp/1b" 2>&1
expect "ring: the timeout names the collective and the peer" "$tmp/1b" \
  'allreduce #3 of comm 0 \(rank [0-2] of 4\): no progress for 2 s \(RCC_TIMEOUT\) on a receive'
expect "ring: the table says whom each waits for" "$tmp/1b" \
  'ranks 0-2 are in allreduce #3 of comm 0, running [0-9.]+ s \(0 waits for 3; 1 waits for 0; 2 waits for 1\)'

# 2. A sub-communicator (the half of 6 ranks holding rank 4, which is its rank 1).
mkdir "$tmp/dir2"
timeout 120 "$rccrun" -n 6 --env RCC_TIMEOUT=2 --env RCC_DEBUG_DUMP_DIR="$tmp/dir2" "$stuck" sleep 4 sub 6 6 \
  >"$tmp/2" 2>&1
expect "sub-communicator: the timeout names its comm" "$tmp/2" 'in allreduce message allreduce #[0-9]+ of comm [1-9][0-9]* \(rank [02] of 3\)'
# Its number counts the collectives that set the sub-communicator up too.
where=$(grep -oE 'message allreduce #[0-9]+ of comm [1-9][0-9]*' "$tmp/2" | head -1)
seq=$(echo "$where" | sed -E 's/.*#([0-9]+) .*/\1/')
sub=$(echo "$where" | awk '{print $NF}')
row=$(first_row "$tmp/2" "$sub")
echo "$row" | grep -qE "^ *rank 1: past allreduce #$((seq - 1)) of comm $sub" &&
  pass "sub-communicator: its rank 1 is the first row" || fail "sub-communicator: first row of comm '$sub' is '$row'"
# rcc-dump reads the directory the user chose (rccrun leaves it).
"$rcc_dump" "$tmp/dir2" >"$tmp/2dump" 2>&1
expect "rcc-dump: the same table" "$tmp/2dump" "ranks 0,2 are in allreduce #$seq of comm $sub"
"$rcc_dump" "$tmp/nothing-here" >"$tmp/2bad" 2>&1 && fail "rcc-dump: a missing directory succeeded" ||
  expect "rcc-dump: a missing directory is named" "$tmp/2bad" 'nothing-here: cannot open the directory'

# 3. Another collective (RCC_CHECK=1): the mismatch names the call the same way.
timeout 120 "$rccrun" -n 3 --env RCC_CHECK=1 --env RCC_TIMEOUT=5 "$stuck" other 1 world >"$tmp/3" 2>&1
expect "other collective: the mismatch names the collective and its number" "$tmp/3" \
  'RCC_ERR_MISMATCH in (allreduce|broadcast) message (allreduce|broadcast) #3 of comm 0'

# 4. Another root (RCC_CHECK=1), 8 ranks.
timeout 120 "$rccrun" -n 8 --env RCC_CHECK=1 --env RCC_TIMEOUT=5 "$stuck" root 5 world >"$tmp/4" 2>&1
expect "other root: the mismatch names the broadcast and its number" "$tmp/4" \
  'RCC_ERR_MISMATCH in broadcast message broadcast #3 of comm 0'

# 5. SIGUSR1 to rccrun of a healthy job: a table, and the job still completes correctly.
# (rccrun's own --timeout: a wrapper such as timeout(1) would take the SIGUSR1 itself)
"$rccrun" --timeout 120 -n 4 "$stuck" healthy 0 world 150 >"$tmp/5" 2>&1 &
job=$!
sleep 1.5
kill -USR1 $job
wait $job
status=$?
[ $status -eq 0 ] && pass "SIGUSR1: the job still succeeds" || fail "SIGUSR1: the job exited $status"
[ "$(grep -c '^stuck: rank [0-3] ok' "$tmp/5")" = 4 ] && pass "SIGUSR1: every rank's results are right" ||
  fail "SIGUSR1: not every rank reported ok"
expect "SIGUSR1: rccrun prints where the ranks are" "$tmp/5" 'where the ranks are'
expect "SIGUSR1: the table has the world" "$tmp/5" '^comm 0 \(4 ranks\)'
expect "SIGUSR1: no rank failed to answer" "$tmp/5" '!did not answer'

# 6. A rank killed during a dump: rccrun neither hangs nor waits past its answer time.
"$rccrun" --timeout 120 -n 4 "$stuck" healthy 0 world 300 >"$tmp/6" 2>&1 &
job=$!
sleep 1.5
victim=$(pgrep -P $job | head -1)
kill -USR1 $job
kill -9 "$victim"
start=$(date +%s)
wait $job
status=$?
[ $status -ne 0 ] && [ $status -ne 124 ] && pass "killed during a dump: rccrun ends, non-zero ($status)" ||
  fail "killed during a dump: status $status"
[ $(($(date +%s) - start)) -lt 60 ] && pass "killed during a dump: in bounded time" || fail "killed during a dump: too slow"

# 7. The recorder keeps RCC_CALL_RECORD calls however many are made.
mkdir "$tmp/dir7"
timeout 120 "$rccrun" -n 2 --env RCC_CALL_RECORD=16 --env RCC_DEBUG_DUMP_DIR="$tmp/dir7" "$stuck" record 0 world 1000 \
  >"$tmp/7" 2>&1
for r in 0 1; do
  calls=$(grep -c '^call ' "$tmp/dir7/rcc-calls.$r.txt" 2>/dev/null)
  last=$(grep '^call ' "$tmp/dir7/rcc-calls.$r.txt" 2>/dev/null | tail -1 | grep -oE 'seq=[0-9]+')
  [ "$calls" = 16 ] && [ "$last" = seq=999 ] && pass "record bound: rank $r keeps 16 calls, the last #999" ||
    fail "record bound: rank $r has ${calls:-no} calls, last ${last:-none}"
done

echo "stuck_test: $failures failure(s)"
[ $failures -eq 0 ]
