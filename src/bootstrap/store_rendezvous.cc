#include "bootstrap/store_rendezvous.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

// Rendezvous made by this process are numbered so that their keys never collide.
std::atomic<uint64_t> g_generation{0};

}  // namespace

std::string published_key(const std::string& prefix, const std::string& name, int rank) {
  return prefix + "/published/" + name + "/" + std::to_string(rank);
}

Status lookup_published(StoreClient& store, const std::string& prefix, const std::string& name, int rank,
                        double timeout_s, std::vector<uint8_t>* blob) {
  const Status status = store.get(published_key(prefix, name, rank), timeout_s, blob);
  if (status == RCC_ERR_TIMEOUT) {
    return fail(RCC_ERR_TIMEOUT, "rank %d did not publish its %s within %.0f s (it may have died during set-up)", rank,
                name.c_str(), timeout_s);
  }
  return status;
}

Status StoreExchange::publish(const std::string& name, const std::vector<uint8_t>& mine) {
  std::lock_guard<std::mutex> guard(mutex_);
  return store_.set(published_key(prefix_, name, rank_), mine);
}

Status StoreExchange::lookup(const std::string& name, int rank, double timeout_s, std::vector<uint8_t>* blob) {
  std::lock_guard<std::mutex> guard(mutex_);
  return lookup_published(store_, prefix_, name, rank, timeout_s, blob);
}

Status StoreRendezvous::publish(const std::string& name, const std::vector<uint8_t>& mine) {
  std::lock_guard<std::mutex> guard(store_mutex_);
  return store_->set(published_key(prefix_, name, rank_), mine);
}

Status StoreRendezvous::lookup(const std::string& name, int rank, double timeout_s, std::vector<uint8_t>* blob) {
  std::lock_guard<std::mutex> guard(store_mutex_);
  return lookup_published(*store_, prefix_, name, rank, timeout_s, blob);
}

StoreRendezvous::StoreRendezvous(std::unique_ptr<StoreServer> server, std::unique_ptr<StoreClient> store, int rank,
                                 int size, std::string prefix, bool lookups)
    : server_(std::move(server)),
      store_(std::move(store)),
      rank_(rank),
      size_(size),
      prefix_(std::move(prefix)),
      lookups_(lookups) {}

std::string StoreRendezvous::next_prefix() { return "rcc/comm" + std::to_string(g_generation.fetch_add(1)); }

StoreRendezvous::~StoreRendezvous() {
  store_.reset();  // a client of the server below: gone first
  server_.reset();
}

Status StoreRendezvous::allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                                  std::vector<std::vector<uint8_t>>* all) {
  std::lock_guard<std::mutex> guard(store_mutex_);
  return bootstrap::allgather(*store_, prefix_ + "/" + name, rank_, size_, mine, timeout_s, all);
}

std::string StoreRendezvous::describe() const { return store_->describe(); }

// Every rank announces it is leaving and waits for all others, progressing meanwhile. The rank
// hosting the store, if a rank does (it says so in its announcement), leaves last, so no one loses
// the store during the wait. Every key is consumable: a finished job leaves nothing in a store that
// outlives it (rccrun's, for jobs of many rcc_comm_init), unless a rank left without meeting (the
// keys it did not read stay).
Status StoreRendezvous::leave_together(double timeout_s, const std::function<void()>& progress,
                                       const std::function<bool(int rank)>& departed) {
  const Clock::time_point deadline = deadline_after(timeout_s);
  // progress() may look a peer up (a last message from a rank never heard from before): the lock
  // is taken around each use of the client, never across progress().
  std::unique_lock<std::mutex> lock(store_mutex_);
  if (size_ == 1) return lookups_ ? store_->delete_prefix(prefix_ + "/published/") : RCC_SUCCESS;
  const std::string prefix = prefix_ + "/leaving/";
  const bool hosting = server_ != nullptr;
  RCC_RETURN_IF_ERROR(store_->set_consumable(prefix + std::to_string(rank_),
                                             hosting ? std::vector<uint8_t>{1} : std::vector<uint8_t>{},
                                             static_cast<uint32_t>(size_ - 1)));
  bool a_rank_hosts = hosting;
  std::vector<bool> met(static_cast<size_t>(size_), false);
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    const std::string key = prefix + std::to_string(peer);
    bool arrived = false;
    for (;;) {
      // Read before the key: a rank announces before it says goodbye, so one gone with its key
      // still missing left without meeting (not waited for) and one that met is never skipped.
      const bool gone = departed(peer);
      std::vector<uint8_t> ignored;
      RCC_RETURN_IF_ERROR(store_->try_get(key, &arrived, &ignored));
      if (arrived || gone) break;
      if (Clock::now() > deadline) {
        return fail(RCC_ERR_TIMEOUT, "rank %d did not reach rcc_comm_destroy within %.0f s", peer, timeout_s);
      }
      lock.unlock();
      progress();
      // A store round trip per poll: no point polling faster than the wait policy's sleeps.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      lock.lock();
    }
    if (!arrived) continue;
    std::vector<uint8_t> announcement;  // read once more, counted: the key goes after the last reader
    RCC_RETURN_IF_ERROR(store_->get(key, timeout_s, &announcement));
    met[static_cast<size_t>(peer)] = true;
    a_rank_hosts = a_rank_hosts || (announcement.size() == 1 && announcement[0] == 1);
  }
  if (hosting) {
    // The store goes with this rank: it waits until every rank that met is done with it.
    for (int peer = 0; peer < size_; ++peer) {
      std::vector<uint8_t> ignored;
      if (peer != rank_ && met[static_cast<size_t>(peer)])
        RCC_RETURN_IF_ERROR(store_->get(prefix_ + "/left/" + std::to_string(peer), timeout_s, &ignored));
    }
    return RCC_SUCCESS;
  }
  if (a_rank_hosts) return store_->set_consumable(prefix_ + "/left/" + std::to_string(rank_), {}, 1);
  if (!lookups_) return RCC_SUCCESS;  // nothing was published
  // The store outlives the job (rccrun's, or the caller's): the blobs published for lookups go once
  // no rank can look anything up any more, that is once every rank that met is past its wait above.
  // Rank 0 hears from each and then tells all, so that no rank reads the store N times more.
  const std::string all_left = prefix_ + "/all-left";
  if (rank_ == 0) {
    uint32_t readers = 0;
    for (int peer = 1; peer < size_; ++peer) {
      if (!met[static_cast<size_t>(peer)]) continue;
      std::vector<uint8_t> ignored;
      RCC_RETURN_IF_ERROR(store_->get(prefix_ + "/left/" + std::to_string(peer), timeout_s, &ignored));
      ++readers;
    }
    if (readers > 0) RCC_RETURN_IF_ERROR(store_->set_consumable(all_left, {}, readers));
  } else if (met[0]) {
    RCC_RETURN_IF_ERROR(store_->set_consumable(prefix_ + "/left/" + std::to_string(rank_), {}, 1));
    for (;;) {
      bool done = false;
      std::vector<uint8_t> ignored;
      RCC_RETURN_IF_ERROR(store_->try_get(all_left, &done, &ignored));
      if (done) {
        RCC_RETURN_IF_ERROR(store_->get(all_left, timeout_s, &ignored));  // counted: the key goes after the last
        break;
      }
      if (departed(0)) return RCC_SUCCESS;  // rank 0 left without meeting: the keys stay
      if (Clock::now() > deadline) {
        return fail(RCC_ERR_TIMEOUT, "rank 0 did not finish rcc_comm_destroy within %.0f s", timeout_s);
      }
      lock.unlock();
      progress();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      lock.lock();
    }
  } else {
    return RCC_SUCCESS;  // rank 0 left without meeting: the keys stay
  }
  // Each rank removes what it published (a store that counts its keys removes only a client's own;
  // rcc's own store removes the job's published keys at the first of these calls).
  return store_->delete_prefix(prefix_ + "/published/");
}

}  // namespace rcc::bootstrap
