#!/bin/sh
# A program calling an MPI function outside rcc's subset fails to compile with rcc-mpicc and
# rcc-mpicxx, and the compiler names the function; one inside the subset compiles.
#   outside_subset_test.sh BUILD_DIR
set -u
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$work/outside.c" <<'PROGRAM'
#include <mpi.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int x = 0;
  MPI_Bsend(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
PROGRAM
sed 's/MPI_Bsend/MPI_Send/' "$work/outside.c" >"$work/inside.c"
for wrapper in rcc-mpicc rcc-mpicxx; do
  source="$work/outside.c"
  flags=""
  [ "$wrapper" = rcc-mpicxx ] && flags="-x c++"
  if "$build/bin/$wrapper" $flags -c "$source" -o "$work/outside.o" >"$work/out.txt" 2>&1; then
    fail "$wrapper compiled a call to MPI_Bsend"
  fi
  grep -q "MPI_Bsend" "$work/out.txt" || { cat "$work/out.txt"; fail "$wrapper's error does not name MPI_Bsend"; }
  "$build/bin/$wrapper" $flags "$work/inside.c" -o "$work/inside" || fail "$wrapper did not build a program in the subset"
  echo "$wrapper: MPI_Bsend refused at compile time, MPI_Send accepted"
done
echo PASS
