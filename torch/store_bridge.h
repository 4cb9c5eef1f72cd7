// torch's c10d::Store (the prefix store torch hands a process group's creator) as an rcc_store_t,
// for rcc_comm_init_store. It keeps the store alive: rcc meets the ranks through it once more when
// the world's communicator goes.
#pragma once

#include <rcc/rcc.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace rcc_torch {

class StoreBridge {
 public:
  explicit StoreBridge(c10::intrusive_ptr<c10d::Store> store);
  const rcc_store_t* callbacks() const { return &callbacks_; }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  rcc_store_t callbacks_{};
};

}  // namespace rcc_torch
