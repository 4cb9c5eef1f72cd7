# shellcheck shell=bash
# Running qemu: command line, output plumbing, timeout, and cleanup on any exit or signal.
# shellcheck disable=SC2054 # commas below are qemu option syntax

# x86-64-v2 level under TCG: binaries built for a baseline x86-64-v2 CPU run; ones tuned for the build
# host's own CPU (AVX-512) fail loudly with SIGILL. "-cpu max" would add AVX2 but halves rxe throughput.
readonly VM_CPU_MODEL=qemu64,+ssse3,+sse4.1,+sse4.2,+popcnt,+cx16,+lahf-lm

vm_timeout_pid="" vm_copy_pids=()

# vm_kill_qemu: stops the VM and the output copies. Safe to call twice.
vm_kill_qemu() {
	local p qpid
	qpid=$(cat "${vm_job:-/nonexistent}/qemu.pid" 2>/dev/null || true)
	[ -n "$vm_timeout_pid" ] && kill -TERM "$vm_timeout_pid" 2>/dev/null
	[ -n "$qpid" ] && kill -TERM "$qpid" 2>/dev/null
	if [ -n "$vm_timeout_pid" ]; then
		wait "$vm_timeout_pid" 2>/dev/null
		vm_timeout_pid=""
	fi
	# Only if that pid is still this run's qemu (the pid file may be stale).
	if [ -n "$qpid" ] && { tr '\0' ' ' <"/proc/$qpid/cmdline"; } 2>/dev/null | grep -qF "$vm_job/qemu.pid"; then
		kill -KILL "$qpid" 2>/dev/null
	fi
	for p in "${vm_copy_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${vm_copy_pids[@]}"; do wait "$p" 2>/dev/null; done
	vm_copy_pids=()
	return 0
}

# vm_run_qemu JOB BOOT_IMAGE INITRD: boots the VM and waits for it. The command's stdout and stderr
# arrive through two virtio-serial ports whose chardevs are FIFOs drained by cat; the console goes
# to JOB/console.log (and to stderr with -v). Returns qemu's status (124 when the timeout hit).
vm_run_qemu() {
	local job=$1 image=$2 initrd=$3 fd_out fd_err fd_con
	local -a qemu virtfs nic=(-nic none)
	mapfile -t virtfs < <(vm_job_virtfs "$job")
	# --link: a virtio NIC whose frames travel over a TCP stream between two QEMUs on this host (no
	# bridge or tap, no root on the host side). A stream, not UDP datagrams: over UDP, one run's
	# link went silent in one direction for good under soft-iWARP's load (heartbeats stopped, then
	# ssh timed out); a stream neither loses nor reorders frames, and pushes back on the sender.
	# event_idx=off: Debian 12's QEMU (7.2) can stop taking frames into a guest for good when that
	# guest's receive ring runs short under load: with event indexes the guest may not kick after
	# refilling it (fixed in QEMU 9.1, "virtio-net: Fix network stall at the host side waiting for
	# kick"). Without them the guest kicks whenever the device asks, as that fix's recheck ensures.
	# Seen in two local CI runs mid soft-iWARP suite: guest a's transmit queue stalled for good
	# ("NETDEV WATCHDOG: transmit queue 0 timed out", in the console tail two-guests.sh prints)
	# while guest b's kernel ran on, as when b's QEMU stops reading the stream because its device
	# takes no more frames; the UDP case above looked the same.
	if [ -n "$opt_link_ip" ]; then
		nic=(-netdev "socket,id=link,$opt_link_mode=127.0.0.1:$opt_link_port"
			-device "virtio-net-pci,netdev=link,mac=$(vm_link_mac),event_idx=off")
	fi
	# debug-threads names the vCPU threads "CPU n/TCG" on the host (for top -H, perf).
	qemu=(qemu-system-x86_64 -name "$opt_hostname,debug-threads=on" -nodefaults -no-user-config -no-reboot -display none -monitor none
		-machine pc -accel tcg,thread=multi -cpu "$VM_CPU_MODEL" -smp "$opt_smp" -m "$opt_mem"
		-kernel "$image" -initrd "$initrd"
		-append "console=ttyS0 loglevel=4 panic=-1"
		-pidfile "$job/qemu.pid"
		-chardev "file,id=con,path=$job/con" -serial chardev:con
		-device virtio-serial-pci
		-chardev "file,id=out,path=$job/out" -device virtserialport,chardev=out,name=rccvm.stdout
		-chardev "file,id=err,path=$job/err" -device virtserialport,chardev=err,name=rccvm.stderr
		"${nic[@]}"
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
		"${virtfs[@]}")
	# This shell holds each FIFO open read-write while qemu runs, so neither qemu's nor cat's open()
	# blocks; closing them afterwards gives cat end-of-file once qemu is gone.
	mkfifo "$job/out" "$job/err" "$job/con"
	exec {fd_out}<>"$job/out" {fd_err}<>"$job/err" {fd_con}<>"$job/con"
	cat "$job/out" {fd_out}>&- {fd_err}>&- {fd_con}>&- &
	vm_copy_pids+=($!)
	cat "$job/err" >&2 {fd_out}>&- {fd_err}>&- {fd_con}>&- &
	vm_copy_pids+=($!)
	if [ "$opt_verbose" = 1 ]; then
		tee "$job/console.log" <"$job/con" >&2 {fd_out}>&- {fd_err}>&- {fd_con}>&- &
	else
		cat "$job/con" >"$job/console.log" {fd_out}>&- {fd_err}>&- {fd_con}>&- &
	fi
	vm_copy_pids+=($!)
	vm_verbose "${qemu[*]}"

	local rc=0
	if [ "$opt_timeout" -gt 0 ]; then
		# timeout(1) forwards TERM/INT to qemu; -k covers a qemu that ignores them.
		timeout -k 5 "$opt_timeout" "${qemu[@]}" </dev/null >"$job/qemu.log" 2>&1 {fd_out}>&- {fd_err}>&- {fd_con}>&- &
	else
		"${qemu[@]}" </dev/null >"$job/qemu.log" 2>&1 {fd_out}>&- {fd_err}>&- {fd_con}>&- &
	fi
	vm_timeout_pid=$!
	wait "$vm_timeout_pid" || rc=$?
	vm_timeout_pid=""
	exec {fd_out}>&- {fd_err}>&- {fd_con}>&-
	local p
	for p in "${vm_copy_pids[@]}"; do wait "$p" 2>/dev/null; done
	vm_copy_pids=()
	return $rc
}
