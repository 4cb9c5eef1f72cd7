#!/bin/sh
# Usage: run_expecting.sh PATTERN COMMAND [ARGS...]
# Runs COMMAND and shows its output; passes only when it exits 0 AND a line of its output matches
# PATTERN (grep -E). (ctest's PASS_REGULAR_EXPRESSION alone ignores the exit status.)
set -u
pattern=$1
shift
output=$(mktemp)
trap 'rm -f "$output"' EXIT
"$@" >"$output" 2>&1
status=$?
cat "$output"
if [ "$status" -ne 0 ]; then
  echo "run_expecting: exit status $status: $*"
  exit 1
fi
if ! grep -Eq -- "$pattern" "$output"; then
  echo "run_expecting: no line matches '$pattern': $*"
  exit 1
fi
