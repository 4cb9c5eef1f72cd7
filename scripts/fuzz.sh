#!/usr/bin/env bash
# Builds the libFuzzer targets in tests/fuzz with clang (-fsanitize=fuzzer,address,undefined),
# compiling only the few rcc sources they need, and runs each for a bounded time starting from
# its committed seed corpus (tests/fuzz/corpus/<target>). Any crash, leak or sanitizer report
# fails the target; the crashing input is kept in build-fuzz/artifacts/.
#   RCC_FUZZ_SECONDS  per target (default 30)      RCC_FUZZ_TARGETS  names (default: all)
#   scripts/fuzz.sh --make-corpus   regenerates the seed corpus from rcc's own encoders
# Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$root/build-fuzz
seconds=${RCC_FUZZ_SECONDS:-30}
targets=${RCC_FUZZ_TARGETS:-frame verbs_wire unique_id liveness_hello iwarp_connect}
cxx=${CXX_FUZZ:-clang++}
flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -fsanitize=address,undefined
       -fno-sanitize-recover=all -I"$root/include" -I"$root/src" -I"$root")

# target -> the rcc sources it needs (base status/log/settings/cpu are common to all: cpu.cc names
# the threads the store server starts).
common=(src/base/status.cc src/base/log.cc src/base/settings.cc src/base/cpu.cc)
sources_of() {
  case $1 in
    frame) echo src/bootstrap/frame.cc ;;
    verbs_wire) echo src/transport/verbs/wire.cc ;;
    liveness_hello) echo src/bootstrap/liveness_hello.cc ;;
    iwarp_connect) echo src/transport/verbs/connect_request.cc ;;
    unique_id) echo src/bootstrap/unique_id.cc src/bootstrap/socket_util.cc src/bootstrap/frame.cc \
                 src/bootstrap/store_client.cc src/bootstrap/store_server.cc src/bootstrap/refusals.cc ;;
  esac
}

mkdir -p "$out/obj" "$out/artifacts"
compile() {  # SOURCE -> prints the object path
  local src=$1 obj="$out/obj/$(echo "$1" | tr / _).o"
  if [ ! -f "$obj" ] || [ "$root/$src" -nt "$obj" ]; then
    "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$root/$src" -o "$obj" || return 1
  fi
  echo "$obj"
}

if [ "${1:-}" = --make-corpus ]; then
  objs=()
  for src in "${common[@]}" src/bootstrap/frame.cc src/transport/verbs/wire.cc src/bootstrap/liveness_hello.cc \
      src/transport/verbs/connect_request.cc \
      $(sources_of unique_id); do
    objs+=("$(compile "$src")") || exit 1
  done
  mapfile -t objs < <(printf '%s\n' "${objs[@]}" | sort -u)
  mkdir -p tests/fuzz/corpus/{frame,verbs_wire,unique_id,liveness_hello,iwarp_connect}
  "$cxx" "${flags[@]}" tests/fuzz/make_corpus.cc "${objs[@]}" -lpthread -o "$out/make_corpus" && "$out/make_corpus" tests/fuzz/corpus
  exit $?
fi

passed=0
failed=0
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
# Built one after another (never two builds at once), then run two at a time: a fuzzer uses one
# core, and the machine has two (5 targets: 75 -> 45 s of CI at 10 s each).
built=()
for target in $targets; do
  objs=()
  ok=1
  for src in "${common[@]}" $(sources_of "$target"); do
    obj=$(compile "$src") || { ok=0; break; }
    objs+=("$obj")
  done
  if [ $ok = 1 ] && "$cxx" "${flags[@]}" -fsanitize=fuzzer "tests/fuzz/${target}_fuzz.cc" "${objs[@]}" -lpthread \
      -o "$out/${target}_fuzz"; then
    built+=("$target")
  else
    fail "$target (build)"
  fi
done
run_target() {  # TARGET: exit status of the fuzzer, its log in $out/TARGET.log
  # New inputs go to the scratch corpus (first directory); the committed seeds are only read.
  mkdir -p "$out/corpus/$1"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$out/${1}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/${1}-" "$out/corpus/$1" "tests/fuzz/corpus/$1" > "$out/$1.log" 2>&1
}
report() {  # TARGET STATUS
  echo "=== fuzz: $1 (${seconds} s)"
  if [ "$2" = 0 ]; then
    grep -E '^stat::number_of_executed_units|^Done' "$out/$1.log" | tail -2
    echo "PASS $1"
    passed=$((passed + 1))
  else
    tail -40 "$out/$1.log"
    fail "$1"
  fi
}
for ((i = 0; i < ${#built[@]}; i += 2)); do
  first=${built[i]} second=${built[i + 1]:-}
  run_target "$first" &
  pid=$!
  status2=0
  [ -n "$second" ] && { run_target "$second"; status2=$?; }
  wait "$pid"
  report "$first" $?
  [ -n "$second" ] && report "$second" $status2
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
