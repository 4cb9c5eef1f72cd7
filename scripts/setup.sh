#!/usr/bin/env bash
# Installs what rcc needs to build, test and benchmark on Debian 12. Safe to run twice: it only
# calls apt-get for packages that are missing (and runs apt-get update first when it must).
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config git ca-certificates
  libibverbs-dev librdmacm-dev libucx-dev libhwloc-dev libgtest-dev
  # run: verbs providers (rxe, siw userspace drivers), UCX tools, fuzzing (clang)
  ibverbs-providers ibverbs-utils rdmacm-utils ucx-utils clang libclang-rt-14-dev clang-format
  # tests: network namespaces, the soft-RDMA VM (Debian kernel under qemu)
  iproute2 procps qemu-system-x86 linux-image-amd64 busybox-static cpio kmod xz-utils
  # soft-iWARP is not built into Debian's kernel: the VM harness builds siw.ko from these
  linux-source-6.1 linux-headers-amd64 make gcc bc flex bison libelf-dev
  # benchmarks and the peers they are compared with
  perftest openmpi-bin libopenmpi-dev mpich libmpich-dev python3 libgloo-dev python3-matplotlib
  # launchers, started for real by tests/launchers: PMIx (client library), Slurm with munge,
  # OpenSSH's server, and torchrun (Debian's PyTorch, run with /usr/bin/python3)
  libpmix-dev slurmctld slurmd slurm-client munge openssh-server python3-torch
  # the torch.distributed backend (torch/): PyTorch's C++ headers and pybind11
  libtorch-dev pybind11-dev python3-dev
)
if [ "${1:-}" = --print ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# INITRD=No: the kernel package's hook would spend 1-2 min building an initramfs nobody boots (the
# VM harness boots its own, tests/vm/lib/initramfs.sh). --force-unsafe-io: dpkg skips an fsync per
# unpacked file (a machine that crashes mid-setup is set up again from scratch anyway).
apt_install() {
  INITRD=No apt-get install -y --no-install-recommends -q -o Dpkg::Options::=--force-unsafe-io "$@"
}
# An empty or stale package list cannot find anything: update first when needed.
if ! apt_install "${missing[@]}"; then
  apt-get update -q
  apt_install "${missing[@]}"
fi
