// What rccrun prepares for each rank before starting any: its program path (or the remote shell
// command), arguments, environment and CPU binding. The child only calls async-signal-safe
// functions after fork, so everything is made here.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "options.h"

namespace rccrun {

// Everything a rank's child process needs, prepared before fork (the child only calls
// async-signal-safe functions).
struct Rank {
  int rank = 0;
  Placement placement;
  bool local = true;
  std::string path;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::optional<rcc::CpuSet> cpus;
  pid_t pid = -1;
  bool running = false;
  int stdout_pipe[2] = {-1, -1};
  int stderr_pipe[2] = {-1, -1};
  // Remote ranks: the job secret, written as the first line of the remote command's standard input
  // (a secret on the rsh command line would be visible to everyone in ps, here and on the host).
  std::string stdin_secret;
  int stdin_pipe[2] = {-1, -1};
};

// One Rank per placement; false (with a message said) when a program cannot be found.
bool prepare_ranks(const Options& options, const std::vector<Placement>& placement, const std::string& store_address,
                   const std::string& secret, std::vector<Rank>* ranks);

bool is_local_host(const std::string& host);

}  // namespace rccrun
