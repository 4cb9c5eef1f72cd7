#!/usr/bin/env bash
# run-in-vm.sh - run one command as root inside a throwaway QEMU (TCG) guest booting the host's
# Debian kernel, with the host's filesystem and optional software RDMA devices (Soft-RoCE rxe0,
# soft-iWARP siw0). The build machines have no RDMA hardware and a kernel without InfiniBand; this
# is how the verbs backend gets tested. See tests/vm/README.md; --help for the options.
#
# Pieces (tests/vm/lib): options.sh (arguments), kernel.sh (which kernel, PVH vmlinux),
# siw.sh (out-of-tree siw.ko), initramfs.sh + initramfs-init.sh (boot to the 9p root),
# job.sh (what the guest runs), qemu.sh (the VM and its output), guest-stage.sh + guest-rdma.sh
# (inside the guest).
set -euo pipefail
vm_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/lib" && pwd)
for f in common options kernel siw initramfs job qemu; do
	# shellcheck source=/dev/null
	source "$vm_lib/$f.sh"
done

vm_parse_options "$@"
for tool in qemu-system-x86_64 cpio gzip modprobe modinfo ip timeout flock; do
	command -v "$tool" >/dev/null || vm_die "missing '$tool' (run scripts/setup.sh)"
done
[ "$opt_rxe$opt_siw" = 00 ] || command -v rdma >/dev/null || vm_die "missing 'rdma' (Debian package iproute2)"

t_start=$(vm_now)
kver=$(vm_pick_kernel "$opt_kernel") || vm_die "no kernel to boot"
cache=${RCC_VM_CACHE:-/var/cache/rcc-vm}/$kver
{ mkdir -p "$cache" && [ -w "$cache" ]; } 2>/dev/null || vm_die "cache directory $cache is not writable (set RCC_VM_CACHE)"
boot_image=$(vm_boot_image "$kver" "$cache")
initrd=$(vm_initramfs "$kver" "$cache" "$vm_lib") || vm_die "no initramfs"
siw_ko=""
if [ "$opt_siw" = 1 ]; then
	siw_ko=$(vm_siw_module "$kver" "$cache") || vm_die "soft-iWARP (siw) is not available for $kver"
fi

job_base=${TMPDIR:-/tmp}
case $job_base in *[[:space:],]*) job_base=/tmp ;; esac # qemu option syntax cannot quote them
vm_job=$(mktemp -d "$job_base/rcc-vm.XXXXXX")
vm_cleanup() {
	set +e # cleanup must run to the end
	vm_kill_qemu
	# The console's tail is printed here only when no status came back; a caller can show it later.
	if [ -n "$opt_console_copy" ]; then tr -d '\r' <"$vm_job/console.log" >"$opt_console_copy" 2>/dev/null; fi
	if [ "$opt_keep" = 1 ]; then vm_note "job directory kept: $vm_job"; else rm -rf "$vm_job"; fi
}
trap vm_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
vm_write_job "$vm_job" "$vm_lib" "$siw_ko"

t_boot=$(vm_now)
qemu_rc=0
vm_run_qemu "$vm_job" "$boot_image" "$initrd" || qemu_rc=$?
t_end=$(vm_now)

# show_failure WHAT: why there is no command status, with the guest console's tail.
show_failure() {
	vm_note "$1"
	[ -s "$vm_job/setup-error" ] && vm_note "guest: $(cat "$vm_job/setup-error")"
	if [ -s "$vm_job/qemu.log" ]; then
		vm_note "qemu said:"
		sed 's/^/  /' "$vm_job/qemu.log" >&2
	fi
	if [ "$opt_verbose" = 0 ] && [ -s "$vm_job/console.log" ]; then
		vm_note "guest console (last 40 lines):"
		tr -d '\r' <"$vm_job/console.log" | tail -n 40 | sed 's/^/  /' >&2
	fi
}
if [ -s "$vm_job/rc" ] && [ ! -e "$vm_job/setup-error" ]; then
	rc=$(cat "$vm_job/rc")
elif [ -s "$vm_job/setup-error" ]; then
	show_failure "VM setup failed"
	rc=$VM_EXIT_VM_FAILED
elif [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	show_failure "timed out after ${opt_timeout}s"
	rc=$VM_EXIT_TIMEOUT
else
	show_failure "the VM stopped without a result (qemu exit $qemu_rc)"
	rc=$VM_EXIT_VM_FAILED
fi
if [ "$opt_verbose" = 1 ]; then
	read -r g_ready g_done <"$vm_job/times" 2>/dev/null || true
	vm_note "kernel $kver (${boot_image##*/}); preparation $(vm_elapsed "$t_start" "$t_boot")s, VM $(vm_elapsed "$t_boot" "$t_end")s; guest clock: ready ${g_ready:-?}s, done ${g_done:-?}s; exit $rc"
fi
exit "$rc"
