// rcc-dump DIR: the one-screen table of where each rank of a job is, from the flight-recorder
// dumps its ranks wrote into DIR (RCC_DEBUG_DUMP_DIR; docs/debugging.md). For jobs started by
// Slurm, mpirun or torchrun; under rccrun the table is printed by rccrun itself.
//   rcc-dump [--raw] DIR
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/call_report.h"

int main(int argc, char** argv) {
  bool raw = false;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--raw") == 0) {
      raw = true;
    } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::printf(
          "usage: rcc-dump [--raw] DIR\n  the table of where each rank is, from DIR/rcc-calls.RANK.txt\n"
          "  --raw  also every recorded call of every rank\n");
      return 0;
    } else if (dir.empty()) {
      dir = argv[i];
    } else {
      std::fprintf(stderr, "rcc-dump: one directory, please ('%s' is a second)\n", argv[i]);
      return 2;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: rcc-dump [--raw] DIR\n");
    return 2;
  }
  std::vector<std::string> problems;
  const std::vector<rcc::report::Dump> dumps = rcc::report::read_dump_dir(dir, &problems);
  for (const std::string& problem : problems) std::fprintf(stderr, "rcc-dump: %s\n", problem.c_str());
  if (dumps.empty()) {
    std::fprintf(stderr, "rcc-dump: no rcc-calls.RANK.txt in %s\n", dir.c_str());
    return 1;
  }
  std::fputs(rcc::report::format_table(dumps).c_str(), stdout);
  if (raw) {
    for (const rcc::report::Dump& dump : dumps) {
      std::printf("\nrank %d (host %s, pid %ld, dumped on %s):\n", dump.rank, dump.host.c_str(), dump.pid,
                  dump.reason.c_str());
      for (const rcc::report::Call& c : dump.calls) {
        std::printf("  comm %u #%llu %s %s count %llu peer %d tag %d: %s, %.1f s ago, %s, waits for %s\n", c.comm,
                    static_cast<unsigned long long>(c.seq), c.op.c_str(), c.datatype.c_str(),
                    static_cast<unsigned long long>(c.count), c.peer, c.tag, c.state.c_str(),
                    static_cast<double>(c.age_ms) / 1000.0, c.status.c_str(), c.waits_for.c_str());
      }
    }
  }
  return 0;
}
