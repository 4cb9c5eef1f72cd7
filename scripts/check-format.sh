#!/usr/bin/env bash
# Fails, listing the files, when a C or C++ source of the tree is not as .clang-format makes it.
# Fix with: clang-format -i $(git ls-files '*.cc' '*.h' '*.c' '*.hpp')
set -uo pipefail
cd "$(dirname "$0")/.."
format=${CLANG_FORMAT:-clang-format}
command -v "$format" >/dev/null || { echo "check-format: $format not found"; exit 1; }
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' '*.hpp')
bad=()
# One clang-format for every file (seconds, not the half minute of one process per file); only
# when it finds something are the files checked one by one, to name them.
if ! "$format" --dry-run --Werror "${files[@]}" >/dev/null 2>&1; then
  for f in "${files[@]}"; do
    "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
fi
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not formatted (clang-format -i FILE): %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
