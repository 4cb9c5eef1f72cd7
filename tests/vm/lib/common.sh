# shellcheck shell=bash
# Shared constants and messages for the host side of run-in-vm.sh.
# shellcheck disable=SC2034 # used by the scripts that source this file

# Exit statuses of run-in-vm.sh besides the command's own.
readonly VM_EXIT_TIMEOUT=124   # same as coreutils timeout(1)
readonly VM_EXIT_VM_FAILED=125 # the VM did not boot, or an RDMA device could not be created

# Guest addressing: each soft-RDMA device gets its own dummy netdev and /24 subnet.
readonly VM_RXE_NETDEV=rxenet0 VM_RXE_IP=10.0.2.15
readonly VM_SIW_NETDEV=siwnet0 VM_SIW_IP=10.0.3.15

vm_note() { echo "rcc-vm: $*" >&2; }
vm_verbose() { [ "${opt_verbose:-0}" = 1 ] && echo "rcc-vm: $*" >&2; return 0; }
vm_die() { echo "rcc-vm: $*" >&2; exit "$VM_EXIT_VM_FAILED"; }

# Seconds since the epoch with fractions, for the -v timing summary.
vm_now() { date +%s.%N; }
vm_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
