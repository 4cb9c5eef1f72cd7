#!/bin/bash
# Inside guest rccvm-a of tests/vm/two-guests.sh: the other guest stops answering mid-collective,
# over verbs between the two kernels. First its ranks are frozen (SIGSTOP), then its link is cut
# (ip link set down inside it). Nothing closes a connection, so only the liveness heartbeats can
# tell: every rank on this guest must fail within the bound naming a rank of the other as
# unreachable, and rccrun must exit non-zero (naming the frozen ranks as still running). The link
# comes back 15 s after the cut, so the next device's run finds the other guest again.
# RCC_PEER_TIMEOUT is 2 s; RCC_TIMEOUT is 300 s, so it cannot be what fires.
# The action is armed on the other guest before the job starts (a waiter started over ssh, while
# that guest is idle) and fired through a file in the directory both guests share, so it lands
# within a poll of the trigger: an ssh session opened while the other guest's one vCPU is busy
# with two ranks took 40 s to run its command.
#   cross-partition.sh BUILD_DIR DEVICE    (rxe0 or siw0; needs two-guests.sh's RCC_VM_* variables)
set -u
build=${1:?usage: cross-partition.sh BUILD_DIR DEVICE}
device=${2:?usage: cross-partition.sh BUILD_DIR DEVICE}
peer=${RCC_VM_PEER:?run inside tests/vm/two-guests.sh}
rsh=${RCC_VM_RSH:?run inside tests/vm/two-guests.sh}
shared=${RCC_VM_SHARED:?run inside tests/vm/two-guests.sh}
link=${RCC_VM_LINK_IF:?no link NIC}
loop=$build/tests/hosts/partition_loop
# shellcheck source=tests/hosts/lib.sh
. "$(dirname "$0")/../hosts/lib.sh" # wait_ready, check_unreachable
out=$(mktemp /tmp/rcc-cross-partition.XXXXXX)
trap 'rm -f "$out"' EXIT
failed=0
# From the trigger: the failing call of each rank of guest a ends within call_bound seconds
# (RCC_PEER_TIMEOUT=2 plus TCG slack), the job within bound (the ranks' 3 s pause before exit,
# rccrun's 2 s grace, ssh sessions ending, the waiter on b polling the trigger under load).
call_bound=10
bound=60
armed=0
now() { date +%s.%N; }

check() { # LABEL REMOTE_ACTION
	local label=$1 action=$2 job rc=0 cut_at trigger
	echo "=== $device: $label"
	armed=$((armed + 1))
	trigger=$shared/fire.$device.$armed
	printf 'while [ ! -e %s ]; do sleep 0.05; done\n%s\n' "$trigger" "$action" >"$shared/action.$device.$armed"
	timeout 60 $rsh "$peer" "nohup sh $shared/action.$device.$armed >/dev/null 2>&1 &" </dev/null ||
		{ echo "FAIL: $device: $label: cannot arm the action on $peer"; failed=1; return; }
	: >"$out" # emptied before the job starts: its own redirection may run after wait_ready looked
	RCC_SOCKET_IFNAME=$link "$build/launcher/rccrun" -H "$(hostname):2,$peer:2" --rsh "$rsh" --tag-output \
		--timeout 300 --failure-grace 2 --env RCC_TRANSPORT=verbs --env "RCC_IB_DEVICE=$device" \
		--env "RCC_SOCKET_IFNAME=$link" --env RCC_TIMEOUT=300 --env RCC_PEER_TIMEOUT=2 "$loop" 200 >"$out" 2>&1 &
	job=$!
	wait_ready "$out" || { echo "FAIL: $device: $label: not all 4 ranks ran a round within 180 s"; failed=1; }
	cut_at=$(now)
	touch "$trigger"
	wait $job || rc=$?
	check_unreachable "$device: $label" "$out" $rc "$(echo "$(now) - $cut_at" | bc)" $bound rccvm-b $call_bound
}

check "ranks of the other guest frozen" "pkill -STOP -x partition_loop"
grep -q "ranks 2 (host [^)]*), 3 (host [^)]*) still running 2 s after the failure" "$out" ||
	{ echo "FAIL: $device: rccrun does not name the frozen ranks"; failed=1; }
timeout 60 $rsh "$peer" "pkill -CONT -x partition_loop; pkill -KILL -x partition_loop" </dev/null
check "link of the other guest cut" "ip link set $link down; sleep 15; ip link set $link up"
back=0
for _ in $(seq 30); do
	timeout 10 $rsh "$peer" "pkill -KILL -x partition_loop; true" </dev/null 2>/dev/null && { back=1; break; }
	sleep 2
done
[ $back = 1 ] || { echo "FAIL: $device: the other guest did not come back after the cut"; failed=1; }
[ $failed -eq 0 ] && echo "cross-partition: PASS ($device)"
exit $failed
