#include "dump_collector.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/call_report.h"
#include "say.h"

namespace rccrun {
namespace {

// Ranks get this long to write a dump once asked.
constexpr auto kAnswerTime = std::chrono::seconds(3);
// While waiting for answers, look this often.
constexpr auto kLookEvery = std::chrono::milliseconds(50);

// Whether the rank has its SIGUSR1 handler (without it the signal would end the process).
bool ready(const std::string& dir, const Rank& rank) {
  return rank.running && rank.local && rank.pid > 0 &&
         access(rcc::report::ready_file(dir, rank.rank).c_str(), F_OK) == 0;
}

}  // namespace

DumpCollector::~DumpCollector() {
  if (!made_dir_) return;
  if (DIR* d = opendir(dir_.c_str())) {
    while (dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") unlink((dir_ + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir_.c_str());
}

bool DumpCollector::prepare(Options* options) {
  if (!options->dump_on_timeout) return true;
  std::string chosen;
  for (const auto& [name, value] : options->settings) {
    if (name == "RCC_DEBUG_DUMP_DIR") chosen = value;
  }
  if (chosen.empty() && std::getenv("RCC_DEBUG_DUMP_DIR") != nullptr) chosen = std::getenv("RCC_DEBUG_DUMP_DIR");
  if (chosen.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rccrun-calls.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      say("cannot make a directory for the ranks' flight recorders (%s): %s; --no-dump-on-timeout skips it",
          pattern.c_str(), std::strerror(errno));
      return false;
    }
    chosen = pattern;
    made_dir_ = true;
    // Only this host has the directory: ranks elsewhere write their record to stderr, which
    // their remote shell brings back.
    options->local_settings.emplace_back("RCC_DEBUG_DUMP_DIR", chosen);
  }
  dir_ = chosen;
  options->settings.emplace_back("RCC_DEBUG_DUMP_SIGNAL", "1");
  return true;
}

bool DumpCollector::has_dump(int rank) const { return access(rcc::report::dump_file(dir_, rank).c_str(), F_OK) == 0; }

void DumpCollector::request_fresh(const std::vector<Rank>& ranks) {
  if (!enabled()) {
    say("received SIGUSR1, but the ranks keep no dump directory (--no-dump-on-timeout)");
    return;
  }
  asked_.clear();
  for (const Rank& rank : ranks) {
    unlink(rcc::report::dump_file(dir_, rank.rank).c_str());
    if (ready(dir_, rank) && kill(rank.pid, SIGUSR1) == 0) asked_.push_back(rank.rank);
  }
  say("received SIGUSR1: asking %zu rank%s where they are", asked_.size(), asked_.size() == 1 ? "" : "s");
  fresh_pending_ = true;
  deadline_ = Clock::now() + kAnswerTime;
}

void DumpCollector::request_missing(const std::vector<Rank>& ranks) {
  if (!enabled()) return;
  for (const Rank& rank : ranks) {
    if (ready(dir_, rank) && !has_dump(rank.rank)) kill(rank.pid, SIGUSR1);
  }
}

std::optional<DumpCollector::Clock::time_point> DumpCollector::wake() const {
  if (!fresh_pending_) return std::nullopt;
  return std::min(deadline_, Clock::now() + kLookEvery);
}

void DumpCollector::poll() {
  if (!fresh_pending_) return;
  std::vector<int> missing;
  for (int rank : asked_) {
    if (!has_dump(rank)) missing.push_back(rank);
  }
  if (!missing.empty() && Clock::now() < deadline_) return;
  fresh_pending_ = false;
  if (!missing.empty()) {
    say("rank%s %s did not answer within %lld s", missing.size() == 1 ? "" : "s",
        rcc::report::rank_ranges(missing).c_str(), static_cast<long long>(kAnswerTime.count()));
  }
  print_table("where the ranks are");
}

bool DumpCollector::timed_out() const {
  if (!enabled()) return false;
  std::vector<std::string> problems;
  for (const rcc::report::Dump& dump : rcc::report::read_dump_dir(dir_, &problems)) {
    if (dump.reason == "timeout") return true;
  }
  return false;
}

void DumpCollector::report() {
  if (timed_out()) print_table("where the ranks were when the job timed out");
}

void DumpCollector::print_table(const char* heading) {
  std::vector<std::string> problems;
  std::vector<rcc::report::Dump> dumps = rcc::report::read_dump_dir(dir_, &problems);
  for (const std::string& problem : problems) say("%s", problem.c_str());
  const std::string table = rcc::report::format_table(dumps);
  say("%s (flight recorders in %s%s):\n%s", heading, dir_.c_str(), made_dir_ ? ", removed at exit" : "", table.c_str());
}

}  // namespace rccrun
