#!/usr/bin/env bash
# job_memory.sh CMD...: runs CMD and prints, after it ends, the job's memory (how far MemAvailable
# fell below its value at the start, sampled every 50 ms: shared pages count once, unlike summed
# RSS) and its wall time. Exits with CMD's status. The figure is the machine's: other jobs count.
set -u
before=$(awk '/MemAvailable/{print int($2/1024)}' /proc/meminfo)
low=$before
start=$(date +%s.%N)
"$@" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  available=$(awk '/MemAvailable/{print int($2/1024)}' /proc/meminfo)
  ((available < low)) && low=$available
  sleep 0.05
done
wait "$pid"
rc=$?
printf 'job memory: %d MB at most, wall %.1f s, exit %d\n' $((before - low)) \
  "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b - a}')" "$rc"
exit $rc
