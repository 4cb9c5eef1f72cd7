#!/usr/bin/env bash
# Runs rcc-bench's bw test on the soft-RDMA VM's rxe device with the doorbell timer preloaded;
# passes when the benchmark's row is intact and the sender's line counts at least one doorbell per
# message. No timing is asserted.
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
# The sender rings one doorbell per message at least (warm-up window included).
most=$(sed -nE 's/^doorbell-timer: rcc-bench\[[0-9]+\]: ([0-9]+) doorbells.*between us: p50 [0-9.]+ .*/\1/p' <<<"$output" | sort -n | tail -1)
[ -n "$most" ] || { echo "run_doorbell_timer: no doorbell-timer line from rcc-bench"; exit 1; }
[ "$most" -ge $((window * (windows + 1))) ] || { echo "run_doorbell_timer: $most doorbells for $((window * (windows + 1))) messages"; exit 1; }
# The time inside a doorbell (rxe runs the transfer there) cannot be zero.
inside=$(sed -nE "s/^doorbell-timer: rcc-bench\[[0-9]+\]: $most doorbells; inside us: p50 ([0-9.]+) .*/\1/p" <<<"$output" | head -1)
awk -v t="${inside:-0}" 'BEGIN { exit !(t > 0) }' || { echo "run_doorbell_timer: time inside a doorbell '${inside}' is not positive"; exit 1; }
echo "run_doorbell_timer: ok ($most doorbells on the sender, $inside us inside at the median)"
