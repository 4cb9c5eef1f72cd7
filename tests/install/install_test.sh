#!/bin/sh
# Installs the built rcc into a temporary prefix, then builds and runs a small C program against it
# twice: through CMake's find_package(rcc) -> rcc::rcc, and through pkg-config; then builds the C++
# example examples/process_grid.cc against the installed headers (rcc/rcc.hpp) and library and runs
# it on 4 ranks with the installed rccrun; then an MPI program built by the installed rcc-mpicc
# (and once through pkg-config rcc-mpi) runs on 4 ranks under the installed rccrun; and the
# installed torch backend, where it was built, imports and runs.
# Usage: install_test.sh BUILD_DIR
set -eu
build=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null

cmake -S "$here/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$work/cmake-build/consumer"

libdir=$(ls -d "$work"/prefix/lib*/pkgconfig | head -1)
flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs rcc)
cc -o "$work/consumer-pc" "$here/consumer/consumer.c" $flags
LD_LIBRARY_PATH="$(dirname "$libdir")" "$work/consumer-pc"

for header in rcc.hpp detail/checks.hpp detail/datatype.hpp detail/error.hpp detail/request.hpp; do
  [ -f "$work/prefix/include/rcc/$header" ] || { echo "not installed: include/rcc/$header"; exit 1; }
done
c++ -std=c++20 -o "$work/process_grid" "$here/../../examples/process_grid.cc" $flags
if ! LD_LIBRARY_PATH="$(dirname "$libdir")" RCC_TIMEOUT=60 RCC_BOOTSTRAP_TIMEOUT=60 \
    "$work/prefix/bin/rccrun" -n 4 --timeout 120 "$work/process_grid" >"$work/process_grid.out" 2>&1; then
  cat "$work/process_grid.out"
  echo "process_grid (installed) failed"
  exit 1
fi
cat "$work/process_grid.out"
grep -q '^process_grid: OK$' "$work/process_grid.out" || { echo "process_grid (installed) did not say OK"; exit 1; }

# MPI: PREFIX/bin/rcc-mpicc prog.c -o prog && PREFIX/bin/rccrun -n 4 ./prog, without any path set.
mpi_source="$here/../mpi/programs/samplesort.c"
"$work/prefix/bin/rcc-mpicc" -show -o x x.c | grep -q -- "-lrcc_mpi" || { echo "rcc-mpicc -show lacks -lrcc_mpi"; exit 1; }
"$work/prefix/bin/rcc-mpicc" -O2 -o "$work/samplesort" "$mpi_source"
mpi_flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs rcc-mpi)
cc -O2 -o "$work/samplesort-pc" "$mpi_source" $mpi_flags
for program in samplesort samplesort-pc; do
  path=""
  [ "$program" = samplesort-pc ] && path="$(dirname "$libdir")"
  if ! LD_LIBRARY_PATH="$path" RCC_TIMEOUT=60 RCC_BOOTSTRAP_TIMEOUT=60 \
      "$work/prefix/bin/rccrun" -n 4 --timeout 120 "$work/$program" 5000 7 >"$work/$program.out" 2>&1; then
    cat "$work/$program.out"
    echo "$program (installed rcc-mpi) failed"
    exit 1
  fi
  grep -q '^count 5000$' "$work/$program.out" || { cat "$work/$program.out"; echo "$program: no count line"; exit 1; }
done
cmp "$work/samplesort.out" "$work/samplesort-pc.out" || { echo "rcc-mpicc and pkg-config builds differ"; exit 1; }
# rcc-mpicxx: the C++ MPI benchmark harness, run briefly.
"$work/prefix/bin/rcc-mpicxx" -O2 -std=c++17 -o "$work/mpi-bench" "$here/../../bench/mpi/mpi_bench.cc"
RCC_TIMEOUT=60 "$work/prefix/bin/rccrun" -n 2 --timeout 120 "$work/mpi-bench" -c allreduce -b 8 -e 1K -n 5 -w 1 \
  >"$work/mpi-bench.out" 2>&1 || { cat "$work/mpi-bench.out"; echo "mpi-bench (rcc-mpicxx) failed"; exit 1; }
grep -q "Collective: allreduce" "$work/mpi-bench.out" || { cat "$work/mpi-bench.out"; echo "mpi-bench printed no table"; exit 1; }
# The torch backend, where it was built: the installed module imports with Debian's Python (its
# _C finds the installed librcc by itself) and runs an all_reduce on a group of one.
if [ -d "$build/python/rcc_torch" ]; then
  site=$(ls -d "$work"/prefix/lib/python3*/dist-packages | head -1)
  [ -f "$site/rcc_torch/__init__.py" ] || { echo "rcc_torch not installed under $work/prefix"; exit 1; }
  PYTHONPATH="$site" /usr/bin/python3 - "$work/torch-store" "$site" <<'PY' || { echo "the installed rcc_torch failed"; exit 1; }
import sys
import torch
import torch.distributed as dist
import rcc_torch
assert rcc_torch.__file__.startswith(sys.argv[2]), f"rcc_torch came from {rcc_torch.__file__}"
dist.init_process_group("rcc", init_method="file://" + sys.argv[1], rank=0, world_size=1)
t = torch.arange(4.0)
dist.all_reduce(t)
assert t.tolist() == [0.0, 1.0, 2.0, 3.0], t
dist.destroy_process_group()
print("installed rcc_torch: ok from", rcc_torch.__file__)
PY
fi
echo PASS
