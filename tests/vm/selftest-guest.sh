#!/bin/bash
# Runs inside the VM booted by selftest.sh with --rxe --siw. Prints one "ok NAME" or
# "not ok NAME" line per check (with the check's output indented after a failure), and
# "info NAME VALUE" lines for measured numbers.
failures=0

check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		echo "ok $name"
	else
		echo "not ok $name (exit $rc)"
		failures=$((failures + 1))
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
	fi
}

env_is_set() {
	local v
	for v in RCC_VM RCC_VM_RXE_DEV RCC_VM_RXE_IP RCC_VM_RXE_GID_INDEX RCC_VM_SIW_DEV RCC_VM_SIW_IP; do
		[ -n "${!v:-}" ] || { echo "$v is not set"; return 1; }
	done
	[ "$RCC_VM" = 1 ] && [ "$RCC_VM_RXE_DEV" = rxe0 ] && [ "$RCC_VM_SIW_DEV" = siw0 ]
}

# device_active DEV TRANSPORT: ibv_devinfo lists DEV with that transport and an active port 1.
device_active() {
	local info
	info=$(ibv_devinfo -d "$1") || return 1
	printf '%s\n' "$info"
	grep -q "transport:.*$2" <<<"$info" && grep -q 'state:.*PORT_ACTIVE' <<<"$info"
}

# The exported GID index must be the table's RoCE v2 entry holding the IPv4-mapped address.
gid_index_matches() {
	local line
	line=$(ibv_devinfo -v -d "$RCC_VM_RXE_DEV" | grep -E "GID\[ *[0-9]+\]:[[:space:]]+::ffff:$RCC_VM_RXE_IP, RoCE v2") ||
		{ ibv_devinfo -v -d "$RCC_VM_RXE_DEV" | grep GID; echo "no RoCE v2 GID for $RCC_VM_RXE_IP"; return 1; }
	echo "$line"
	[ "$(sed -E 's/.*GID\[ *([0-9]+)\].*/\1/' <<<"$line")" = "$RCC_VM_RXE_GID_INDEX" ]
}

# pair NAME SERVER_CMD... -- CLIENT_CMD...: runs a loopback server and client, both must exit 0.
# The client's output is kept in NAME.log for the numbers.
pair() {
	local name=$1 server=() client=() s rc_c rc_s
	shift
	while [ "$1" != -- ]; do server+=("$1"); shift; done
	shift
	client=("$@")
	timeout 120 "${server[@]}" >"$name.server.log" 2>&1 &
	s=$!
	sleep 1.5
	timeout 120 "${client[@]}" >"$name.log" 2>&1
	rc_c=$?
	[ "$rc_c" = 0 ] || kill "$s" 2>/dev/null # a server without a client would wait for its timeout
	wait "$s"
	rc_s=$?
	cat "$name.log"
	[ "$rc_c" = 0 ] || { echo "client exit $rc_c"; cat "$name.server.log"; }
	[ "$rc_s" = 0 ] || { echo "server exit $rc_s"; cat "$name.server.log"; }
	[ "$rc_c" = 0 ] && [ "$rc_s" = 0 ]
}

# bw_of LOG: the average MB/s column of a perftest bandwidth report.
bw_of() { awk '/^ *65536 / { print $4 }' "$1" | tail -n 1; }

check environment env_is_set
check memlock_unlimited test "$(ulimit -l)" = unlimited
check rxe_active device_active "$RCC_VM_RXE_DEV" InfiniBand
check siw_active device_active "$RCC_VM_SIW_DEV" iWARP
check rxe_gid_index gid_index_matches
check rxe_ib_write_bw pair rxe_bw \
	ib_write_bw -d "$RCC_VM_RXE_DEV" -x "$RCC_VM_RXE_GID_INDEX" -s 65536 -n 2000 -F -p 18515 -- \
	ib_write_bw -d "$RCC_VM_RXE_DEV" -x "$RCC_VM_RXE_GID_INDEX" -s 65536 -n 2000 -F -p 18515 "$RCC_VM_RXE_IP"
echo "info rxe_ib_write_bw_MBps $(bw_of rxe_bw.log)"
check siw_rping pair siw_rping \
	rping -s -a "$RCC_VM_SIW_IP" -p 18516 -C 10 -- \
	rping -c -a "$RCC_VM_SIW_IP" -p 18516 -C 10 -v
check siw_ib_write_bw_rdma_cm pair siw_bw \
	ib_write_bw -d "$RCC_VM_SIW_DEV" -R -s 65536 -n 2000 -F -p 18517 -- \
	ib_write_bw -d "$RCC_VM_SIW_DEV" -R -s 65536 -n 2000 -F -p 18517 "$RCC_VM_SIW_IP"
echo "info siw_ib_write_bw_MBps $(bw_of siw_bw.log)"
check cwd_is_writable sh -c 'echo from-guest >written-in-guest.txt'
exit $((failures > 0))
