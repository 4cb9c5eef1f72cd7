// A rank that only bootstraps: detect_job + connect_job + an allgather of "rank size source",
// checks that every rank agrees, prints "probe rank R of S (source) ok" and exits 0 (1 on any error).
#include <cstdio>
#include <string>

#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/job.h"

namespace {

using rcc::bootstrap::JobInfo;

int failed(int rank, const char* what) {
  std::fprintf(stderr, "probe rank %d: FAILED: %s: %s\n", rank, what, rcc::last_error().c_str());
  return 1;
}

}  // namespace

int main() {
  JobInfo job;
  if (rcc::bootstrap::detect_job(&job) != RCC_SUCCESS) return failed(-1, "detect_job");
  rcc::log::set_rank(job.rank);
  int64_t timeout_setting = 0;
  if (rcc::settings::integer("RCC_BOOTSTRAP_TIMEOUT", &timeout_setting) != RCC_SUCCESS)
    return failed(job.rank, "settings");
  const double timeout = static_cast<double>(timeout_setting);
  std::unique_ptr<rcc::bootstrap::StoreServer> server;
  std::unique_ptr<rcc::bootstrap::StoreClient> client;
  if (rcc::bootstrap::connect_store(&job, timeout, &server, &client) != RCC_SUCCESS)
    return failed(job.rank, "connect_store");
  if ((job.rank == 0) != (server != nullptr) && job.meeting == rcc::bootstrap::Meeting::kRank0Hosts) {
    std::fprintf(stderr, "probe rank %d: FAILED: store hosted by the wrong rank\n", job.rank);
    return 1;
  }
  auto describe = [&](int rank) { return std::to_string(rank) + " " + std::to_string(job.size) + " " + job.source; };
  std::string mine = describe(job.rank);
  std::vector<std::vector<uint8_t>> all;
  if (rcc::bootstrap::allgather(*client, "probe", job.rank, job.size, {mine.begin(), mine.end()}, timeout, &all) !=
      RCC_SUCCESS) {
    return failed(job.rank, "allgather");
  }
  for (int r = 0; r < job.size; ++r) {
    std::string theirs(all[r].begin(), all[r].end());
    if (theirs != describe(r)) {
      std::fprintf(stderr, "probe rank %d: FAILED: rank %d says '%s', expected '%s'\n", job.rank, r, theirs.c_str(),
                   describe(r).c_str());
      return 1;
    }
  }
  if (rcc::bootstrap::barrier(*client, "probe-barrier", job.rank, job.size, timeout) != RCC_SUCCESS) {
    return failed(job.rank, "barrier");
  }
  // The rank hosting the store leaves last: everyone else reports done (a set, acknowledged) first.
  if (server != nullptr) {
    for (int r = 0; r < job.size; ++r) {
      std::vector<uint8_t> ignored;
      if (r != job.rank && client->get("probe-done/" + std::to_string(r), timeout, &ignored) != RCC_SUCCESS) {
        return failed(job.rank, "waiting for the others to finish");
      }
    }
  } else if (client->set("probe-done/" + std::to_string(job.rank), {}) != RCC_SUCCESS) {
    return failed(job.rank, "reporting done");
  }
  std::printf("probe rank %d of %d (%s) ok local %d/%d\n", job.rank, job.size, job.source.c_str(), job.local_rank,
              job.local_size);
  return 0;
}
