// rcc::SharedArray: memory from rcc_mem_alloc as a typed, move-only owner (rcc/rcc.hpp).
#pragma once

#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "rcc/detail/error.hpp"
#include "rcc/rcc.h"

namespace rcc {

// `size` elements of T (starting as zero bytes) in memory the ranks of a host reach in each other's
// address space (rcc_mem_alloc): an allreduce over such arrays on every rank moves the data once,
// straight between them. A contiguous range like std::vector, so every call that takes a buffer
// takes it: world.allreduce(gradients, rcc::Op::Sum).
template <class T>
class SharedArray {
  static_assert(std::is_trivially_copyable_v<T>, "rcc moves the elements as bytes");

 public:
  SharedArray() = default;
  explicit SharedArray(std::size_t size) {
    if (size > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
      detail::invalid_argument("rcc::SharedArray", "size is too large");
    }
    void* memory = nullptr;
    detail::check(rcc_mem_alloc(size * sizeof(T), &memory));
    if (memory != nullptr) std::memset(memory, 0, size * sizeof(T));  // as std::vector<T>(size) holds
    data_ = static_cast<T*>(memory);
    size_ = size;
  }
  SharedArray(SharedArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  SharedArray& operator=(SharedArray&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  SharedArray(const SharedArray&) = delete;
  SharedArray& operator=(const SharedArray&) = delete;
  ~SharedArray() { release(); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  void release() noexcept {
    if (data_ != nullptr) rcc_mem_free(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rcc
