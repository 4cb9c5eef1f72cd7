#!/usr/bin/env bash
# One short rcc-bench run under rccrun, then its output checked: exit 0, #wrong all 0, JSON parses.
# usage: run_bench_smoke.sh PYTHON CHECKER RCCRUN RCC_BENCH RANKS COLLECTIVES [rcc-bench flags...]
set -u
python=$1 checker=$2 rccrun=$3 bench=$4 ranks=$5 collectives=$6
shift 6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$rccrun" -n "$ranks" --timeout 120 "$bench" -c "$collectives" -J "$work/out.json" "$@" >"$work/out.txt"
status=$?
cat "$work/out.txt"
if [ $status -ne 0 ]; then
  echo "run_bench_smoke: rcc-bench exited with status $status"
  exit 1
fi
# --split N among the flags: the checker also wants the "# split: N groups" header.
groups=()
previous=
for arg in "$@"; do
  if [ "$previous" = "--split" ]; then groups=(--groups "$arg"); fi
  case $arg in --split=*) groups=(--groups "${arg#--split=}") ;; esac
  previous=$arg
done
"$python" "$checker" "${groups[@]}" "$work/out.txt" "$work/out.json" ${collectives//,/ }
