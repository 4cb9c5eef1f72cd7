#include "comm/call_dump.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "base/call_report.h"
#include "base/log.h"
#include "base/names.h"
#include "base/settings.h"
#include "bootstrap/socket_util.h"
#include "comm/call_record.h"

namespace rcc {
namespace {

const char* state_name(CallState state) {
  switch (state) {
    case CallState::kRunning: return "running";
    case CallState::kDone: return "done";
    case CallState::kFailed: return "failed";
  }
  return "unknown";
}

// Peers (ranks of the group) that the unfinished requests of a call wait for.
std::vector<int> waits_for(const CallSnapshot& call, const std::vector<p2p::Engine::PendingRequest>& pending,
                           const std::vector<int>& members) {
  const bool collective = call.op != kCallSend && call.op != kCallRecv;
  const uint32_t context = collective ? p2p::collective_context(call.comm) : p2p::user_context(call.comm);
  std::set<int> peers;
  for (const auto& request : pending) {
    if (request.context != context) continue;
    if (!collective && (request.send != (call.op == kCallSend) || request.tag != call.tag)) continue;
    if (request.peer < 0) {
      peers.insert(-1);  // any source
      continue;
    }
    auto it = std::find(members.begin(), members.end(), request.peer);
    if (it != members.end()) peers.insert(static_cast<int>(it - members.begin()));
  }
  return std::vector<int>(peers.begin(), peers.end());
}

std::string join(const std::vector<int>& values) {
  if (values.empty()) return "-";
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace

std::string format_call_dump(int rank, int size, const p2p::Engine::GroupMembers& groups,
                             const std::vector<p2p::Engine::PendingRequest>& pending, const char* reason) {
  std::string out = "# rcc flight recorder (read with rcc-dump)\n";
  out += "rank=" + std::to_string(rank) + " size=" + std::to_string(size) + " pid=" + std::to_string(getpid()) +
         " host=" + bootstrap::host_name() + " reason=" + reason + "\n";
  std::map<uint32_t, std::vector<int>> members;
  for (const auto& [id, ranks] : groups) {
    members[id] = ranks;
    out += "comm=" + std::to_string(id) + " members=" + join(ranks) + "\n";
  }
  const int64_t now = CallRecorder::coarse_now_ns();
  for (const CallSnapshot& call : CallRecorder::instance().snapshot()) {
    std::string waits = "-";
    if (call.state == CallState::kRunning && members.count(call.comm) != 0) {
      waits = join(waits_for(call, pending, members[call.comm]));
    }
    char line[512];
    std::snprintf(line, sizeof line,
                  "call comm=%u seq=%llu op=%s datatype=%s count=%llu peer=%d tag=%d state=%s age_ms=%lld status=%s "
                  "waits_for=%s\n",
                  call.comm, static_cast<unsigned long long>(call.sequence), call_name(call.op),
                  datatype_name(call.datatype), static_cast<unsigned long long>(call.count), call.peer, call.tag,
                  state_name(call.state), static_cast<long long>((now - call.start_ns) / 1000000),
                  rcc_status_string(call.status), waits.c_str());
    out += line;
  }
  return out;
}

namespace {

// One dump at a time: the writers share a temporary file name, and a rank that dumped on its own
// failure keeps that dump when rccrun's request comes after it (see dump_calls_when_asked).
// Never held while asking the engine: the timeout hook takes it under the engine's lock.
std::mutex g_dump_mutex;
// A rank dumps once on its own (the first failure says the most; the requests drained after a
// timeout time out too, and say less). Asked for it by rccrun, it dumps every time.
std::atomic<bool> g_dumped_on_failure{false};  // set under g_dump_mutex

void write_locked(int rank, const std::string& text) {
  const std::string dir = settings::text("RCC_DEBUG_DUMP_DIR");
  if (dir.empty()) {
    std::fprintf(stderr, "%s", text.c_str());
    return;
  }
  // Written to a temporary name and renamed: a reader never sees half a dump.
  const std::string path = report::dump_file(dir, rank);
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  if (ok) {
    ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ok = ::close(fd) == 0 && ok;
  }
  if (!ok || ::rename(temporary.c_str(), path.c_str()) != 0) {
    RCC_WARN("could not write the flight recorder to %s (RCC_DEBUG_DUMP_DIR): %s", path.c_str(), std::strerror(errno));
  }
}

// Writes the dump of a failure unless this rank has written one already.
void write_failure_dump(int rank, const std::string& text) {
  std::lock_guard<std::mutex> lock(g_dump_mutex);
  if (g_dumped_on_failure.exchange(true)) return;
  write_locked(rank, text);
}

}  // namespace

void dump_calls_when_asked(JobConnections& job) {
  const std::string text =
      format_call_dump(job.rank, job.size, job.engine->group_members(), job.engine->pending_requests(), "signal");
  std::lock_guard<std::mutex> lock(g_dump_mutex);
  // rccrun asks the ranks that have no dump yet once one rank timed out. A rank whose own failure
  // dump landed meanwhile keeps it: written inside the failed call, it says whom the call waited
  // for, where this one would show the call over. rccrun removes the file before it asks for a
  // fresh table (SIGUSR1), so that request still gets the present state.
  const std::string dir = settings::text("RCC_DEBUG_DUMP_DIR");
  if (g_dumped_on_failure && !dir.empty() && ::access(report::dump_file(dir, job.rank).c_str(), F_OK) == 0) return;
  write_locked(job.rank, text);
}

void dump_calls_on_first_timeout(JobConnections& job) {
  const int rank = job.rank, size = job.size;
  job.engine->set_timeout_hook(
      [rank, size](const p2p::Engine::GroupMembers& groups, const std::vector<p2p::Engine::PendingRequest>& pending) {
        if (g_dumped_on_failure.load()) return;
        write_failure_dump(rank, format_call_dump(rank, size, groups, pending, "timeout"));
      });
}

void dump_calls_after_failure(JobConnections& job, Status status) {
  // Other failures (a dead peer) are dumped only where rccrun collects dumps: on stderr they
  // would only repeat what the error says.
  if (status != RCC_ERR_TIMEOUT && settings::text("RCC_DEBUG_DUMP_DIR").empty()) return;
  if (g_dumped_on_failure.load()) return;  // the common case after a failure: skip formatting
  write_failure_dump(job.rank,
                     format_call_dump(job.rank, job.size, job.engine->group_members(), job.engine->pending_requests(),
                                      status == RCC_ERR_TIMEOUT ? "timeout" : "error"));
}

std::string describe_call(const rcc_comm& comm, int op, uint64_t sequence) {
  return std::string(call_name(op)) + " #" + std::to_string(sequence) + " of comm " + std::to_string(comm.group->id()) +
         " (rank " + std::to_string(comm.rank) + " of " + std::to_string(comm.size) + ")";
}

}  // namespace rcc
