#!/usr/bin/env bash
# bench/vm-host-sampler against a real VM (tests/vm/run-in-vm.sh, no RDMA device needed): the guest
# keeps a vCPU busy in three phases written to a marker on a shared directory, the second one
# named for --nice-while. Passes when the report has the three phases with the vCPU threads by
# name, the vCPUs ran, and QEMU's main thread was at nice 19 only in the second (back to 0 in the
# third) while the vCPUs stayed at nice 0. Needs root (bringing a thread back from nice 19), as CI has.
# usage: run_vm_host_sampler.sh SAMPLER RUN_IN_VM
set -u
sampler=$1 vm=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/rcc-sampler.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
"$sampler" record --marker "$work/marker" --out "$work/log" --nice-while slow --wait-s 120 & recorder=$!
spin='end=$(($(date +%s) + 2)); while [ "$(date +%s)" -lt $end ]; do :; done'
"$vm" --no-rdma --rw "$work" --timeout 120 -- \
  sh -c "echo busy > $work/marker; $spin; echo slow-busy > $work/marker; $spin; echo busy-again > $work/marker; $spin; echo idle > $work/marker"
status=$?
wait $recorder
recorded=$?
[ $status -eq 0 ] || { echo "run_vm_host_sampler: the VM exited with $status"; exit 1; }
[ $recorded -eq 0 ] || { echo "run_vm_host_sampler: record exited with $recorded"; exit 1; }
report=$("$sampler" report "$work/log") || { echo "run_vm_host_sampler: report failed"; exit 1; }
printf '%s\n' "$report"
# phase PHASE: the report's lines for that phase.
phase() { awk -v p="== $1:" 'index($0, p) == 1 { on = 1; print; next } /^== / { on = 0 } on' <<<"$report"; }
busy=$(phase busy) slow=$(phase slow-busy) again=$(phase busy-again)
[ -n "$busy" ] && [ -n "$slow" ] && [ -n "$again" ] || { echo "run_vm_host_sampler: a phase is missing"; exit 1; }
for lines in "$busy" "$slow" "$again"; do
  grep -Eq '^ +CPU 0/TCG +[0-9]+ +nice +0 ' <<<"$lines" || { echo "run_vm_host_sampler: no vCPU 0 at nice 0"; exit 1; }
  # The guest's busy loop runs on one vCPU or the other: together they ran over half the phase.
  awk '/^ +CPU [0-9]+\/TCG / { for (i = 1; i < NF; ++i) if ($i == "run") run += $(i + 1) } END { exit !(run > 50) }' \
    <<<"$lines" || { echo "run_vm_host_sampler: the vCPUs ran under 50 % of a busy phase"; exit 1; }
done
main_nice() {  # PHASE_LINES NICE: QEMU's main thread at that nice value
  grep -Eq "^ +qemu-system-x86 +[0-9]+ +nice +$2 " <<<"$1"
}
main_nice "$busy" 0 || { echo "run_vm_host_sampler: main thread not at nice 0 in busy"; exit 1; }
main_nice "$slow" 19 || { echo "run_vm_host_sampler: main thread not at nice 19 in slow-busy"; exit 1; }
main_nice "$again" 0 || { echo "run_vm_host_sampler: main thread not back at nice 0 in busy-again"; exit 1; }
grep -q 'non-vCPU threads at nice 19' <<<"$slow" || { echo "run_vm_host_sampler: slow-busy not marked as reniced"; exit 1; }
! grep -q 'non-vCPU threads at nice 19' <<<"$busy$again" || { echo "run_vm_host_sampler: a usual phase marked as reniced"; exit 1; }
echo "run_vm_host_sampler: ok"
