#include "bootstrap/pmix/pmix_rendezvous.h"

#include <pmix.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/socket_util.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

// PMIx_Init .. PMIx_Finalize of this process, shared by the jobs that use it: a server that
// started a process which called PMIx_Init expects PMIx_Finalize before it exits (Open MPI's
// mpirun reports the job as failed otherwise), and a process may run one job after another.
class PmixSession {
 public:
  static std::shared_ptr<PmixSession> open(std::string* why) {
    pmix_proc_t me;
    const pmix_status_t status = PMIx_Init(&me, nullptr, 0);
    if (status != PMIX_SUCCESS) {
      *why = std::string("PMIx_Init: ") + PMIx_Error_string(status);
      return nullptr;
    }
    return std::shared_ptr<PmixSession>(new PmixSession(me));
  }
  ~PmixSession() { PMIx_Finalize(nullptr, 0); }
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;

  const pmix_proc_t& me() const { return me_; }
  pmix_proc_t rank_proc(uint32_t rank) const {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, me_.nspace, rank);
    return proc;
  }
  pmix_proc_t everyone() const { return rank_proc(PMIX_RANK_WILDCARD); }

 private:
  explicit PmixSession(const pmix_proc_t& me) : me_(me) {}
  pmix_proc_t me_;
};

namespace {

// Fences of one process follow each other (PMIx matches a fence by its set of processes, so two at
// once over the whole job could pair up differently on different ranks).
std::mutex g_fence_mutex;
std::atomic<uint64_t> g_pmix_generation{0};

// An integer of any PMIx integer type; false for other types.
bool integer_of(const pmix_value_t& value, int64_t* out) {
  switch (value.type) {
    case PMIX_UINT8: *out = value.data.uint8; return true;
    case PMIX_UINT16: *out = value.data.uint16; return true;
    case PMIX_UINT32: *out = value.data.uint32; return true;
    case PMIX_UINT64: *out = static_cast<int64_t>(value.data.uint64); return true;
    case PMIX_INT8: *out = value.data.int8; return true;
    case PMIX_INT16: *out = value.data.int16; return true;
    case PMIX_INT32: *out = value.data.int32; return true;
    case PMIX_INT64: *out = value.data.int64; return true;
    case PMIX_INT: *out = value.data.integer; return true;
    case PMIX_UINT: *out = value.data.uint; return true;
    case PMIX_SIZE: *out = static_cast<int64_t>(value.data.size); return true;
    case PMIX_PROC_RANK: *out = value.data.rank; return true;
    default: return false;
  }
}

// Reads an integer attribute of proc; *found false when the server does not have it.
Status get_integer(const pmix_proc_t& proc, const char* key, bool* found, int64_t* out) {
  pmix_value_t* value = nullptr;
  const pmix_status_t status = PMIx_Get(&proc, key, nullptr, 0, &value);
  *found = false;
  if (status != PMIX_SUCCESS) return RCC_SUCCESS;
  const bool is_integer = integer_of(*value, out);
  PMIX_VALUE_RELEASE(value);
  if (!is_integer) return fail(RCC_ERR_BOOTSTRAP, "PMIx: %s is not an integer", key);
  *found = true;
  return RCC_SUCCESS;
}

std::string pmix_rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// Which ranks have not posted `key`: after a fence that timed out, each rank that reached it has
// committed the key, and a get of it reaches that rank's server directly. All asked at once, each
// bounded; a rank whose server does not answer in time counts as missing.
std::vector<int> ranks_without(const PmixSession& session, int size, const std::string& key) {
  struct Probe {
    std::mutex mutex;
    std::condition_variable answered;
    int pending = 0;
    std::vector<int> missing;
  };
  struct Ask {
    std::shared_ptr<Probe> probe;
    int rank;
  };
  auto probe = std::make_shared<Probe>();
  int timeout = 2;
  pmix_info_t info;
  PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
  for (int r = 0; r < size; ++r) {
    if (static_cast<uint32_t>(r) == session.me().rank) continue;
    const pmix_proc_t peer = session.rank_proc(static_cast<uint32_t>(r));
    auto* ask = new Ask{probe, r};
    {
      std::lock_guard<std::mutex> guard(probe->mutex);
      ++probe->pending;
    }
    const pmix_status_t posted = PMIx_Get_nb(
        &peer, key.c_str(), &info, 1,
        [](pmix_status_t status, pmix_value_t*, void* data) {
          std::unique_ptr<Ask> answered(static_cast<Ask*>(data));
          std::lock_guard<std::mutex> guard(answered->probe->mutex);
          if (status != PMIX_SUCCESS) answered->probe->missing.push_back(answered->rank);
          --answered->probe->pending;
          answered->probe->answered.notify_all();
        },
        ask);
    if (posted != PMIX_SUCCESS) {
      delete ask;
      std::lock_guard<std::mutex> guard(probe->mutex);
      --probe->pending;
      probe->missing.push_back(r);
    }
  }
  std::unique_lock<std::mutex> lock(probe->mutex);
  probe->answered.wait_for(lock, std::chrono::seconds(timeout + 3), [&] { return probe->pending == 0; });
  std::vector<int> missing = probe->missing;
  std::sort(missing.begin(), missing.end());
  PMIX_INFO_DESTRUCT(&info);
  return missing;
}

class PmixRendezvous final : public Rendezvous {
 public:
  PmixRendezvous(std::shared_ptr<PmixSession> session, int rank, int size)
      : session_(std::move(session)),
        rank_(rank),
        size_(size),
        prefix_("rcc.j" + std::to_string(g_pmix_generation.fetch_add(1)) + ".") {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override { return std::string("the PMIx server of namespace ") + session_->me().nspace; }

  Status allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                   std::vector<std::vector<uint8_t>>* all) override {
    const std::string key = prefix_ + name;
    std::lock_guard<std::mutex> fences(g_fence_mutex);
    RCC_RETURN_IF_ERROR(post(key, mine));
    bool collect = true;
    int seconds = whole_seconds(timeout_s);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
    const pmix_proc_t everyone = session_->everyone();
    const pmix_status_t fenced = PMIx_Fence(&everyone, 1, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (fenced != PMIX_SUCCESS) return fence_failed(name, key, fenced, timeout_s);
    std::vector<std::vector<uint8_t>> gathered(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) {
        gathered[static_cast<size_t>(r)] = mine;
        continue;
      }
      RCC_RETURN_IF_ERROR(fetch(r, key, &gathered[static_cast<size_t>(r)]));
    }
    *all = std::move(gathered);
    return RCC_SUCCESS;
  }

  // A fence without data, waited for while progressing. A rank that leaves without it (after an
  // abort or a failure it saw) ends it for the others as its process ends (Open MPI's server says
  // PARTIAL SUCCESS); that is no error here once its goodbye shows it left on purpose.
  Status leave_together(double timeout_s, const std::function<void()>& progress,
                        const std::function<bool(int rank)>& departed) override {
    const std::string key = prefix_ + "leaving";
    std::lock_guard<std::mutex> fences(g_fence_mutex);
    RCC_RETURN_IF_ERROR(post(key, {}));
    // The fence's state lives until its callback (PMIx reads the info until then).
    struct Fence {
      std::atomic<bool> done{false};
      std::atomic<int> status{PMIX_SUCCESS};
      pmix_info_t info;
      int seconds = 0;
      ~Fence() { PMIX_INFO_DESTRUCT(&info); }
    };
    auto* fence = new Fence;
    fence->seconds = whole_seconds(timeout_s);
    PMIX_INFO_LOAD(&fence->info, PMIX_TIMEOUT, &fence->seconds, PMIX_INT);
    const pmix_proc_t everyone = session_->everyone();
    const pmix_status_t posted = PMIx_Fence_nb(
        &everyone, 1, &fence->info, 1,
        [](pmix_status_t status, void* data) {
          auto* f = static_cast<Fence*>(data);
          f->status.store(status);
          f->done.store(true, std::memory_order_release);
        },
        fence);
    if (posted != PMIX_SUCCESS) {
      delete fence;
      return fail(RCC_ERR_BOOTSTRAP, "PMIx_Fence_nb at rcc_comm_destroy: %s", PMIx_Error_string(posted));
    }
    // PMIx's own timeout ends the fence; the deadline here only guards a server that never answers
    // (the fence's state is then left to a callback that may still come).
    const Clock::time_point deadline = deadline_after(timeout_s + 5);
    while (!fence->done.load(std::memory_order_acquire)) {
      if (Clock::now() > deadline) {
        return fail(RCC_ERR_TIMEOUT, "the PMIx server did not end the fence at rcc_comm_destroy within %.0f s",
                    timeout_s);
      }
      progress();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const pmix_status_t status = fence->status.load();
    delete fence;
    if (status != PMIX_SUCCESS) {
      // The goodbye travels by the liveness connection, the fence's end by the PMIx server: allow
      // it a moment to come second.
      const Clock::time_point grace = Clock::now() + std::chrono::seconds(1);
      do {
        for (int rank = 0; rank < size_; ++rank) {
          if (rank == rank_ || !departed(rank)) continue;
          RCC_INFO("rcc_comm_destroy: rank %d left without meeting the others (PMIx fence: %s)", rank,
                   PMIx_Error_string(status));
          return RCC_SUCCESS;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      } while (Clock::now() < grace);
      return fence_failed("rcc_comm_destroy", key, status, timeout_s);
    }
    return RCC_SUCCESS;
  }

 private:
  static int whole_seconds(double timeout_s) { return std::max(1, static_cast<int>(std::ceil(timeout_s))); }

  // Puts this rank's blob under key (with a leading byte: an empty blob is still a value).
  static Status post(const std::string& key, const std::vector<uint8_t>& blob) {
    std::vector<char> bytes(blob.size() + 1);
    bytes[0] = 1;
    std::memcpy(bytes.data() + 1, blob.data(), blob.size());
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = bytes.data();
    value.data.bo.size = bytes.size();
    pmix_status_t status = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
    if (status == PMIX_SUCCESS) status = PMIx_Commit();
    if (status != PMIX_SUCCESS)
      return fail(RCC_ERR_BOOTSTRAP, "PMIx: cannot post '%s': %s", key.c_str(), PMIx_Error_string(status));
    return RCC_SUCCESS;
  }

  Status fetch(int rank, const std::string& key, std::vector<uint8_t>* out) const {
    const pmix_proc_t peer = session_->rank_proc(static_cast<uint32_t>(rank));
    pmix_value_t* value = nullptr;
    const pmix_status_t status = PMIx_Get(&peer, key.c_str(), nullptr, 0, &value);
    if (status != PMIX_SUCCESS) {
      return fail(RCC_ERR_BOOTSTRAP, "PMIx: rank %d's '%s' is missing after the fence: %s", rank, key.c_str(),
                  PMIx_Error_string(status));
    }
    const bool valid = value->type == PMIX_BYTE_OBJECT && value->data.bo.size >= 1 && value->data.bo.bytes[0] == 1;
    if (valid) out->assign(value->data.bo.bytes + 1, value->data.bo.bytes + value->data.bo.size);
    PMIX_VALUE_RELEASE(value);
    if (!valid) return fail(RCC_ERR_BOOTSTRAP, "PMIx: rank %d posted a malformed '%s'", rank, key.c_str());
    return RCC_SUCCESS;
  }

  Status fence_failed(const std::string& what, const std::string& key, pmix_status_t status, double timeout_s) const {
    if (status != PMIX_ERR_TIMEOUT) {
      return fail(RCC_ERR_BOOTSTRAP, "PMIx fence '%s' failed: %s", what.c_str(), PMIx_Error_string(status));
    }
    const std::vector<int> missing = ranks_without(*session_, size_, key);
    if (missing.empty()) {
      return fail(RCC_ERR_TIMEOUT, "PMIx fence '%s' did not complete within %.3g s (RCC_BOOTSTRAP_TIMEOUT)",
                  what.c_str(), timeout_s);
    }
    return fail(RCC_ERR_TIMEOUT,
                "rank%s %s of %d did not arrive at the PMIx fence '%s' within %.3g s (RCC_BOOTSTRAP_TIMEOUT)",
                missing.size() > 1 ? "s" : "", pmix_rank_list(missing).c_str(), size_, what.c_str(), timeout_s);
  }

  std::shared_ptr<PmixSession> session_;
  int rank_;
  int size_;
  std::string prefix_;
};

}  // namespace

Status detect_pmix(JobInfo* info, bool* found, std::string* why) {
  *found = false;
  std::string use;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_PMIX", &use));
  if (use == "0") {
    *why = "RCC_PMIX=0";
    return RCC_SUCCESS;
  }
  // Only a process a PMIx server started has these; without them PMIx_Init has nothing to reach.
  if (std::getenv("PMIX_NAMESPACE") == nullptr || std::getenv("PMIX_RANK") == nullptr) {
    *why = "no PMIx server started this process (PMIX_NAMESPACE, PMIX_RANK not set)";
    return RCC_SUCCESS;
  }
  std::shared_ptr<PmixSession> session = PmixSession::open(why);
  if (session == nullptr) return RCC_SUCCESS;
  const pmix_proc_t everyone = session->everyone();
  bool known = false;
  int64_t size = 0, local_rank = -1, local_size = 0;
  RCC_RETURN_IF_ERROR(get_integer(everyone, PMIX_JOB_SIZE, &known, &size));
  if (!known) return fail(RCC_ERR_BOOTSTRAP, "PMIx: the server does not say the job size (PMIX_JOB_SIZE)");
  RCC_RETURN_IF_ERROR(get_integer(session->me(), PMIX_LOCAL_RANK, &known, &local_rank));
  if (!known) local_rank = -1;
  RCC_RETURN_IF_ERROR(get_integer(everyone, PMIX_LOCAL_SIZE, &known, &local_size));
  if (!known) local_size = 0;
  const int64_t rank = session->me().rank;
  if (size < 1 || size > (1 << 24) || rank < 0 || rank >= size) {
    return fail(RCC_ERR_BOOTSTRAP, "PMIx: rank %lld of a job of %lld is not a valid job", static_cast<long long>(rank),
                static_cast<long long>(size));
  }
  JobInfo found_info;
  found_info.rank = static_cast<int>(rank);
  found_info.size = static_cast<int>(size);
  found_info.local_rank =
      local_size > 0 && local_rank >= 0 && local_rank < local_size ? static_cast<int>(local_rank) : -1;
  found_info.local_size = found_info.local_rank >= 0 ? static_cast<int>(local_size) : 0;
  found_info.source = "pmix";
  found_info.pmix = std::move(session);
  *info = std::move(found_info);
  *found = true;
  return RCC_SUCCESS;
}

Status connect_pmix(JobInfo* info, double timeout_s, std::unique_ptr<Rendezvous>* out) {
  if (info->pmix == nullptr) return fail(RCC_ERR_INTERNAL, "connect_pmix: no PMIx session");
  auto rendezvous = std::make_unique<PmixRendezvous>(info->pmix, info->rank, info->size);
  // The secret of the connections rcc makes itself: rank 0's, handed out through the server (whose
  // data only this job's processes can read).
  std::string secret;
  if (info->rank == 0) RCC_RETURN_IF_ERROR(make_secret(&secret));
  std::vector<std::vector<uint8_t>> all;
  RCC_RETURN_IF_ERROR(rendezvous->allgather("secret", bytes_of(secret), timeout_s, &all));
  info->secret.assign(all[0].begin(), all[0].end());
  if (info->secret.empty()) return fail(RCC_ERR_BOOTSTRAP, "PMIx: rank 0 handed out an empty secret");
  *out = std::move(rendezvous);
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
