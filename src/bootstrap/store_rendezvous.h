// A job's rendezvous through a key/value store (store.h): rccrun's, the one a rank hosts, or one
// the caller hands in (rcc_comm_init_store). Its keys start with a prefix of its own, so that the
// jobs one store serves (many rcc_comm_init under one rccrun) never meet.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "bootstrap/exchange.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

// A published blob's key: prefix/published/name/rank.
std::string published_key(const std::string& prefix, const std::string& name, int rank);
// Waits for rank's published blob; RCC_ERR_TIMEOUT names the rank and what was looked up.
Status lookup_published(StoreClient& store, const std::string& prefix, const std::string& name, int rank,
                        double timeout_s, std::vector<uint8_t>* blob);

// An exchange through a store it does not own, under keys starting with prefix.
class StoreExchange final : public Exchange {
 public:
  StoreExchange(StoreClient& store, std::string prefix, int rank, int size)
      : store_(store), prefix_(std::move(prefix)), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                   std::vector<std::vector<uint8_t>>* all) override {
    std::lock_guard<std::mutex> guard(mutex_);
    return bootstrap::allgather(store_, prefix_ + "/" + name, rank_, size_, mine, timeout_s, all);
  }
  bool serves_lookups() const override { return true; }
  Status publish(const std::string& name, const std::vector<uint8_t>& mine) override;
  Status lookup(const std::string& name, int rank, double timeout_s, std::vector<uint8_t>* blob) override;

 private:
  std::mutex mutex_;  // lookups come from any thread; the client is one connection
  StoreClient& store_;
  std::string prefix_;
  int rank_;
  int size_;
};

class StoreRendezvous final : public Rendezvous {
 public:
  // server: set on the rank that hosts the store (it leaves last). Keys start with prefix.
  // lookups: whether blobs may be looked up after set-up (serves_lookups): not through a store the
  // caller shares with its own threads (rcc_comm_init_store: torch's store, used by torch's main
  // thread while rcc's engine would look a peer up), which rcc may use only inside its own calls.
  StoreRendezvous(std::unique_ptr<StoreServer> server, std::unique_ptr<StoreClient> store, int rank, int size,
                  std::string prefix, bool lookups = true);
  // A prefix numbering the rendezvous made by this process: the same on every rank as long as every
  // rank makes them in one order (as jobs do: one rcc_comm_init after the other).
  static std::string next_prefix();
  ~StoreRendezvous() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                   std::vector<std::vector<uint8_t>>* all) override;
  // Published blobs are plain keys, read any number of times; the rank hosting the store removes
  // them once every rank left (leave_together).
  bool serves_lookups() const override { return lookups_; }
  Status publish(const std::string& name, const std::vector<uint8_t>& mine) override;
  Status lookup(const std::string& name, int rank, double timeout_s, std::vector<uint8_t>* blob) override;
  std::string describe() const override;
  Status leave_together(double timeout_s, const std::function<void()>& progress,
                        const std::function<bool(int rank)>& departed) override;

 private:
  std::unique_ptr<StoreServer> server_;  // declared first: goes last
  std::unique_ptr<StoreClient> store_;
  // Lookups come from any thread (a rank's first message to a peer); the client is one connection,
  // so every use of it takes this lock (never while waiting for another rank).
  std::mutex store_mutex_;
  int rank_;
  int size_;
  std::string prefix_;
  bool lookups_;
};

}  // namespace rcc::bootstrap
