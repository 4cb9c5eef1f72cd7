#!/usr/bin/env bash
# The README's first command: on a fresh Debian 12 machine, install what rcc needs, build it
# (Release, ./build) and run the 4-rank allreduce + broadcast benchmark on the default backend
# (verbs when an active RDMA port exists, else UCX). About 3 minutes after the build.
#   scripts/run-benchmark.sh [extra rcc-bench flags, e.g. -d bfloat16]
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then
  scripts/setup.sh
else
  sudo scripts/setup.sh
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2

echo "== rccrun -n 4 rcc-bench -c allreduce,broadcast -b 8 -e 64M -f 4 $*"
build/launcher/rccrun -n 4 --timeout 600 build/bench/rcc-bench -c allreduce,broadcast -b 8 -e 64M -f 4 "$@"
