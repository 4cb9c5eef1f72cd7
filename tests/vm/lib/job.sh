# shellcheck shell=bash
# The per-run job directory, shared read-write with the guest (mounted there at /rcc-vm-job):
# what to run (argv, env, config, mounts, guest scripts) and what happened (rc, times,
# setup-error), plus the host's FIFOs and logs.

# vm_write_job JOB LIBDIR SIW_KO: writes the guest's inputs from the opt_* and cmd_argv globals.
vm_write_job() {
	local job=$1 lib=$2 siw_ko=$3 cwd
	cwd=$(pwd -P)
	printf '%s\0' "${cmd_argv[@]}" >"$job/argv"
	# The caller's exported environment, minus read-only and per-shell bash variables.
	export -p | grep -v -E '^declare -[a-zA-Z]*r[a-zA-Z]* |^declare -x (BASH[A-Z_]*|SHLVL|PWD|OLDPWD|_|SHELLOPTS|EUID|UID|PPID)(=|$)' \
		>"$job/env" || true
	{
		printf 'CFG_RXE=%q\nCFG_SIW=%q\nCFG_SIW_KO=%q\nCFG_CWD=%q\nCFG_VERBOSE=%q\n' \
			"$opt_rxe" "$opt_siw" "$siw_ko" "$cwd" "$opt_verbose"
		printf 'CFG_RXE_NETDEV=%q\nCFG_RXE_IP=%q\nCFG_SIW_NETDEV=%q\nCFG_SIW_IP=%q\n' \
			"$VM_RXE_NETDEV" "$VM_RXE_IP" "$VM_SIW_NETDEV" "$VM_SIW_IP"
		printf 'CFG_FORCE_SETUP_FAIL=%q\n' "${RCC_VM_FORCE_SETUP_FAIL:-0}"
		printf 'CFG_HOSTNAME=%q\nCFG_LINK_IP=%q\nCFG_LINK_MAC=%q\n' "$opt_hostname" "$opt_link_ip" "$(vm_link_mac)"
	} >"$job/config"
	cp "$lib/guest-stage.sh" "$lib/guest-rdma.sh" "$job/"
	# Read-write shares: cwd (unless it is /) and --rw dirs, deduplicated, parents first.
	local -a dirs=("${opt_rw[@]}")
	[ "$cwd" = / ] || dirs+=("$cwd")
	local i=0 d
	: >"$job/mounts"
	while IFS= read -r d; do
		[ -n "$d" ] || continue
		case $d in *,*) vm_die "cannot share '$d' read-write: qemu's -virtfs syntax does not allow ',' in paths" ;; esac
		printf 'rccvm_rw%d\t%s\n' "$i" "$d" >>"$job/mounts"
		i=$((i + 1))
	done < <(printf '%s\n' "${dirs[@]}" | awk 'NF && !seen[$0]++ { print length($0) "\t" $0 }' | sort -n | cut -f2-)
}

# vm_link_mac: the link NIC's MAC, from the last byte of its address (empty without --link), so
# the guest finds its NIC by MAC and two linked guests never share one.
vm_link_mac() {
	[ -n "$opt_link_ip" ] || return 0
	printf '52:54:00:72:63:%02x\n' "${opt_link_ip##*.}"
}

# vm_job_virtfs JOB: prints qemu -virtfs arguments, one per line, for the job dir and the rw shares.
vm_job_virtfs() {
	local job=$1 tag path
	printf '%s\n' -virtfs "local,path=$job,mount_tag=rccvm_job,security_model=none"
	while IFS=$'\t' read -r tag path; do
		printf '%s\n' -virtfs "local,path=$path,mount_tag=$tag,security_model=none,multidevs=remap"
	done <"$job/mounts"
}
