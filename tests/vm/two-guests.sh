#!/usr/bin/env bash
# two-guests.sh - two soft-RDMA guests (run-in-vm.sh) joined by a virtio link, as two hosts of one
# job (a TCP stream between the two QEMUs carries the link's frames): guest "rccvm-b" serves ssh
# on its link address and waits; guest "rccvm-a" runs COMMAND,
# which starts ranks on both with rccrun -H over ssh. RoCE v2 and iWARP then run between two
# kernels over an IPv4 network, as between two machines.
#
#   tests/vm/two-guests.sh [--rxe] [--siw] [--timeout SEC] [--smp N] -- COMMAND [ARGS...]
#
# In guest a, besides run-in-vm.sh's variables: RCC_VM_PEER (b's link address), RCC_VM_PEER_NAME
# (rccvm-b), RCC_VM_RSH (the remote shell command for rccrun --rsh: ssh with a key made for this
# run), RCC_VM_SHARED (a directory both guests see, read-write). Exit status: COMMAND's; 125 when
# either guest could not boot, make its devices or start sshd; 124 on timeout. On any failure both
# guests' console tails are printed. Both QEMUs are stopped on any exit.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rdma=() timeout=1800 smp=1
while [ $# -gt 0 ]; do
	case $1 in
	--rxe | --siw) rdma+=("$1") ;;
	--timeout | --smp)
		[ $# -ge 2 ] || { echo "two-guests: $1 needs a value" >&2; exit 125; }
		case $2 in '' | *[!0-9]*) echo "two-guests: $1: '$2' is not a number" >&2; exit 125 ;; esac
		if [ "$1" = --timeout ]; then timeout=$2; else smp=$2; fi
		shift ;;
	--) shift; break ;;
	*) echo "two-guests: unknown option '$1' (the command goes after --)" >&2; exit 125 ;;
	esac
	shift
done
[ $# -gt 0 ] || { echo "two-guests: no COMMAND given after --" >&2; exit 125; }

dir=$(mktemp -d /var/tmp/rcc-two-guests.XXXXXX)
b_pid=""
# stop_b: b powers off within a second of the stop file; else its run-in-vm.sh stops it on TERM
# (and, either way, leaves b's console in $dir/b.console).
stop_b() {
	touch "$dir/stop" 2>/dev/null
	[ -n "$b_pid" ] || return 0
	for _ in $(seq 50); do [ -e "$dir/b.rc" ] && break; sleep 0.1; done
	[ -e "$dir/b.rc" ] || kill -TERM "$(cat "$dir/b.pid" 2>/dev/null)" 2>/dev/null
	wait "$b_pid" 2>/dev/null
	b_pid=""
}
cleanup() {
	stop_b
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The link's port: per run, so two runs on one machine do not meet; below the ephemeral range.
port=$((20000 + $$ % 12000))
ip_a=10.0.9.1 ip_b=10.0.9.2

# shellcheck source=tests/launchers/lib/ssh.sh
. "$here/../launchers/lib/ssh.sh"
ssh_test_setup "$dir" || { echo "two-guests: ssh-keygen failed (openssh-client, scripts/setup.sh)" >&2; exit 125; }
{
	ssh_test_client "$dir" "*"
	echo "  ConnectTimeout 60"
} >"$dir/ssh_config"

(
	"$here/run-in-vm.sh" "${rdma[@]}" --smp "$smp" --timeout "$timeout" --hostname rccvm-b --rw "$dir" \
		--console-copy "$dir/b.console" --link "listen:$port:$ip_b" -- "$here/lib/guest-serve-ssh.sh" "$dir" >"$dir/b.out" 2>"$dir/b.err" &
	echo $! >"$dir/b.pid"
	wait $!
	echo $? >"$dir/b.rc"
) &
b_pid=$!
# a's QEMU connects to b's, which must listen by then (it does before its guest boots).
for _ in $(seq 300); do
	ss -Htln "sport = :$port" 2>/dev/null | grep -q . && break
	[ -e "$dir/b.rc" ] && break
	sleep 0.1
done

# a waits for b's sshd (or for b to end) before COMMAND runs; run-in-vm.sh clears RCC_VM_* of the
# caller, so a's variables are set here, inside the guest.
wait_for_b="export RCC_VM_PEER=$ip_b RCC_VM_PEER_NAME=rccvm-b RCC_VM_RSH='ssh -F $dir/ssh_config' RCC_VM_SHARED=$dir
  for _ in \$(seq 1200); do [ -e $dir/ready.rccvm-b ] && exec \"\$@\"; [ -e $dir/b.rc ] && break; sleep 0.1; done
  echo 'two-guests: guest rccvm-b did not come up' >&2; exit 125"
"$here/run-in-vm.sh" "${rdma[@]}" --smp "$smp" --timeout "$timeout" --hostname rccvm-a --rw "$dir" \
	--console-copy "$dir/a.console" --link "connect:$port:$ip_a" -- bash -c "$wait_for_b" two-guests "$@"
rc=$?
touch "$dir/stop"
for _ in $(seq 100); do [ -e "$dir/b.rc" ] && break; sleep 0.1; done
b_rc=$(cat "$dir/b.rc" 2>/dev/null || echo "none: still running")
if [ "$b_rc" != 0 ]; then
	echo "two-guests: guest rccvm-b ended with status $b_rc:" >&2
	sed 's/^/  b: /' "$dir/b.out" "$dir/b.err" >&2
	[ "$rc" = 0 ] && rc=125
fi
# A failure may come from either kernel (a guest that went silent mid-run shows nothing else), and
# the consoles go with $dir: both tails now.
if [ "$rc" != 0 ]; then
	stop_b
	for guest in a b; do
		[ -s "$dir/$guest.console" ] || continue
		echo "two-guests: guest rccvm-$guest's console (last 60 lines):" >&2
		tail -n 60 "$dir/$guest.console" | sed "s/^/  $guest: /" >&2
	done
fi
exit "$rc"
