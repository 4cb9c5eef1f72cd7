// rccrun's side of the flight recorder (docs/debugging.md): a directory the ranks write their
// dumps into (RCC_DEBUG_DUMP_DIR, a temporary one unless the user chose one), SIGUSR1 to the ranks
// to ask for them, and the one-screen table of where each rank is (base/call_report.h).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "options.h"
#include "rank_setup.h"

namespace rccrun {

class DumpCollector {
 public:
  using Clock = std::chrono::steady_clock;

  ~DumpCollector();  // removes the directory if it made it
  // Adds RCC_DEBUG_DUMP_DIR and RCC_DEBUG_DUMP_SIGNAL=1 to the ranks' settings (unless
  // --no-dump-on-timeout). False with a message said if the directory cannot be made.
  bool prepare(Options* options);
  bool enabled() const { return !dir_.empty(); }

  // Asks every running local rank for its dump (fresh: older dumps are removed first), then
  // prints the table once all answered or a few seconds passed (poll()).
  void request_fresh(const std::vector<Rank>& ranks);
  // After a timeout: asks the running local ranks that left no dump yet (keeping the dumps of
  // ranks that timed out); the table is printed by report().
  void request_missing(const std::vector<Rank>& ranks);
  // When the supervisor should call poll() next (none when nothing is asked).
  std::optional<Clock::time_point> wake() const;
  // Prints the table of a fresh request once it is complete or its time is up.
  void poll();
  // Whether a rank wrote a dump because a call of its timed out.
  bool timed_out() const;
  // At the end of a failed job in which a call timed out: the table of the dumps the ranks left.
  void report();

 private:
  bool has_dump(int rank) const;
  void print_table(const char* heading);

  std::string dir_;
  bool made_dir_ = false;
  bool fresh_pending_ = false;
  std::vector<int> asked_;
  Clock::time_point deadline_{};
};

}  // namespace rccrun
