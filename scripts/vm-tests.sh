#!/usr/bin/env bash
# Runs inside the soft-RDMA VM (tests/vm/run-in-vm.sh --rxe --siw): the verbs backend's tests on
# Soft-RoCE, then on soft-iWARP. Every test here must fail, not skip, when verbs cannot run.
# With "sanitized" after BUILD_DIR (a build with RCC_SANITIZE): only the tests that reach the most
# verbs code in little time (contract, device selection, engine delivery, 2-rank p2p and
# collectives on rxe).
set -uo pipefail
build=${1:?usage: vm-tests.sh BUILD_DIR [sanitized]}
mode=${2:-full}
[ -n "${RCC_VM_RXE_DEV:-}" ] && [ -n "${RCC_VM_SIW_DEV:-}" ] || { echo "vm-tests: no rxe/siw device"; exit 1; }
export RCC_TEST_QUICK=1 RCC_TIMEOUT=120 RCC_BOOTSTRAP_TIMEOUT=120
status=0
run() {  # DESCRIPTION ENV... -- CTEST_ARGS...
  local what=$1
  shift
  local -a vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  echo "=== vm: $what"
  env "${vars[@]}" ctest --test-dir "$build" --output-on-failure --timeout 1200 "$@" || status=1
}
run "verbs contract + selection on rxe" RCC_TRANSPORT=verbs RCC_IB_DEVICE="$RCC_VM_RXE_DEV" -- -L verbs-rxe
run "verbs contract on siw" RCC_TRANSPORT=verbs RCC_IB_DEVICE="$RCC_VM_SIW_DEV" -- -L verbs-siw
if [ "$mode" = sanitized ]; then
  run "p2p + collectives over verbs on rxe (2 ranks)" RCC_TRANSPORT=verbs RCC_IB_DEVICE="$RCC_VM_RXE_DEV" -- \
    -R '^(p2p_test|collectives_test\.transport)\.n2$'
  exit $status
fi
# Collectives: the RCC_SHM=0 variant, where every collective goes through verbs (the default one
# takes the shared-memory path on one host, which the host stages test). The memory cycles
# (thousands of communicators) run on the host only: here they take over 10 minutes.
# 4 ranks, and soft-iWARP's p2p, run between two guests instead (scripts/vm-cross-tests.sh); the
# opt-ins below at 2 ranks. Not the RCC_CONNECT=lazy variants: verbs connects every peer at set-up.
run "p2p + collectives over verbs on rxe (2, 3 ranks)" RCC_TRANSPORT=verbs RCC_IB_DEVICE="$RCC_VM_RXE_DEV" -- \
  -L ranks -R '\.n[23]$' -E '^(collectives_test\.(n|small_slots|streaming|cma)|memory_test\.n[23]|.*\.lazy\.n[23])'
run "collectives over verbs on siw (2 ranks)" RCC_TRANSPORT=verbs RCC_IB_DEVICE="$RCC_VM_SIW_DEV" -- \
  -R '^collectives_test\.transport\.n2$'
# The polled opt-in (RCC_IB_POLLED_EAGER=1, rxe only: iWARP refuses it), tested as before it was
# the default: p2p and collectives, and ranks that sleep at once (every wait asks for a notice).
run "polled opt-in: p2p + collectives over verbs on rxe (2 ranks)" RCC_TRANSPORT=verbs \
  RCC_IB_DEVICE="$RCC_VM_RXE_DEV" RCC_IB_POLLED_EAGER=1 -- -R '^(p2p_test|collectives_test\.transport)\.n2$'
run "polled opt-in: p2p over verbs on rxe, waits sleeping at once (RCC_SPIN_COUNT=1)" RCC_TRANSPORT=verbs \
  RCC_IB_DEVICE="$RCC_VM_RXE_DEV" RCC_IB_POLLED_EAGER=1 RCC_SPIN_COUNT=1 -- -R '^p2p_test\.n2$'
run "notified: p2p over verbs on rxe, waits sleeping at once (RCC_SPIN_COUNT=1)" RCC_TRANSPORT=verbs \
  RCC_IB_DEVICE="$RCC_VM_RXE_DEV" RCC_SPIN_COUNT=1 -- -R '^p2p_test\.n2$'
# The kills on verbs: "faults" (a rank killed mid-loop, 3 ranks, one kill per case) and a smaller
# faults_hundred (10 random kills at 2..8 ranks; the host runs all 100 on UCX).
run "fault injection (a rank killed mid-loop; 10 random kills) over verbs on rxe" RCC_TRANSPORT=verbs \
  RCC_IB_DEVICE="$RCC_VM_RXE_DEV" RCC_FAULT_TRIALS=10 -- -L '^faults$'
exit $status
