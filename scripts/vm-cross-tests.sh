#!/usr/bin/env bash
# Runs inside guest rccvm-a of tests/vm/two-guests.sh (--rxe or --siw: one RDMA device per NIC, as
# on real hosts; rdma_cm finds one device per address): one job spread over two guests
# (two kernels, two RDMA devices, an IPv4 link between them), started by rccrun over ssh. On
# Soft-RoCE (RoCE v2 between two GIDs on two interfaces) or soft-iWARP: the p2p suite, the
# collectives suite (with levels on uneven hosts: shared memory within a guest, verbs between),
# kills of a rank mid-call, and the other guest frozen or cut off.
#   scripts/vm-cross-tests.sh BUILD_DIR [DEVICES [PARTS]]
# DEVICES (space-separated, Soft-RoCE before soft-iWARP) default "rxe0"; PARTS (comma-separated)
# default p2p,collectives,kills,partition (also: flat, the collectives suite over verbs only at 1+2);
# RCC_CROSS_KILLS (colon-separated fault cases) overrides the kills.
set -uo pipefail
build=${1:?usage: vm-cross-tests.sh BUILD_DIR [DEVICES]}
devices=${2:-rxe0}
parts=,${3:-p2p,collectives,kills,partition},
want() { [[ $parts == *",$1,"* ]]; }
here=$(cd "$(dirname "$0")/.." && pwd)
peer=${RCC_VM_PEER:?run inside tests/vm/two-guests.sh}
rsh=${RCC_VM_RSH:?run inside tests/vm/two-guests.sh}
link=${RCC_VM_LINK_IF:?no link NIC}
me=$(hostname)
export RCC_SOCKET_IFNAME=$link RCC_TEST_QUICK=1
status=0
failures=()

# RCC_PEER_TIMEOUT=30 (default 5): each guest has one emulated CPU, which its ranks share with
# soft-RoCE's packet processing; once (2026-12-03) the other guest's rank went 5 s without a
# heartbeat during the collectives suite's large allreduces, and its peers called it unreachable.
# The kills and partitions, which test that report, set their own bounds.
job() { # DESCRIPTION HOSTS DEVICE [--env VAR=VALUE ...] -- PROGRAM ARGS...
	local what=$1 hosts=$2 device=$3 t0
	shift 3
	local -a settings=()
	while [ "$1" != -- ]; do settings+=("$1"); shift; done
	shift
	echo "=== cross-guest $device, $hosts: $what"
	t0=$(date +%s)
	if "$build/launcher/rccrun" -H "$hosts" --rsh "$rsh" --timeout 1500 --env RCC_TRANSPORT=verbs \
		--env "RCC_IB_DEVICE=$device" --env "RCC_SOCKET_IFNAME=$link" --env RCC_TIMEOUT=120 \
		--env RCC_BOOTSTRAP_TIMEOUT=120 --env RCC_PEER_TIMEOUT=30 --env RCC_TEST_QUICK=1 "${settings[@]}" "$@" \
		--gtest_brief=1; then
		echo "--- ok ($(($(date +%s) - t0)) s)"
	else
		echo "--- FAIL ($(($(date +%s) - t0)) s)"
		status=1
		failures+=("$device $hosts: $what")
	fi
}

# What runs where, to keep CI within its time (over the link every collectives suite takes 4 min):
# Soft-RoCE the p2p suite at 2+2 and the collectives suite with levels at 2+1 (it forces every
# algorithm, so the flat ones run across the guests too), soft-iWARP the p2p suite at 1+1 (its
# collectives run in the single guest); both the kills and the partition cases.
all_kills=p2p:allreduce_tree:allreduce_ring:broadcast_tree:barrier:alltoall:inflight:split
# drop_soft_roce: deletes the Soft-RoCE devices of both guests before the iWARP runs when one boot
# carries both kinds on the link NIC (two-guests.sh --rxe --siw, which saves a boot pair in CI):
# rdma_cm binds a connection to the first device holding the address, which would be rxe0.
drop_soft_roce() {
	local drop='for d in /sys/class/infiniband/rxe*; do [ -e "$d" ] && rdma link delete "${d##*/}"; done; true'
	bash -c "$drop" && $rsh "$peer" "$drop" || { echo "vm-cross-tests: could not delete the Soft-RoCE devices"; return 1; }
}
for device in $devices; do
	case $device in
	siw*)
		drop_soft_roce || { status=1; failures+=("$device: Soft-RoCE device not deleted"); break; }
		p2p_hosts="$me:1,$peer:1" levels=0 kills=${RCC_CROSS_KILLS:-p2p:allreduce_tree:inflight} ;;
	*) p2p_hosts="$me:2,$peer:2" levels=1 kills=${RCC_CROSS_KILLS:-$all_kills} ;;
	esac
	want p2p && job "p2p suite" "$p2p_hosts" "$device" --env "RCC_TEST_HOSTS=2" -- "$build/tests/p2p/p2p_test"
	# Not the vector collectives and scans: they have no hierarchical algorithm, and their p2p-based
	# ones run over verbs in the single guest (scripts/vm-tests.sh); 207 -> 184 s here. Nor the
	# allreduce's sweep of every datatype and op through every algorithm (102 of the 184 s): the
	# transport only moves bytes, and the sweep runs over verbs in the single guest and through the
	# levels between namespace hosts (hosts_collectives); here the allreduce runs every algorithm at
	# two sizes (RandomFloatsWithinRoundingBound) and the hierarchical one in pieces.
	want collectives && [ $levels = 1 ] && job "collectives suite, levels (shared memory in each guest, verbs between)" \
		"$me:2,$peer:1" "$device" --env RCC_TEST_REQUIRE_LEVELS=1 -- "$build/tests/collectives/collectives_test" \
		--gtest_filter='-Vector*.*:Scan.*:Allreduce.EveryTypeOpCountPerAlgorithm'
	want flat && job "collectives suite, flat over verbs (RCC_SHM=0)" "$me:1,$peer:2" "$device" \
		--env RCC_SHM=0 -- "$build/tests/collectives/collectives_test"
	if want kills; then
		echo "=== cross-guest $device: a rank of $me killed mid-call ($kills)"
		if RCC_TRANSPORT=verbs RCC_IB_DEVICE=$device RCC_TEST_RCCRUN=$build/launcher/rccrun \
			RCC_TEST_VICTIM=$build/tests/faults/fault_victim RCC_TEST_STRANGER=$build/tests/faults/fault_stranger_rank \
			RCC_TIMEOUT=20 RCC_BOOTSTRAP_TIMEOUT=120 RCC_FAULT_SEEDS=1 RCC_FAULT_HOSTS="$me:2,$peer:1" \
			RCC_FAULT_RSH="$rsh" RCC_FAULT_FORWARD=RCC_TRANSPORT,RCC_IB_DEVICE,RCC_SOCKET_IFNAME,RCC_TIMEOUT,RCC_BOOTSTRAP_TIMEOUT \
			"$build/tests/faults/fault_driver_test" --gtest_brief=1 --gtest_filter="Ops/FaultTest.*/${kills//:/:Ops/FaultTest.*/}"; then
			echo "--- ok"
		else
			echo "--- FAIL"
			status=1
			failures+=("$device: kills")
		fi
	fi
	want partition && { "$here/tests/vm/cross-partition.sh" "$build" "$device" || { status=1; failures+=("$device: partition"); }; }
done
for f in "${failures[@]}"; do echo "FAILED: $f"; done
[ $status = 0 ] && echo "vm-cross-tests: all passed"
exit $status
