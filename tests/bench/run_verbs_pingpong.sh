#!/usr/bin/env bash
# Runs verbs-pingpong on the soft-RDMA VM's rxe device as perftest's loops (the ping-pong and the
# stream) and with rcc's settings on; passes when every run completes and prints its result
# line. No timing is asserted.
# usage: run_verbs_pingpong.sh BINARY
set -u
binary=$1
if [ -z "${RCC_VM_RXE_DEV:-}" ] || [ -z "${RCC_VM_RXE_GID_INDEX:-}" ]; then
  echo "run_verbs_pingpong: no rxe device (run in tests/vm/run-in-vm.sh --rxe)"
  exit 1
fi

# run BYTES COUNT PATTERN [SETTINGS]: one run, its output shown, its result line required.
run() {
  local bytes=$1 count=$2 pattern=$3 settings=${4:-} output status
  # shellcheck disable=SC2086  # the settings are separate words
  output=$("$binary" "$RCC_VM_RXE_DEV" "$RCC_VM_RXE_GID_INDEX" "$bytes" "$count" $settings 2>&1)
  status=$?
  printf '[%s]\n%s\n' "${settings:-defaults}" "$output"
  [ $status -eq 0 ] || { echo "run_verbs_pingpong: exit status $status"; exit 1; }
  grep -Eq "$pattern" <<<"$output" || { echo "run_verbs_pingpong: no line matching '$pattern'"; exit 1; }
}

rcc_layout="slots=32 stride=8320 at_end=1 receives=72 inline=256 channel=1 copy=1"
latency='one-way us: p50 [0-9.]+ p10 [0-9.]+'
run 1024 300 "$latency"
run 1024 300 "$latency" "$rcc_layout send_depth=256 signal_every=128 poll_cq=1"
# The stream: signal_every at most the window (rcc signals every 128 of 256), its receiver polling.
stream="window=64 send_depth=64 signal_every=64"
bandwidth='bytes 4096 messages 2000 window 64: MB/s [0-9.]+ messages/s [0-9]+'
run 4096 2000 "$bandwidth" "$stream"
run 4096 2000 "$bandwidth" "$stream $rcc_layout recv_polls=1"
