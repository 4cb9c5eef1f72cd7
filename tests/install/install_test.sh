#!/bin/sh
# Installs the built rcc into a temporary prefix, then builds and runs a small C program against it
# twice: through CMake's find_package(rcc) -> rcc::rcc, and through pkg-config.
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
echo PASS
