# Shared by the launcher tests (sourced): running a job under a deadline and checking its output.
#   run_job NAME EXPECT_EXIT PATTERN... -- COMMAND...
# runs COMMAND (killed after $JOB_LIMIT s, default 300) and checks its exit status (0, or "fail"
# for any non-zero) and that its output holds every PATTERN (grep -E; "!PATTERN": holds none).
# Counts into passed/failed and prints the output of a failure.
passed=0
failed=0
run_job() {
  name=$1 expect=$2
  shift 2
  patterns=""
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    patterns="$patterns
$1"
    shift
  done
  shift
  log=$(mktemp)
  start=$(date +%s.%N)
  timeout -k 5 "${JOB_LIMIT:-300}" "$@" >"$log" 2>&1
  status=$?
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  ok=1
  if [ "$expect" = 0 ] && [ $status -ne 0 ]; then ok=0; why="exit $status"; fi
  if [ "$expect" = fail ] && { [ $status -eq 0 ] || [ $status -eq 124 ] || [ $status -eq 137 ]; }; then
    ok=0
    why="exit $status (expected a failure, not success or the deadline)"
  fi
  if [ $ok = 1 ]; then
    printf '%s\n' "$patterns" | while IFS= read -r pattern; do
      [ -z "$pattern" ] && continue
      case $pattern in
        !*) if grep -Eq -- "${pattern#!}" "$log"; then echo "$pattern" >"$log.missing"; break; fi ;;
        *) grep -Eq -- "$pattern" "$log" || { echo "$pattern" >"$log.missing"; break; } ;;
      esac
    done
    if [ -f "$log.missing" ]; then ok=0; why="the output fails '$(cat "$log.missing")'"; fi
  fi
  if [ $ok = 1 ]; then
    passed=$((passed + 1))
    printf 'ok   %-58s %6.1f s\n' "$name" "$seconds"
  else
    failed=$((failed + 1))
    printf 'FAIL %-58s %6.1f s: %s\n' "$name" "$seconds" "$why"
    sed 's/^/    | /' "$log" | tail -60
  fi
  rm -f "$log" "$log.missing"
}

finish() {
  echo "$passed passed, $failed failed"
  [ $failed -eq 0 ]
}

# The programs every launcher runs (BUILD_DIR): the launch probe, the p2p and collectives suites.
set_programs() {
  probe=$1/tests/launchers/launch_probe
  p2p=$1/tests/p2p/p2p_test
  coll=$1/tests/collectives/collectives_test
  mpi_coll=$1/tests/mpi/mpi_collectives  # an MPI program on rcc's MPI (tests/mpi)
  mpi_comms=$1/tests/mpi/mpi_comms
  export RCC_TIMEOUT=60 RCC_BOOTSTRAP_TIMEOUT=60
}
