#!/usr/bin/env bash
# Runs a command that must fail: non-zero exit and output matching REGEX (the clear message).
# usage: expect_failure.sh REGEX COMMAND [ARGS...]
regex=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ $status -eq 0 ]; then echo "expect_failure: exited 0"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "expect_failure: no line matches '$regex'"; exit 1; fi
echo "expect_failure: status $status with the expected message"
