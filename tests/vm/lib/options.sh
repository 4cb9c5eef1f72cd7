# shellcheck shell=bash
# Command-line parsing for run-in-vm.sh. Sets opt_* variables and cmd_argv.
# shellcheck disable=SC2034 # opt_* and cmd_argv are read by run-in-vm.sh

vm_usage() {
	cat <<'USAGE'
usage: tests/vm/run-in-vm.sh [OPTIONS] -- COMMAND [ARGS...]

Runs COMMAND as root inside a throwaway QEMU (TCG) guest that boots the host's
Debian kernel and sees the host's filesystem, optionally with software RDMA.

RDMA devices (default: none):
  --rxe            Soft-RoCE rxe0 on dummy netdev rxenet0, 10.0.2.15/24
  --siw            soft-iWARP siw0 on dummy netdev siwnet0, 10.0.3.15/24
                   (siw.ko is built once from linux-source-6.1 and cached)
  --no-rdma        no RDMA device (the default; cannot be combined with the above)
Link to another guest (tests/vm/two-guests.sh boots two):
  --link MODE:PORT:IP  a virtio NIC on a QEMU socket netdev, a TCP stream on 127.0.0.1:PORT that
                   this guest listens on (MODE listen) or connects to (MODE connect: the other
                   QEMU must listen already); holds IP/24 in the guest; --rxe/--siw then sit on
                   that NIC instead of dummy netdevs (RDMA between the guests)
  --hostname NAME  the guest's host name (default rcc-vm)
VM:
  --timeout SEC    kill the VM after SEC seconds, exit 124 (default 1800, 0 = never)
  --mem MIB        guest memory (default 2048)
  --smp N          guest vCPUs (default 2)
  --kernel KVER    boot /boot/vmlinuz-KVER (default: newest with rdma_rxe)
  --rw DIR         also mount host DIR read-write (repeatable); cwd always is
  -v, --verbose    guest console and a timing summary on stderr
  --keep           keep the per-run job directory (path printed on stderr)
  --console-copy FILE  at exit, copy the guest console to FILE (for a caller that shows it when
                   something failed later, e.g. a guest that went silent while serving)

In the guest: same cwd, the caller's exported environment, stdin /dev/null,
ulimit -l unlimited, and RCC_VM=1; with --rxe RCC_VM_RXE_DEV, RCC_VM_RXE_IP,
RCC_VM_RXE_GID_INDEX; with --siw RCC_VM_SIW_DEV, RCC_VM_SIW_IP.
Exit status: the command's; 124 on timeout; 125 if the VM or RDMA setup failed.
Cache: ${RCC_VM_CACHE:-/var/cache/rcc-vm}/KVER (vmlinux for PVH boot, siw.ko).
USAGE
}

vm_is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac; }

# vm_parse_link MODE:PORT:IP: sets opt_link_*, or exits 125 naming what is wrong.
vm_parse_link() {
	local mode port ip rest
	IFS=: read -r mode port ip rest <<<"$1"
	case $mode in listen | connect) ;; *) vm_die "--link: mode '$mode' in '$1' is not listen or connect" ;; esac
	{ vm_is_uint "$port" && [ "$port" -ge 1 ] && [ "$port" -le 65535 ]; } || vm_die "--link: port '$port' in '$1' is not 1..65535"
	[ -z "$rest" ] || vm_die "--link: '$1' has more than MODE:PORT:IP"
	[[ $ip =~ ^10\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] && [ "${BASH_REMATCH[3]}" -ge 1 ] && [ "${BASH_REMATCH[3]}" -le 254 ] ||
		vm_die "--link: '$ip' in '$1' is not an address 10.X.Y.Z (Z 1..254)"
	opt_link_mode=$mode opt_link_port=$port opt_link_ip=$ip
}

# vm_parse_options "$@": fills opt_* and cmd_argv, or exits 125 with a message naming the argument.
vm_parse_options() {
	opt_rxe=0 opt_siw=0 opt_no_rdma=0 opt_timeout=1800 opt_mem=2048 opt_smp=2
	opt_kernel="" opt_verbose=0 opt_keep=0 opt_link_mode="" opt_link_port="" opt_link_ip="" opt_hostname=rcc-vm
	opt_console_copy=""
	opt_rw=()
	local dir
	while [ $# -gt 0 ]; do
		case $1 in
		--rxe) opt_rxe=1 ;;
		--siw) opt_siw=1 ;;
		--no-rdma) opt_no_rdma=1 ;;
		--timeout | --mem | --smp | --kernel | --rw | --link | --hostname | --console-copy)
			[ $# -ge 2 ] || vm_die "$1 needs a value"
			case $1 in
			--timeout) vm_is_uint "$2" || vm_die "--timeout: '$2' is not a number of seconds"; opt_timeout=$2 ;;
			--mem) { vm_is_uint "$2" && [ "$2" -ge 256 ]; } || vm_die "--mem: '$2' is not a size in MiB >= 256"; opt_mem=$2 ;;
			--smp) { vm_is_uint "$2" && [ "$2" -ge 1 ]; } || vm_die "--smp: '$2' is not a vCPU count >= 1"; opt_smp=$2 ;;
			--kernel) opt_kernel=$2 ;;
			--link) vm_parse_link "$2" ;;
			--console-copy)
				[ -d "$(dirname -- "$2")" ] || vm_die "--console-copy: the directory of '$2' does not exist"
				opt_console_copy=$2 ;;
			--hostname)
				case $2 in '' | -* | *[!A-Za-z0-9-]*) vm_die "--hostname: '$2' is not a host name (letters, digits, '-')" ;; esac
				opt_hostname=$2 ;;
			--rw)
				dir=$(realpath -e -- "$2" 2>/dev/null) && [ -d "$dir" ] || vm_die "--rw: '$2' is not a directory"
				opt_rw+=("$dir") ;;
			esac
			shift ;;
		-v | --verbose) opt_verbose=1 ;;
		--keep) opt_keep=1 ;;
		-h | --help) vm_usage; exit 0 ;;
		--) shift; break ;;
		*) vm_usage >&2; vm_die "unknown option '$1' (the command goes after --)" ;;
		esac
		shift
	done
	[ $# -gt 0 ] || { vm_usage >&2; vm_die "no COMMAND given after --"; }
	if [ "$opt_no_rdma" = 1 ] && [ "$opt_rxe$opt_siw" != 00 ]; then
		vm_die "--no-rdma cannot be combined with --rxe/--siw"
	fi
	cmd_argv=("$@")
}
