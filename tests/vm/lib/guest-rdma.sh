# shellcheck shell=bash
# Soft-RDMA devices inside the guest, each on its own dummy netdev and subnet (loopback RDMA:
# any number of processes and QPs on one device). Sourced by guest-stage.sh; uses the host's
# modprobe/ip/rdma through the shared root. Messages go to the console.

# make_dummy NAME IP: a dummy netdev holding IP/24 (none is made when NAME already exists: the
# link NIC of two linked guests carries both devices).
make_dummy() {
	[ -e "/sys/class/net/$1" ] && return 0
	modprobe dummy numdummies=0 &&
		ip link add "$1" type dummy && ip addr add "$2/24" dev "$1" && ip link set "$1" up
}

# link_up MAC IP: the virtio NIC with MAC gets IP/24 and comes up; prints its name.
link_up() {
	local f name=""
	modprobe virtio_net >&2 || { echo "rcc-vm(guest): modprobe virtio_net failed" >&2; return 1; }
	for _ in $(seq 50); do
		for f in /sys/class/net/*/address; do
			[ "$(cat "$f" 2>/dev/null)" = "$1" ] && name=${f%/address} && name=${name##*/}
		done
		[ -n "$name" ] && break
		sleep 0.1
	done
	[ -n "$name" ] || { echo "rcc-vm(guest): no NIC with MAC $1" >&2; return 1; }
	ip addr add "$2/24" dev "$name" >&2 && ip link set "$name" up >&2 || return 1
	echo "$name"
}

# ipv4_gid_suffix IP: the last 32 bits of an IPv4-mapped GID as sysfs prints them (0a00:020f).
ipv4_gid_suffix() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"
}

# wait_active DEV: until port 1 is ACTIVE (10 s).
wait_active() {

	for _ in $(seq 100); do
		case $(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null) in *ACTIVE*) return 0 ;; esac
		sleep 0.1
	done
	echo "rcc-vm(guest): $1 port 1 is not ACTIVE: $(cat "/sys/class/infiniband/$1/ports/1/state" 2>&1)"
	return 1
}

# roce_v2_gid_index DEV IP: prints the GID index whose entry is the IPv4-mapped IP with type
# "RoCE v2" (index 0 is the IPv6 link-local one); waits up to 10 s for the GID table to fill.
roce_v2_gid_index() {
	local dev=$1 want
	want="0000:0000:0000:0000:0000:ffff:$(ipv4_gid_suffix "$2")"
	local f idx
	for _ in $(seq 100); do
		for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
			idx=${f##*/}
			[ "$(cat "$f" 2>/dev/null)" = "$want" ] || continue
			[ "$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$idx" 2>/dev/null)" = "RoCE v2" ] || continue
			echo "$idx"
			return 0
		done
		sleep 0.1
	done
	echo "rcc-vm(guest): $dev has no RoCE v2 GID for $2" >&2
	return 1
}

# rdma_add_rxe DEV NETDEV IP: creates the Soft-RoCE device, prints its RoCE v2 IPv4 GID index.
rdma_add_rxe() {
	modprobe -a ib_uverbs rdma_ucm rdma_rxe >&2 || { echo "rcc-vm(guest): modprobe rdma_rxe failed" >&2; return 1; }
	make_dummy "$2" "$3" >&2 || { echo "rcc-vm(guest): dummy netdev $2 failed" >&2; return 1; }
	rdma link add "$1" type rxe netdev "$2" >&2 || { echo "rcc-vm(guest): rdma link add $1 type rxe failed" >&2; return 1; }
	wait_active "$1" >&2 && roce_v2_gid_index "$1" "$3"
}

# rdma_add_siw DEV NETDEV IP [SIW_KO]: creates the soft-iWARP device; SIW_KO is the out-of-tree
# module to insmod (its dependencies come from the kernel's own modules), empty for an in-tree one.
rdma_add_siw() {
	local ko=$4 dep
	modprobe -a ib_uverbs rdma_ucm || return 1
	if [ -n "$ko" ]; then
		for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
			modprobe "$dep" || { echo "rcc-vm(guest): modprobe $dep (needed by siw) failed"; return 1; }
		done
		insmod "$ko" || { echo "rcc-vm(guest): insmod $ko failed"; return 1; }
	else
		modprobe siw || return 1
	fi
	make_dummy "$2" "$3" || { echo "rcc-vm(guest): dummy netdev $2 failed"; return 1; }
	rdma link add "$1" type siw netdev "$2" || { echo "rcc-vm(guest): rdma link add $1 type siw failed"; return 1; }
	wait_active "$1"
}
