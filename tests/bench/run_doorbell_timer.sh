#!/usr/bin/env bash
# Runs rcc-bench's bw test on the soft-RDMA VM's rxe device with the doorbell timer preloaded;
# passes when the benchmark's row is intact and rank 0's (the sender's) line counts at least one
# doorbell per message, with time inside them. No timing is asserted.
# usage: run_doorbell_timer.sh MODULE RCCRUN RCC_BENCH
set -u
module=$1 rccrun=$2 bench=$3
if [ -z "${RCC_VM_RXE_DEV:-}" ] || [ -z "${RCC_VM_RXE_GID_INDEX:-}" ]; then
  echo "run_doorbell_timer: no rxe device (run in tests/vm/run-in-vm.sh --rxe)"
  exit 1
fi
window=16 windows=10
output=$(LD_PRELOAD=$module RCC_TRANSPORT=verbs RCC_IB_DEVICE=$RCC_VM_RXE_DEV RCC_IB_GID_INDEX=$RCC_VM_RXE_GID_INDEX \
  "$rccrun" -n 2 --timeout 120 "$bench" -c bw -W $window -n $windows -w 1 -b 8 -e 8 2>&1)
status=$?
printf '%s\n' "$output"
[ $status -eq 0 ] || { echo "run_doorbell_timer: exit status $status"; exit 1; }
grep -Eq '^8 +[0-9.]+$' <<<"$output" || { echo "run_doorbell_timer: no bandwidth row"; exit 1; }
# Rank 0, the sender, rings one doorbell per message at least (the warm-up window included).
sender=$(grep -E '^doorbell-timer: rcc-bench\[[0-9]+\] \(rank 0\): ' <<<"$output")
[ -n "$sender" ] || { echo "run_doorbell_timer: no doorbell-timer line from rank 0"; exit 1; }
pattern='^.*: ([0-9]+) doorbells, [0-9]+ other verbs commands; inside us: p50 ([0-9.]+) p99 [0-9.]+ mean [0-9.]+; long doorbells \(over p50 \+ 150 us\): [0-9]+, [0-9]+ a second, [0-9.]+ % of the run beyond p50; between us: p50 [0-9.]+ .*$'
doorbells=$(sed -nE "s/$pattern/\1/p" <<<"$sender")
inside=$(sed -nE "s/$pattern/\2/p" <<<"$sender")
[ -n "$doorbells" ] && [ -n "$inside" ] || { echo "run_doorbell_timer: rank 0's line does not parse: $sender"; exit 1; }
messages=$((window * (windows + 1)))
[ "$doorbells" -ge $messages ] || { echo "run_doorbell_timer: $doorbells doorbells for $messages messages"; exit 1; }
# The time inside a doorbell (rxe runs the transfer there) cannot be zero.
awk -v t="$inside" 'BEGIN { exit !(t > 0) }' || { echo "run_doorbell_timer: time inside a doorbell '$inside' is not positive"; exit 1; }
echo "run_doorbell_timer: ok ($doorbells doorbells on rank 0, $inside us inside at the median)"
