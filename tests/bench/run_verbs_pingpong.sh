#!/usr/bin/env bash
# Runs verbs-pingpong as perftest's loops (ping-pong and stream) and with every rcc setting on, on
# the soft-RDMA VM's rxe device; passes when every run completes and prints its result line. No
# timing is asserted.
# usage: run_verbs_pingpong.sh BINARY
set -u
binary=$1
if [ -z "${RCC_VM_RXE_DEV:-}" ] || [ -z "${RCC_VM_RXE_GID_INDEX:-}" ]; then
  echo "run_verbs_pingpong: no rxe device (run in tests/vm/run-in-vm.sh --rxe)"
  exit 1
fi
# Once as perftest's loop (the defaults), once with every rcc setting on.
for settings in "" "slots=32 stride=8320 at_end=1 send_depth=256 signal_every=128 receives=72 inline=256 channel=1 copy=1 poll_cq=1"; do
  # shellcheck disable=SC2086  # the settings are separate words
  output=$("$binary" "$RCC_VM_RXE_DEV" "$RCC_VM_RXE_GID_INDEX" 1024 300 $settings 2>&1)
  status=$?
  printf '[%s]\n%s\n' "${settings:-defaults}" "$output"
  [ $status -eq 0 ] || { echo "run_verbs_pingpong: exit status $status"; exit 1; }
  grep -Eq 'one-way us: p50 [0-9.]+ p10 [0-9.]+' <<<"$output" || { echo "run_verbs_pingpong: no latency line"; exit 1; }
done
# The stream (window=): as ib_write_bw's loop, and with every rcc setting on and a polling receiver.
stream="window=64 send_depth=64 signal_every=64"
for settings in "$stream" "$stream slots=32 stride=8320 at_end=1 receives=72 inline=256 channel=1 copy=1 recv_polls=1"; do
  # shellcheck disable=SC2086
  output=$("$binary" "$RCC_VM_RXE_DEV" "$RCC_VM_RXE_GID_INDEX" 4096 2000 $settings 2>&1)
  status=$?
  printf '[%s]\n%s\n' "$settings" "$output"
  [ $status -eq 0 ] || { echo "run_verbs_pingpong: exit status $status"; exit 1; }
  grep -Eq 'bytes 4096 messages 2000 window 64: MB/s [0-9.]+ messages/s [0-9]+' <<<"$output" ||
    { echo "run_verbs_pingpong: no bandwidth line"; exit 1; }
done
