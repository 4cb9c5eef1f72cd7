// rccrun's command line, host lists and the placement of ranks on hosts. Pure functions, so the
// tests can call them directly.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "binding.h"

namespace rccrun {

struct HostSlots {
  std::string host;
  int slots = 1;
};

struct Options {
  int ranks = 0;  // -n; 0: the hosts' total slots
  std::vector<HostSlots> hosts;
  std::string rsh = "ssh";
  std::vector<std::string> forwarded;                         // -x VAR
  std::vector<std::pair<std::string, std::string>> settings;  // --env VAR=VAL (and -x VAR=VAL)
  // What only ranks on rccrun's own host get: paths rccrun made here, which other hosts lack.
  std::vector<std::pair<std::string, std::string>> local_settings;
  bool tag_output = false;
  Binding binding = Binding::kAuto;
  bool report_bindings = false;
  double timeout_s = 0;  // 0: none
  // After the first rank fails, how long the others get to exit by themselves (rcc reports the
  // death to them) before SIGTERM; 0: at once.
  double failure_grace_s = 10;
  bool display_map = false;
  // Ranks write their flight recorder into a directory when they time out or on SIGUSR1 to rccrun,
  // and rccrun prints the table of them (docs/debugging.md).
  bool dump_on_timeout = true;
  bool help = false;
  bool version = false;
  std::vector<std::string> command;  // program and its arguments
};

// Parses argv[1..]; false with *error set on bad usage.
bool parse_command_line(int argc, const char* const* argv, Options* options, std::string* error);

// "host1:2,host2" (slots default to 1).
bool parse_host_list(const std::string& text, std::vector<HostSlots>* hosts, std::string* error);

// Hostfile text: one host a line as "host", "host slots=N" or "host:N"; '#' starts a comment.
bool parse_hostfile(const std::string& text, std::vector<HostSlots>* hosts, std::string* error);

struct Placement {
  std::string host;
  int local_rank = 0;
  int local_size = 0;
};

// Fills hosts in order, slot by slot. No hosts: all ranks on localhost (ranks must be > 0).
bool place_ranks(int ranks, const std::vector<HostSlots>& hosts, std::vector<Placement>* placement, std::string* error);

// 'text' quoted for a POSIX shell.
std::string shell_quote(const std::string& text);

const char* usage();

}  // namespace rccrun
