#!/bin/bash
# Smoke run of bench/torch_compare (no timing asserted): 2 ranks under torchrun, tiny sizes, one
# round, DDP steps included. It must exit 0, write a row for every collective and size into
# results.csv, name the three DDP models, and draw results.png.
#   torch_compare_smoke.sh SOURCE_DIR BUILD_DIR
set -u
source_dir=$1
build=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
log="$out/log"
if ! "$source_dir/bench/torch_compare" --ranks 2 --sizes 8:64K --factor 64 --iters 2 --repeat 1 \
  --build "$build" --out "$out" >"$log" 2>&1; then
  cat "$log"
  echo "FAIL: bench/torch_compare exited non-zero"
  exit 1
fi
status=0
for collective in all_reduce broadcast all_gather reduce_scatter all_to_all_single; do
  rows=$(grep -c "^2,$collective," "$out/results.csv")
  [ "$rows" = 3 ] || { echo "FAIL: $collective: $rows rows in results.csv, expected 3 (8 B, 512 B, 32 KiB)"; status=1; }
done
for model in "mlp batch 1" "mlp batch 8" "embedding batch 8"; do
  grep -q "DDP step, $model .*: rcc [0-9.]* ms, gloo [0-9.]* ms" "$log" ||
    { echo "FAIL: no DDP step line for $model"; status=1; }
done
[ -s "$out/results.png" ] || { echo "FAIL: no results.png"; status=1; }
[ $status = 0 ] && echo "ok: torch_compare smoke" || cat "$log"
exit $status
