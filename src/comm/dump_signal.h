// On demand: with RCC_DEBUG_DUMP_SIGNAL=1 (rccrun sets it), SIGUSR1 makes this rank write its
// flight recorder (call_dump.h) without stopping the job. The handler only writes a byte into a
// pipe; a thread of ours reads it and writes the dump, so nothing unsafe runs in the handler and
// the application's threads are not held up. One per process (signals are); it dumps the job
// that made it. While it serves, DIR/rcc-calls.RANK.ready tells rccrun the rank may be signalled.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "base/status.h"

namespace rcc {

struct JobConnections;

class DumpOnSignal {
 public:
  // Null *out (and success) unless RCC_DEBUG_DUMP_SIGNAL=1 and no other job of this process has one.
  static Status start(JobConnections& job, std::unique_ptr<DumpOnSignal>* out);
  ~DumpOnSignal();  // stops the thread (the handler stays, ignoring the signal)

 private:
  DumpOnSignal() = default;
  void serve(JobConnections& job);

  int pipe_[2] = {-1, -1};
  std::string ready_file_;  // DIR/rcc-calls.RANK.ready while the handler serves this job
  std::thread thread_;
};

}  // namespace rcc
