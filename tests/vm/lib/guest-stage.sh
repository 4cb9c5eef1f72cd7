#!/bin/bash
# Guest stage: PID 1 inside the VM, running the host's bash from the shared root after the
# initramfs switched root. Prepares the system, creates the RDMA devices (guest-rdma.sh), runs
# the command with the caller's environment and cwd, writes its status to the job directory and
# powers off. Usage: guest-stage.sh JOBDIR
job=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
t_stage=$(cut -d' ' -f1 /proc/uptime)

power_off() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}
# setup_fail MESSAGE: the VM is unusable; the host reports 125 and prints the console tail.
setup_fail() {
	echo "rcc-vm(guest): setup failed: $*"
	echo "$*" >"$job/setup-error"
	echo 125 >"$job/rc"
	power_off
}

# shellcheck source=/dev/null
source "$job/config" || setup_fail "cannot read $job/config"

# What udev and systemd would normally provide.
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sfn /proc/self/fd /dev/fd # bash's <(...) needs it
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
echo "$CFG_HOSTNAME" >/proc/sys/kernel/hostname
ip link set lo up || setup_fail "ip link set lo up (is iproute2 installed?)"

# Read-write shares (cwd, --rw), listed parents first by the host.
while IFS=$'\t' read -r tag path; do
	[ -n "$tag" ] || continue
	mkdir -p "$path" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap "$tag" "$path" ||
		setup_fail "mounting host directory $path read-write failed"
done <"$job/mounts"

# Output channels: two virtio-serial ports named by the host. The driver learns a port's name
# from the host after the module loads, so the names may appear a moment later (a guest of the
# two-guests stage once looked too early on a busy machine): look for up to 20 s.
modprobe virtio_console || setup_fail "modprobe virtio_console"
port_out="" port_err=""
for _ in $(seq 200); do
	for p in /sys/class/virtio-ports/*; do
		case $(cat "$p/name" 2>/dev/null) in
		rccvm.stdout) port_out=/dev/${p##*/} ;;
		rccvm.stderr) port_err=/dev/${p##*/} ;;
		esac
	done
	[ -n "$port_out" ] && [ -n "$port_err" ] && [ -c "$port_out" ] && [ -c "$port_err" ] && break
	sleep 0.1
done
[ -n "$port_out" ] && [ -n "$port_err" ] || setup_fail "virtio-serial ports rccvm.stdout/rccvm.stderr not found"

[ "$CFG_FORCE_SETUP_FAIL" = 1 ] && setup_fail "forced by RCC_VM_FORCE_SETUP_FAIL=1"

# shellcheck source=tests/vm/lib/guest-rdma.sh
source "$job/guest-rdma.sh" || setup_fail "cannot read $job/guest-rdma.sh"
rccvm_rdma_vars=()
# --link: the NIC to the other guest carries its address and both RDMA devices (RoCE v2 and iWARP
# between two kernels); without it each device gets a dummy netdev of its own (loopback RDMA).
if [ -n "$CFG_LINK_IP" ]; then
	link_if=$(link_up "$CFG_LINK_MAC" "$CFG_LINK_IP") || setup_fail "the link NIC ($CFG_LINK_MAC, $CFG_LINK_IP)"
	rccvm_rdma_vars+=("RCC_VM_LINK_IF=$link_if" "RCC_VM_LINK_IP=$CFG_LINK_IP")
	CFG_RXE_NETDEV=$link_if CFG_RXE_IP=$CFG_LINK_IP CFG_SIW_NETDEV=$link_if CFG_SIW_IP=$CFG_LINK_IP
fi
if [ "$CFG_RXE" = 1 ]; then
	gid_index=$(rdma_add_rxe rxe0 "$CFG_RXE_NETDEV" "$CFG_RXE_IP") || setup_fail "Soft-RoCE device rxe0"
	rccvm_rdma_vars+=(RCC_VM_RXE_DEV=rxe0 "RCC_VM_RXE_IP=$CFG_RXE_IP" "RCC_VM_RXE_GID_INDEX=$gid_index")
fi
if [ "$CFG_SIW" = 1 ]; then
	rdma_add_siw siw0 "$CFG_SIW_NETDEV" "$CFG_SIW_IP" "$CFG_SIW_KO" || setup_fail "soft-iWARP device siw0"
	rccvm_rdma_vars+=(RCC_VM_SIW_DEV=siw0 "RCC_VM_SIW_IP=$CFG_SIW_IP")
fi
t_ready=$(cut -d' ' -f1 /proc/uptime)
echo "rcc-vm(guest): stage at ${t_stage}s, ready at ${t_ready}s"
if [ "$CFG_VERBOSE" = 1 ] && [ "$CFG_RXE$CFG_SIW" != 00 ]; then
	rdma link show
fi

# A virtio port can be opened only once, so a command that reopens /dev/stdout or /dev/stderr
# (tee /dev/stderr) would get EBUSY: the command writes to pipes, copied to the ports.
mkfifo /run/rccvm.out /run/rccvm.err
cat /run/rccvm.out >"$port_out" &
copy_out=$!
cat /run/rccvm.err >"$port_err" &
copy_err=$!
mapfile -d '' -t rccvm_argv <"$job/argv"
rccvm_cwd=$CFG_CWD # the caller's variables, sourced below, must not change what runs where
(
	# The caller's exported variables; RCC_VM_* describe this VM, not the caller's.
	# shellcheck source=/dev/null
	source "$job/env" 2>/dev/null
	for v in $(compgen -e RCC_VM_); do unset "$v"; done
	export RCC_VM=1 "${rccvm_rdma_vars[@]}"
	ulimit -l unlimited
	cd "$rccvm_cwd" || exit 125
	exec "${rccvm_argv[@]}"
) </dev/null >/run/rccvm.out 2>/run/rccvm.err
rc=$?
# Let the copies drain. A background process that still holds the pipes open gets 5 s; after
# that its output is dropped and it dies at power-off.
for _ in $(seq 50); do
	kill -0 "$copy_out" 2>/dev/null || kill -0 "$copy_err" 2>/dev/null || break
	sleep 0.1
done
kill "$copy_out" "$copy_err" 2>/dev/null
t_done=$(cut -d' ' -f1 /proc/uptime)
echo "rcc-vm(guest): command exited $rc at ${t_done}s"
echo "$t_ready $t_done" >"$job/times"
echo "$rc" >"$job/rc"
power_off
