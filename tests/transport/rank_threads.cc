#include "rank_threads.h"

#include <algorithm>
#include <cstring>

#include "bootstrap/store_rendezvous.h"

namespace transport_test {

bool World::barrier(const std::function<void()>& progress) {
  int generation = generation_.load();
  if (arrived_.fetch_add(1) + 1 == size_) {
    arrived_ = 0;
    generation_.fetch_add(1);
    return !aborted_;
  }
  auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (generation_.load() == generation) {
    if (aborted_) return false;
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "barrier timed out";
      abort();
      return false;
    }
    if (progress) progress();
    std::this_thread::yield();
  }
  return !aborted_;
}

bool World::allgather(int rank, const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>* all,
                      const std::function<void()>& progress) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_[rank] = mine;
  }
  if (!barrier(progress)) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    *all = slots_;
  }
  return barrier(progress);  // nobody overwrites a slot before everyone copied it
}

bool Rank::connect(int max_notifies_per_peer) {
  rcc::transport::Options options;
  options.rank = rank_;
  options.size = size();
  options.max_notifies_per_peer = max_notifies_per_peer;
  rcc::Status status = rcc::transport::create_transport(options, &transport_);
  if (status != RCC_SUCCESS) {
    ADD_FAILURE() << "rank " << rank_ << ": create_transport: " << rcc_status_string(status) << ": "
                  << rcc::last_error();
    world_->abort();
    return false;
  }
  std::vector<uint8_t> blob;
  status = transport_->local_address(&blob);
  if (status != RCC_SUCCESS) {
    ADD_FAILURE() << "rank " << rank_ << ": local_address: " << rcc::last_error();
    world_->abort();
    return false;
  }
  std::vector<std::vector<uint8_t>> blobs;
  if (!allgather(blob, &blobs)) return false;
  status = transport_->connect_all(blobs);
  if (status != RCC_SUCCESS) {
    ADD_FAILURE() << "rank " << rank_ << ": connect_all: " << rcc_status_string(status) << ": " << rcc::last_error();
    world_->abort();
    return false;
  }
  return barrier();
}

bool Rank::barrier() {
  return world_->barrier([this] {
    if (transport_) poll_once();
  });
}

bool Rank::allgather(const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>* all) {
  return world_->allgather(rank_, mine, all, [this] {
    if (transport_) poll_once();
  });
}

bool Rank::share_region(size_t length, Region* region) {
  region->bytes.assign(length, 0);
  rcc::Status status = transport_->register_memory(region->bytes.data(), length, &region->memory);
  if (status != RCC_SUCCESS) {
    ADD_FAILURE() << "rank " << rank_ << ": register_memory(" << length << "): " << rcc::last_error();
    world_->abort();
    return false;
  }
  std::vector<uint8_t> key;
  if (transport_->pack_key(*region->memory, &key) != RCC_SUCCESS) {
    ADD_FAILURE() << "rank " << rank_ << ": pack_key: " << rcc::last_error();
    world_->abort();
    return false;
  }
  // Each blob: 8-byte base address then the key.
  auto base = reinterpret_cast<uintptr_t>(region->bytes.data());
  std::vector<uint8_t> mine(sizeof(uint64_t) + key.size());
  std::memcpy(mine.data(), &base, sizeof base);
  std::copy(key.begin(), key.end(), mine.begin() + sizeof(uint64_t));
  std::vector<std::vector<uint8_t>> all;
  if (!allgather(mine, &all)) return false;
  region->keys.resize(size());
  region->remote_base.resize(size());
  for (int peer = 0; peer < size(); ++peer) {
    std::memcpy(&region->remote_base[peer], all[peer].data(), sizeof(uint64_t));
    std::vector<uint8_t> peer_key(all[peer].begin() + sizeof(uint64_t), all[peer].end());
    if (transport_->import_key(peer, peer_key, &region->keys[peer]) != RCC_SUCCESS) {
      ADD_FAILURE() << "rank " << rank_ << ": import_key(" << peer << "): " << rcc::last_error();
      world_->abort();
      return false;
    }
  }
  return true;
}

void Rank::poll_once() {
  std::vector<Event> events;
  rcc::Status status = transport_->poll(&events);
  if (status != RCC_SUCCESS) {
    ADD_FAILURE() << "rank " << rank_ << ": poll: " << rcc::last_error();
    world_->abort();
    return;
  }
  for (Event& event : events) {
    switch (event.kind) {
      case EventKind::kNotify: notifies.push_back(event); break;
      case EventKind::kWriteDone: write_done_cookies.push_back(event.cookie); break;
      case EventKind::kError:
        if (!expect_errors) {
          ADD_FAILURE() << "rank " << rank_ << ": kError from peer " << event.peer << ": " << event.message;
          world_->abort();
        }
        errors.push_back(event);
        break;
    }
  }
}

bool Rank::progress_until(const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + kTimeout;
  for (;;) {
    poll_once();
    if (world_->aborted()) return false;
    if (done()) return true;
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "rank " << rank_ << ": timed out waiting for events (" << notifies.size() << " notifies, "
                    << write_done_cookies.size() << " write-dones pending)";
      world_->abort();
      return false;
    }
    if (transport_->wait_for_event(100) != RCC_SUCCESS) {
      ADD_FAILURE() << "rank " << rank_ << ": wait_for_event: " << rcc::last_error();
      world_->abort();
      return false;
    }
  }
}

void run_ranks(int size, const std::function<void(Rank&)>& body, bool connect_first, int max_notifies_per_peer) {
  World world(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      Rank rank(&world, r);
      if (connect_first && !rank.connect(max_notifies_per_peer)) return;
      body(rank);
      if (::testing::Test::HasFailure()) world.abort();  // do not leave the other ranks waiting
      // Keep every transport alive until all ranks are done writing into each other. No polling
      // here: a rank that leaves first tears its connections down, which the others would see
      // as errors (iWARP disconnects).
      world.barrier(nullptr);
    });
  }
  for (std::thread& t : threads) t.join();
}

bool LoopbackStore::start() {
  EXPECT_EQ(rcc::bootstrap::make_secret(&secret_), RCC_SUCCESS);
  EXPECT_EQ(rcc::bootstrap::StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret_, &server_), RCC_SUCCESS)
      << rcc::last_error();
  return server_ != nullptr;
}

std::unique_ptr<rcc::bootstrap::StoreClient> LoopbackStore::client() const {
  std::unique_ptr<rcc::bootstrap::StoreClient> store;
  EXPECT_EQ(rcc::bootstrap::StoreClient::connect(server_->address(), secret_, 60, &store), RCC_SUCCESS)
      << rcc::last_error();
  return store;
}

std::vector<EngineCreation> create_two_engines(std::unique_ptr<Transport> transports[2],
                                               const rcc::bootstrap::HostMap* hosts) {
  std::vector<EngineCreation> results(2);
  LoopbackStore store;
  if (!store.start()) return results;
  auto create = [&](int rank) {
    std::unique_ptr<rcc::bootstrap::StoreClient> client = store.client();
    if (client == nullptr) return;
    std::unique_ptr<rcc::p2p::Engine> engine;
    rcc::bootstrap::StoreExchange meet(*client, "mismatch", rank, 2);
    results[static_cast<size_t>(rank)].status =
        rcc::p2p::Engine::create(std::move(transports[rank]), meet, hosts, 60, &engine);
    results[static_cast<size_t>(rank)].message = rcc::last_error();
  };
  std::thread other(create, 1);
  create(0);
  other.join();
  return results;
}

}  // namespace transport_test
