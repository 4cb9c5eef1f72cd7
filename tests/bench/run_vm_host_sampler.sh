#!/usr/bin/env bash
# bench/vm-host-sampler against a real VM (tests/vm/run-in-vm.sh, no RDMA device needed): the guest
# keeps a vCPU busy in two phases written to a marker on a shared directory, the second one named
# for --nice-while. Passes when the report has both phases with the vCPU threads by name, and
# QEMU's main thread ran at nice 19 only in the second while the vCPUs stayed at nice 0.
# usage: run_vm_host_sampler.sh SAMPLER RUN_IN_VM
set -u
sampler=$1 vm=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/rcc-sampler.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
"$sampler" record --marker "$work/marker" --out "$work/log" --nice-while slow --wait-s 120 & recorder=$!
spin='end=$(($(date +%s) + 2)); while [ "$(date +%s)" -lt $end ]; do :; done'
"$vm" --no-rdma --rw "$work" --timeout 120 -- sh -c "echo busy > $work/marker; $spin; echo slow-busy > $work/marker; $spin; echo idle > $work/marker"
status=$?
wait $recorder
recorded=$?
[ $status -eq 0 ] || { echo "run_vm_host_sampler: the VM exited with $status"; exit 1; }
[ $recorded -eq 0 ] || { echo "run_vm_host_sampler: record exited with $recorded"; exit 1; }
report=$("$sampler" report "$work/log") || { echo "run_vm_host_sampler: report failed"; exit 1; }
printf '%s\n' "$report"
# phase PHASE: the report's lines for that phase.
phase() { awk -v p="== $1:" 'index($0, p) == 1 { on = 1; print; next } /^== / { on = 0 } on' <<<"$report"; }
busy=$(phase busy) slow=$(phase slow-busy)
[ -n "$busy" ] && [ -n "$slow" ] || { echo "run_vm_host_sampler: a phase is missing"; exit 1; }
for lines in "$busy" "$slow"; do
  grep -Eq '^ +CPU 0/TCG +[0-9]+ +nice +0 ' <<<"$lines" || { echo "run_vm_host_sampler: no vCPU 0 at nice 0"; exit 1; }
done
grep -Eq '^ +qemu-system-x86 +[0-9]+ +nice +0 ' <<<"$busy" || { echo "run_vm_host_sampler: main thread not at nice 0 in busy"; exit 1; }
grep -Eq '^ +qemu-system-x86 +[0-9]+ +nice +19 ' <<<"$slow" || { echo "run_vm_host_sampler: main thread not at nice 19 in slow-busy"; exit 1; }
grep -q 'non-vCPU threads at nice 19' <<<"$slow" || { echo "run_vm_host_sampler: slow-busy not marked as reniced"; exit 1; }
echo "run_vm_host_sampler: ok"
