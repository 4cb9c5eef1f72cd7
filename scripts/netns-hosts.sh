#!/bin/sh
# Test "hosts" as network namespaces: netns-hosts.sh up|down NAME1 NAME2 ...
# up: bridge rccbr0 (10.77.0.1/24) in the root namespace; namespace i (1-based, in the order given)
# gets eth0 = 10.77.0.(i+1)/24 on a veth into the bridge, and lo up. Processes in the namespaces and
# in the root namespace reach each other over TCP on 10.77.0.0/24 (and only there: no default route).
# Idempotent; down removes the namespaces, their veths and the bridge. Needs root and iproute2.
# RCC_NETNS_NET=N (default 77) uses bridge rccbrN, subnet 10.N.0.0/24 and veths rccvN.i: tests of
# different networks can coexist.
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
    i=$((i + 1))
  done
  ;;
down)
  i=1
  for name in "$@"; do
    if netns_exists "$name"; then ip netns del "$name"; fi  # takes its end of the veth pair along
    ip link del "$(veth "$i")" >/dev/null 2>&1 || true
    i=$((i + 1))
  done
  ip link del "$bridge" >/dev/null 2>&1 || true
  ;;
*) usage ;;
esac
