// What the flight recorder (src/comm/call_record.h) costs a call: begin + end of one entry, in
// nanoseconds, on one thread, against an empty loop. Compare with the time of the call it
// records (an 8-byte allreduce on 2 ranks: rcc-bench). Nothing is asserted.
//   call_record_cost [CALLS]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "comm/call_record.h"

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 50000000;
  rcc::CallRecorder& recorder = rcc::CallRecorder::instance();
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
      const uint64_t ticket = recorder.begin(0, static_cast<uint64_t>(i), 0, RCC_FLOAT32, 2, -1, -1);
      recorder.end(ticket, RCC_SUCCESS);
    }
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    std::printf("call_record_cost: %.2f ns per recorded call (ring of %zu entries, RCC_CALL_RECORD)\n", ns / calls,
                recorder.capacity());
  }
  return 0;
}
