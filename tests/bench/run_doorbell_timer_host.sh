#!/usr/bin/env bash
# The doorbell timer preloaded into rccrun and a rank that ring no verbs doorbell: the job's output,
# which rccrun forwards with write(2) (interposed by the timer), is intact, and the timer prints
# nothing.
# usage: run_doorbell_timer_host.sh MODULE RCCRUN RCC_BENCH
set -u
module=$1 rccrun=$2 bench=$3
expected=$("$rccrun" -n 1 --timeout 60 "$bench" --help 2>&1)
output=$(LD_PRELOAD=$module "$rccrun" -n 1 --timeout 60 "$bench" --help 2>&1)
grep -q '^usage: rccrun -n N rcc-bench' <<<"$expected" || { echo "run_doorbell_timer_host: no usage text without the timer:"; echo "$expected"; exit 1; }
[ "$output" = "$expected" ] || { echo "run_doorbell_timer_host: output differs with the timer preloaded"; diff <(echo "$expected") <(echo "$output"); exit 1; }
echo "run_doorbell_timer_host: ok"
