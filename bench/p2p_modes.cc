#include "p2p_modes.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "data.h"

namespace rccbench {
namespace {

constexpr int kPingTag = 11, kWindowTag = 12, kAckTag = 13;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#define RETURN_IF_FAILED(expr)                  \
  do {                                          \
    rcc_status_t status_ = (expr);              \
    if (status_ != RCC_SUCCESS) return status_; \
  } while (0)

// Waits for every request, even after a failure (so none is left in flight); the first error wins.
rcc_status_t wait_all(std::vector<rcc_request_t>& requests) {
  rcc_status_t first = RCC_SUCCESS;
  for (rcc_request_t request : requests) {
    rcc_status_t status = rcc_wait(request);
    if (first == RCC_SUCCESS) first = status;
  }
  requests.clear();
  return first;
}

}  // namespace

rcc_status_t measure_latency(const World& world, void* send, void* recv, size_t bytes, int iters, int warmup,
                             bool median, P2pMeasurement* out) {
  P2pMeasurement result;
  if (world.rank > 1) {
    *out = result;
    return RCC_SUCCESS;
  }
  fill_payload(send, bytes, RCC_UINT8, world.rank, 0);
  std::memset(recv, 0, bytes);
  const int peer = 1 - world.rank;
  double start = 0;
  std::vector<double> round_trips;
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) start = now_seconds();
    const double begin = now_seconds();
    if (world.rank == 0) {
      RETURN_IF_FAILED(rcc_send(world.comm, send, bytes, RCC_UINT8, peer, kPingTag));
      RETURN_IF_FAILED(rcc_recv(world.comm, recv, bytes, RCC_UINT8, peer, kPingTag));
    } else {
      RETURN_IF_FAILED(rcc_recv(world.comm, recv, bytes, RCC_UINT8, peer, kPingTag));
      RETURN_IF_FAILED(rcc_send(world.comm, send, bytes, RCC_UINT8, peer, kPingTag));
    }
    if (median && i >= warmup) round_trips.push_back(now_seconds() - begin);
  }
  result.value = (now_seconds() - start) * 1e6 / (2.0 * iters);
  if (median) {
    std::nth_element(round_trips.begin(), round_trips.begin() + static_cast<std::ptrdiff_t>(round_trips.size() / 2),
                     round_trips.end());
    result.value = round_trips[round_trips.size() / 2] * 1e6 / 2.0;
  }
  result.wrong = static_cast<long long>(count_wrong_payload(recv, bytes, RCC_UINT8, peer, 0));
  *out = result;
  return RCC_SUCCESS;
}

rcc_status_t measure_bandwidth(const World& world, void* send, void* recv, size_t bytes, int window, int iters,
                               int warmup, P2pMeasurement* out) {
  P2pMeasurement result;
  if (world.rank > 1) {
    *out = result;
    return RCC_SUCCESS;
  }
  fill_payload(send, bytes, RCC_UINT8, 0, 0);
  auto* slots = static_cast<unsigned char*>(recv);
  if (world.rank == 1) std::memset(slots, 0, bytes * window);
  std::vector<rcc_request_t> requests;
  requests.reserve(window);
  unsigned char ack = 0;
  double start = 0;
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) start = now_seconds();
    for (int w = 0; w < window; ++w) {
      rcc_request_t request = nullptr;
      // As OSU, the sends of a window share one buffer; each receive has its own.
      rcc_status_t status = world.rank == 0
                                ? rcc_isend(world.comm, send, bytes, RCC_UINT8, 1, kWindowTag, &request)
                                : rcc_irecv(world.comm, slots + w * bytes, bytes, RCC_UINT8, 0, kWindowTag, &request);
      if (status != RCC_SUCCESS) {
        wait_all(requests);
        return status;
      }
      requests.push_back(request);
    }
    RETURN_IF_FAILED(wait_all(requests));
    if (world.rank == 0)
      RETURN_IF_FAILED(rcc_recv(world.comm, &ack, 1, RCC_UINT8, 1, kAckTag));
    else
      RETURN_IF_FAILED(rcc_send(world.comm, &ack, 1, RCC_UINT8, 0, kAckTag));
  }
  const double seconds = now_seconds() - start;
  result.value = world.rank == 0 ? static_cast<double>(bytes) * window * iters / seconds / 1e6 : 0;
  if (world.rank == 1) {
    for (int w = 0; w < window; ++w) {
      result.wrong += static_cast<long long>(count_wrong_payload(slots + w * bytes, bytes, RCC_UINT8, 0, 0));
    }
  }
  *out = result;
  return RCC_SUCCESS;
}

}  // namespace rccbench
