// A job's rendezvous through a key/value store (store.h): rccrun's, the one a rank hosts, or one
// the caller hands in (rcc_comm_init_store). Its keys start with a prefix of its own, so that the
// jobs one store serves (many rcc_comm_init under one rccrun) never meet.
#pragma once

#include <memory>
#include <string>

#include "bootstrap/exchange.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

// An exchange through a store it does not own, under keys starting with prefix.
class StoreExchange final : public Exchange {
 public:
  StoreExchange(StoreClient& store, std::string prefix, int rank, int size)
      : store_(store), prefix_(std::move(prefix)), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                   std::vector<std::vector<uint8_t>>* all) override {
    return bootstrap::allgather(store_, prefix_ + "/" + name, rank_, size_, mine, timeout_s, all);
  }

 private:
  StoreClient& store_;
  std::string prefix_;
  int rank_;
  int size_;
};

class StoreRendezvous final : public Rendezvous {
 public:
  // server: set on the rank that hosts the store (it leaves last). Keys start with prefix.
  StoreRendezvous(std::unique_ptr<StoreServer> server, std::unique_ptr<StoreClient> store, int rank, int size,
                  std::string prefix);
  // A prefix numbering the rendezvous made by this process: the same on every rank as long as every
  // rank makes them in one order (as jobs do: one rcc_comm_init after the other).
  static std::string next_prefix();
  ~StoreRendezvous() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                   std::vector<std::vector<uint8_t>>* all) override;
  std::string describe() const override;
  Status leave_together(double timeout_s, const std::function<void()>& progress,
                        const std::function<bool(int rank)>& departed) override;

 private:
  std::unique_ptr<StoreServer> server_;  // declared first: goes last
  std::unique_ptr<StoreClient> store_;
  int rank_;
  int size_;
  std::string prefix_;
};

}  // namespace rcc::bootstrap
