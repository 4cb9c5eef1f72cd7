#!/bin/sh
# Test "hosts" as network namespaces: netns-hosts.sh up|down NAME1 NAME2 ...
# up: bridge rccbr0 (10.77.0.1/24) in the root namespace; namespace i (1-based, in the order given)
# gets eth0 = 10.77.0.(i+1)/24 on a veth into the bridge, and lo up. Processes in the namespaces and
# in the root namespace reach each other over TCP on 10.77.0.0/24 (and only there: no default route).
# Idempotent; down removes the namespaces, their veths and the bridge. Needs root and iproute2.
# RCC_NETNS_NET=N (default 77) uses bridge rccbrN, subnet 10.N.0.0/24 and veths rccvN.i: tests of
# different networks can coexist.
#
# Each host is also a machine of its own to whoever enters it with scripts/netns-rsh: a mount
# namespace with a private /dev/shm (a tmpfs no other host sees) and /sys of its network, and a
# UTS namespace with its name as hostname, kept alive by bind mounts under $RCC_HOSTS_DIR (default
# /run/rcc-hosts). Processes started with `ip netns exec` or `nsenter --net` still share the
# machine's /dev/shm (containers on one machine).
# Links shaped like a NIC: RCC_NETNS_RATE (e.g. 10gbit; tc's units) limits each direction of every
# host's link with a token bucket (on the host's eth0 and on the bridge's end of its veth).
# RCC_NETNS_DELAY_US adds that one-way latency with netem where the kernel has it (half on each
# end); a kernel without sch_netem gets the rate only, and the script says so.
set -eu

net=${RCC_NETNS_NET:-77}
bridge=rccbr0
[ "$net" = 77 ] || bridge=rccbr$net
usage() {
  echo "usage: $0 up|down NAME..." >&2
  exit 2
}
[ $# -ge 2 ] || usage
action=$1
shift
[ $# -le 250 ] || { echo "$0: at most 250 hosts" >&2; exit 2; }

# The root namespace's end of host i's veth (the default network keeps its old names).
veth() { if [ "$net" = 77 ]; then echo "rccv$1"; else echo "rccv$net.$1"; fi; }
netns_exists() { ip netns list | awk '{print $1}' | grep -qx -- "$1"; }
hosts_dir=${RCC_HOSTS_DIR:-/run/rcc-hosts}

# A private mount and UTS namespace for host $1 (idempotent). unshare(1) keeps a namespace alive by
# bind-mounting it onto a file, which must sit on a private mount.
make_machine() {
  [ -e "$hosts_dir/$1.mnt" ] && mountpoint -q "$hosts_dir/$1.mnt" && return 0
  mkdir -p "$hosts_dir"
  if ! mountpoint -q "$hosts_dir"; then mount --bind "$hosts_dir" "$hosts_dir"; fi
  mount --make-private "$hosts_dir"
  touch "$hosts_dir/$1.mnt" "$hosts_dir/$1.uts"
  nsenter --net="/run/netns/$1" unshare --mount="$hosts_dir/$1.mnt" --uts="$hosts_dir/$1.uts" --propagation private \
    sh -c "mount -t tmpfs -o mode=1777,size=4g rcc-shm-$1 /dev/shm && mount -t sysfs sysfs /sys && hostname '$1'"
}

drop_machine() {
  for kind in mnt uts; do
    if mountpoint -q "$hosts_dir/$1.$kind" 2>/dev/null; then umount "$hosts_dir/$1.$kind"; fi
    rm -f "$hosts_dir/$1.$kind"
  done
}

# Token buckets (and netem delay, where there is netem) on both ends of host $1's link $2 (the
# bridge's end; eth0 in the namespace).
shape_link() {
  [ -n "${RCC_NETNS_RATE:-}${RCC_NETNS_DELAY_US:-}" ] || return 0
  rate=${RCC_NETNS_RATE:-100gbit}
  for side in "" "$1"; do
    dev=$2
    run=""
    [ -z "$side" ] || { dev=eth0; run="ip netns exec $side"; }
    if [ -n "${RCC_NETNS_DELAY_US:-}" ] &&
      $run tc qdisc replace dev "$dev" root netem rate "$rate" delay "$((RCC_NETNS_DELAY_US / 2))us" 2>/dev/null; then
      continue
    fi
    if [ -n "${RCC_NETNS_DELAY_US:-}" ] && [ -z "$side" ]; then
      echo "$0: no netem in this kernel: $1's link gets the rate ($rate) without the delay" >&2
    fi
    # burst: enough for a 64 KiB TSO segment at any rate; latency: the queue a sender may build.
    $run tc qdisc replace dev "$dev" root tbf rate "$rate" burst 256kb latency 5ms
  done
}

case "$action" in
up)
  ip link show "$bridge" >/dev/null 2>&1 || ip link add "$bridge" type bridge
  ip addr replace "10.$net.0.1/24" dev "$bridge"
  ip link set "$bridge" up
  i=1
  for name in "$@"; do
    netns_exists "$name" || ip netns add "$name"
    if ! ip -n "$name" link show eth0 >/dev/null 2>&1; then
      ip link del "$(veth "$i")" >/dev/null 2>&1 || true
      ip link add "$(veth "$i")" type veth peer name "rccp$net.$i"
      ip link set "rccp$net.$i" netns "$name"
      ip -n "$name" link set "rccp$net.$i" name eth0
    fi
    ip link set "$(veth "$i")" master "$bridge" up
    ip -n "$name" addr replace "10.$net.0.$((i + 1))/24" dev eth0
    ip -n "$name" link set lo up
    ip -n "$name" link set eth0 up
    make_machine "$name"
    shape_link "$name" "$(veth "$i")"
    i=$((i + 1))
  done
  ;;
down)
  i=1
  for name in "$@"; do
    drop_machine "$name"
    if netns_exists "$name"; then ip netns del "$name"; fi  # takes its end of the veth pair along
    ip link del "$(veth "$i")" >/dev/null 2>&1 || true
    i=$((i + 1))
  done
  ip link del "$bridge" >/dev/null 2>&1 || true
  ;;
*) usage ;;
esac
