#!/usr/bin/env bash
# differential_test.sh - run the MPI application programs (heat2d.c,
# samplesort.c) under Open MPI and under the implementation being tested, and
# require byte-identical output at every rank count.
#
# Usage: differential_test.sh RCC_MPICC RCCRUN OUTDIR
#   RCC_MPICC  compiler wrapper of the tested implementation (e.g. rcc-mpicc)
#   RCCRUN     its launcher, called as: RCCRUN -n N PROGRAM ARGS...
#   OUTDIR     directory for binaries, outputs and all temporary files
#
# Each program's output is a pure function of its arguments, so for every case
# and N in 1..8 the output of `RCCRUN -n N` must equal that of
# `mpirun.openmpi -n N`, which in turn must equal Open MPI's output at N = 1.
# Prints one line per case and N; on the first mismatch or failed run prints
# the program, the rank count and the first differing lines, and exits 1.
set -euo pipefail

if [[ $# -ne 3 ]]; then
    echo "usage: $0 RCC_MPICC RCCRUN OUTDIR" >&2
    exit 2
fi
RCC_MPICC=$1
RCCRUN=$2
OUTDIR=$3

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CFLAGS=(-Wall -Wextra -Werror -std=c11 -O2)
MAX_RANKS=8
RUN_TIMEOUT=120 # seconds per run; a hang must fail the test, not stall it
PROGRAMS=(heat2d samplesort)
# Each case: program and arguments.  Keep them fast: 2 x 8 runs per case.
CASES=(
    "heat2d 64 48 200"  # default size; uneven splits at 3, 5, 6, 7 ranks
    "heat2d 9 5 30"     # tiny blocks (one row/column per rank)
    "samplesort 200000 12345"
    "samplesort 5 1"    # most ranks hold no elements
)

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
# Compilers and both launchers put scratch files (Open MPI: session
# directories) under TMPDIR; keep them inside OUTDIR.
export TMPDIR="$OUTDIR/tmp"
mkdir -p "$TMPDIR" "$OUTDIR/openmpi" "$OUTDIR/rcc" "$OUTDIR/out"

for program in "${PROGRAMS[@]}"; do
    nice mpicc.openmpi "${CFLAGS[@]}" "$SRC_DIR/$program.c" -o "$OUTDIR/openmpi/$program"
    nice "$RCC_MPICC" "${CFLAGS[@]}" "$SRC_DIR/$program.c" -o "$OUTDIR/rcc/$program"
done

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fs", b - a }'; }

# run_case LABEL OUTFILE COMMAND... : runs it, fails loudly on error.
run_case() {
    local label=$1 outfile=$2
    shift 2
    local status=0
    timeout --kill-after=10 "$RUN_TIMEOUT" "$@" >"$outfile" 2>"$outfile.stderr" || status=$?
    if [[ $status -ne 0 ]]; then
        echo "FAIL $label: exit status $status" >&2
        tail -n 20 "$outfile.stderr" >&2
        exit 1
    fi
}

# compare LABEL EXPECTED ACTUAL : fails with the first differing lines.
compare() {
    local label=$1 expected=$2 actual=$3
    if ! cmp -s "$expected" "$actual"; then
        echo "FAIL $label: output differs ($expected vs $actual)" >&2
        diff "$expected" "$actual" | head -n 10 >&2 || true
        exit 1
    fi
}

for case_args in "${CASES[@]}"; do
    read -r -a args <<<"$case_args"
    program=${args[0]}
    name=${case_args// /_}
    for ((n = 1; n <= MAX_RANKS; n++)); do
        ref="$OUTDIR/out/$name.openmpi.$n.txt"
        got="$OUTDIR/out/$name.rcc.$n.txt"
        t0=$(now)
        run_case "$case_args n=$n (openmpi)" "$ref" \
            mpirun.openmpi --allow-run-as-root --oversubscribe -n "$n" \
            "$OUTDIR/openmpi/$program" "${args[@]:1}"
        t1=$(now)
        run_case "$case_args n=$n (rcc)" "$got" \
            "$RCCRUN" -n "$n" "$OUTDIR/rcc/$program" "${args[@]:1}"
        t2=$(now)
        if [[ ! -s $ref ]]; then
            echo "FAIL $case_args n=$n: Open MPI produced no output" >&2
            exit 1
        fi
        compare "$case_args n=$n: openmpi n=1 vs openmpi n=$n" \
            "$OUTDIR/out/$name.openmpi.1.txt" "$ref"
        compare "$case_args n=$n: openmpi vs rcc" "$ref" "$got"
        echo "ok   $case_args  n=$n  openmpi $(elapsed "$t0" "$t1")  rcc $(elapsed "$t1" "$t2")"
    done
done
echo "all outputs identical"
