#!/usr/bin/env bash
# selftest.sh - checks that tests/vm/run-in-vm.sh works on this machine: one VM with both soft-RDMA
# devices (selftest-guest.sh runs the checks inside), then the host-visible contract: exit status
# and stdout/stderr propagation, 125 when the VM setup fails or the kernel does not exist, 124 on
# timeout. Ends with "N passed, N failed"; exits non-zero when anything failed.
set -uo pipefail
if [ "${RCC_VM:-}" = 1 ]; then
	echo "skipped: already inside an rcc VM (a nested TCG guest would take minutes)"
	exit 77 # ctest SKIP_RETURN_CODE
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vm=$here/run-in-vm.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/rcc-vm-selftest.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
result() { # result NAME CONDITION-STATUS [DETAILS]
	if [ "$2" = 0 ]; then
		echo "ok $1"
		passed=$((passed + 1))
	else
		echo "not ok $1${3:+ ($3)}"
		failed=$((failed + 1))
	fi
}
seconds() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# 1. Both devices in one VM; the guest script reports its own checks.
t=$(date +%s.%N)
"$vm" --rxe --siw --timeout 300 -- "$here/selftest-guest.sh" >guest.txt 2>guest.err
rc=$?
echo "info vm_rxe_siw_seconds $(seconds "$t")"
sed -n '/^info /p' guest.txt
result guest_script_exit_status "$([ $rc = 0 ] && echo 0 || echo 1)" "exit $rc"
[ $rc = 0 ] || sed 's/^/    /' guest.err
while IFS= read -r line; do
	case $line in
	"ok "*) result "${line#ok }" 0 ;;
	"not ok "*) result "${line#not ok }" 1 ;;
	"    "*) echo "$line" ;;
	esac
done <guest.txt
expected=(environment memlock_unlimited rxe_active siw_active rxe_gid_index rxe_ib_write_bw siw_rping
	siw_ib_write_bw_rdma_cm cwd_is_writable)
for name in "${expected[@]}"; do
	grep -qE "^(not )?ok $name( |$)" guest.txt || result "$name" 1 "did not run"
done
result guest_write_reaches_host "$([ "$(cat written-in-guest.txt 2>/dev/null)" = from-guest ] && echo 0 || echo 1)"

# 2. Exit status and the two output streams come back separately.
"$vm" --no-rdma --timeout 120 -- sh -c 'echo to-stdout; echo to-stderr >&2; exit 7' >out.txt 2>err.txt
rc=$?
result exit_status_propagates "$([ $rc = 7 ] && echo 0 || echo 1)" "exit $rc, want 7"
result stdout_propagates "$([ "$(cat out.txt)" = to-stdout ] && echo 0 || echo 1)" "stdout '$(head -c 200 out.txt)'"
result stderr_propagates "$([ "$(cat err.txt)" = to-stderr ] && echo 0 || echo 1)" "stderr '$(head -c 200 err.txt)'"

# 3. Failures are reported as such, never as success.
RCC_VM_FORCE_SETUP_FAIL=1 "$vm" --rxe --timeout 120 -- true >/dev/null 2>fail.err
rc=$?
result setup_failure_is_125 "$([ $rc = 125 ] && echo 0 || echo 1)" "exit $rc"
result setup_failure_shows_console "$(grep -q 'setup failed: forced' fail.err && echo 0 || echo 1)"
"$vm" --kernel 0.0.0-no-such-kernel -- true >/dev/null 2>nokernel.err
rc=$?
result missing_kernel_is_125 "$([ $rc = 125 ] && echo 0 || echo 1)" "exit $rc"
t=$(date +%s.%N)
"$vm" --timeout 10 -- sleep 600 >/dev/null 2>timeout.err
rc=$?
result timeout_is_124 "$([ $rc = 124 ] && echo 0 || echo 1)" "exit $rc after $(seconds "$t")s"
"$vm" --smp zero -- true >/dev/null 2>badarg.err
rc=$?
result bad_argument_is_125_and_named "$([ $rc = 125 ] && grep -q -- '--smp' badarg.err && echo 0 || echo 1)" "exit $rc"
for bad in bogus:2:10.0.9.1 listen:0:10.0.9.1 connect:2:192.168.0.1 listen:2:10.0.9.255 listen:2; do
	"$vm" --link "$bad" -- true >/dev/null 2>badlink.err
	rc=$?
	result "bad_link_${bad//[:.]/_}_is_125_and_named" "$([ $rc = 125 ] && grep -q -- "--link: .*'$bad'" badlink.err && echo 0 || echo 1)" "exit $rc: $(cat badlink.err)"
done
# A guest that cannot start fails two-guests.sh too (here both: a forced setup failure).
RCC_VM_FORCE_SETUP_FAIL=1 "$here/two-guests.sh" --rxe --timeout 120 -- true >/dev/null 2>two-fail.err
rc=$?
result two_guests_setup_failure_is_125 "$([ $rc = 125 ] && echo 0 || echo 1)" "exit $rc"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
