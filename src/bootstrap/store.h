// The rendezvous: a TCP key/value store (set, get-with-wait) that ranks use to exchange transport
// addresses. One process hosts the server (rccrun, rank 0, or the rank that made a unique id);
// every rank holds one client connection. Every connection first presents the job's secret; a wrong
// or missing secret is refused and logged, and never disturbs the job. Lengths are bounded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace rcc::bootstrap {

constexpr size_t kMaxKeyBytes = 256;
constexpr size_t kMaxValueBytes = 64u << 20;

// A random secret of 32 hex characters from /dev/urandom.
Status make_secret(std::string* secret);

class StoreServer {
 public:
  // Listens on bind_host:port (port 0: any free port) and serves clients from a background thread
  // until destroyed. address() is the host:port clients should dial (advertise_host:port).
  static Status start(const std::string& bind_host, int port, const std::string& advertise_host,
                      const std::string& secret, std::unique_ptr<StoreServer>* out);
  virtual ~StoreServer() = default;
  virtual std::string address() const = 0;
  virtual int port() const = 0;
};

class StoreClient {
 public:
  // Dials address ("host:port"), retrying until timeout_s (the server may start later).
  static Status connect(const std::string& address, const std::string& secret, double timeout_s,
                        std::unique_ptr<StoreClient>* out);
  // One attempt: dial, present the secret (RCC_ERR_BOOTSTRAP when nothing listens or the server
  // refuses the secret).
  static Status connect_once(const std::string& address, const std::string& secret, double timeout_s,
                             std::unique_ptr<StoreClient>* out);
  virtual ~StoreClient() = default;
  // What it is, for messages ("the store at host:port").
  virtual std::string describe() const = 0;
  virtual Status set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  // Waits until key is set or timeout_s passes (RCC_ERR_TIMEOUT).
  virtual Status get(const std::string& key, double timeout_s, std::vector<uint8_t>* value) = 0;
  // Non-blocking: *found = false when the key is not set yet.
  virtual Status try_get(const std::string& key, bool* found, std::vector<uint8_t>* value) = 0;
  // Removes every key that starts with prefix (none: not an error). Only once no rank will read
  // them any more: a get of a removed key waits for the next set.
  virtual Status delete_prefix(const std::string& prefix) = 0;
  // Sets a key that the store removes once `reads` gets have returned it (try_get does not count):
  // what an exchange whose readers are known writes, so that finished exchanges leave nothing
  // behind. A store that cannot count keeps the key (the default).
  virtual Status set_consumable(const std::string& key, const std::vector<uint8_t>& value, uint32_t reads) {
    (void)reads;
    return set(key, value);
  }
};

// Every rank contributes one blob under prefix; on success all[r] is rank r's blob. A rank that does
// not arrive within timeout_s gives RCC_ERR_TIMEOUT with a message naming the missing ranks. Each
// blob is a consumable key read by the other size - 1 ranks: once all have it, it is gone.
Status allgather(StoreClient& store, const std::string& prefix, int rank, int size, const std::vector<uint8_t>& mine,
                 double timeout_s, std::vector<std::vector<uint8_t>>* all);

// All ranks arrive before any leaves (an allgather of nothing).
Status barrier(StoreClient& store, const std::string& prefix, int rank, int size, double timeout_s);

}  // namespace rcc::bootstrap
