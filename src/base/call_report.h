// The flight recorder's dump format, and the one-screen table made from every rank's dump: per
// communicator, which collective each rank is at and what it waits for, the odd ones out first.
// A rank writes its dump (comm/call_dump.h); rccrun and rcc-dump read them (this file), so the
// launcher needs none of the library's upper layers.
//
// A dump is text, one item per line, fields as key=value without spaces:
//   rank=3 size=8 pid=1234 host=node7 reason=timeout
//   comm=2 members=0,2,4,6                       (job ranks of the communicator's ranks)
//   call comm=2 seq=1833 op=broadcast datatype=RCC_FLOAT32 count=1024 peer=0 tag=-1 state=running
//        age_ms=61234 status=RCC_SUCCESS waits_for=3  (ranks of the communicator; "-" for none)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rcc::report {

struct Call {
  uint32_t comm = 0;
  uint64_t seq = 0;
  std::string op;
  std::string datatype;
  uint64_t count = 0;
  int peer = -1;
  int tag = -1;
  std::string state;  // running, done, failed
  int64_t age_ms = 0;
  std::string status;
  std::string waits_for;  // "-" or ranks of the communicator, comma-separated
  bool collective() const { return op != "send" && op != "recv"; }
};

struct Dump {
  int rank = -1;
  int size = 0;
  long pid = 0;
  std::string host;
  std::string reason;
  std::map<uint32_t, std::vector<int>> comms;  // id -> job ranks
  std::vector<Call> calls;                     // oldest first
};

// Where a rank's dump goes in DIR (rcc-calls.RANK.txt), and the file saying that rank may be asked
// for one with SIGUSR1 (rcc-calls.RANK.ready): named here once for the library and rccrun.
std::string dump_file(const std::string& dir, int rank);
std::string ready_file(const std::string& dir, int rank);

// Parses one rank's dump; false (with *error) if it is not one.
bool parse_dump(const std::string& text, Dump* out, std::string* error);
// Reads DIR/rcc-calls.*.txt; *problems lists files that could not be read or parsed.
std::vector<Dump> read_dump_dir(const std::string& dir, std::vector<std::string>* problems);
// The table: per communicator, each rank's latest collective and what it waits for, grouped, the
// odd ones out first; then ranks of the job that left no dump.
std::string format_table(const std::vector<Dump>& dumps);

// "0-3,5,7-8"
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace rcc::report
