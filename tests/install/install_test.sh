#!/bin/sh
# Installs the built rcc into a temporary prefix, then builds and runs a small C program against it
# twice: through CMake's find_package(rcc) -> rcc::rcc, and through pkg-config; then builds the C++
# example examples/process_grid.cc against the installed headers (rcc/rcc.hpp) and library and runs
# it on 4 ranks with the installed rccrun.
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
echo PASS
