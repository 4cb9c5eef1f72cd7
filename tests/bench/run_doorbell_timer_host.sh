#!/usr/bin/env bash
# The doorbell timer preloaded into a program that rings no verbs doorbell: the program's output
# (written through the interposed write) is intact and the timer prints nothing.
# usage: run_doorbell_timer_host.sh MODULE RCC_BENCH
set -u
module=$1 bench=$2
expected=$("$bench" --help 2>&1)
output=$(LD_PRELOAD=$module "$bench" --help 2>&1)
[ "$output" = "$expected" ] || { echo "run_doorbell_timer_host: output differs with the timer preloaded"; diff <(echo "$expected") <(echo "$output"); exit 1; }
[ -n "$output" ] || { echo "run_doorbell_timer_host: rcc-bench --help printed nothing"; exit 1; }
! grep -q doorbell-timer <<<"$output" || { echo "run_doorbell_timer_host: a line without doorbells"; exit 1; }
echo "run_doorbell_timer_host: ok"
