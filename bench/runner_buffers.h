// What the runners of collectives.cc and vector_collectives.cc share: page-aligned buffers and the
// runner base with a send and a receive buffer.
#pragma once

#include <cstdlib>

#include "collectives.h"

namespace rccbench {

// Page-aligned buffer, as applications allocate for RDMA; from rcc_mem_alloc with --buffers rcc.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }
  // Where every Buffer allocates from: set once, before any allocates.
  static bool& from_rcc() {
    static bool rcc = false;
    return rcc;
  }
  rcc_status_t reserve(size_t bytes) {
    if (bytes <= capacity_) return RCC_SUCCESS;
    release();
    const size_t whole = (bytes + 4095) / 4096 * 4096;
    if (from_rcc()) {
      void* memory = nullptr;
      const rcc_status_t status = rcc_mem_alloc(whole, &memory);
      if (status != RCC_SUCCESS) return status;
      data_ = static_cast<unsigned char*>(memory);
    } else {
      data_ = static_cast<unsigned char*>(std::aligned_alloc(4096, whole));
    }
    if (data_ == nullptr) return RCC_ERR_NO_MEMORY;
    capacity_ = bytes;
    return RCC_SUCCESS;
  }
  unsigned char* get() const { return data_; }

 private:
  void release() {
    if (from_rcc()) {
      rcc_mem_free(data_);
    } else {
      std::free(data_);
    }
    data_ = nullptr;
    capacity_ = 0;
  }
  unsigned char* data_ = nullptr;
  size_t capacity_ = 0;
};

// Buffers in bytes for a shape: send and receive sides.
class TwoBufferRunner : public CollectiveRunner {
 public:
  using CollectiveRunner::CollectiveRunner;
  rcc_status_t reserve(const Shape& largest) override {
    rcc_status_t status = send_.reserve(send_bytes(largest));
    if (status == RCC_SUCCESS) status = recv_.reserve(recv_bytes(largest));
    return status;
  }

 protected:
  virtual size_t send_bytes(const Shape& shape) const = 0;
  virtual size_t recv_bytes(const Shape& shape) const = 0;
  unsigned char* block(unsigned char* base, const Shape& shape, int index) const {
    return base + static_cast<size_t>(index) * shape.block_count * element_bytes();
  }
  // The element at index `elements` of base.
  unsigned char* at(unsigned char* base, size_t elements) const { return base + elements * element_bytes(); }
  Buffer send_, recv_;
};

}  // namespace rccbench
