// Runs rccrun (or any program) as a child with its output captured, bounded by a deadline, and
// checks for leftover processes. Shared by the fault-injection and rendezvous tests.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace faults {

struct Outcome {
  int status = -1;  // exit status, or 128+signal
  std::string out;
  std::string err;
  double seconds = 0;
  bool timed_out = false;  // killed by run() after deadline_s
};

// Runs argv (argv[0] a path) with extra_env added; during_run is called with the child's pid once
// started. After deadline_s the child's process group is killed and timed_out is set.
Outcome run(const std::vector<std::string>& argv, double deadline_s, const std::vector<std::string>& extra_env = {},
            const std::function<void(pid_t)>& during_run = nullptr);

// The value of an environment variable the ctest entry sets, or fails the test.
std::string required_env(const char* name);

// Whether a process with marker in its command line still exists after up to wait_ms.
bool processes_left(const std::string& marker, int wait_ms = 2000);

// The value of "key=" in a line of "key=value" words ("" when absent).
std::string field(const std::string& line, const std::string& key);

// The lines of text that start with prefix.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix);

}  // namespace faults
