// Tree building blocks: binomial reduce and binomial/chain broadcast, pipelined in segments.
#include <cstring>

#include "collectives/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {
namespace {

// Binomial tree relative to root: a rank's parent clears its lowest set bit; its children add
// the powers of two below that bit. Children are listed smallest subtree first.
void binomial_links(int rank, int ranks, int root, int* parent, std::vector<int>* children) {
  const int relative = mod(rank - root, ranks);
  *parent = -1;
  children->clear();
  for (int mask = 1; mask < ranks; mask <<= 1) {
    if (relative & mask) {
      *parent = mod(relative - mask + root, ranks);
      return;
    }
    if (relative + mask < ranks) children->push_back(mod(relative + mask + root, ranks));
  }
}

}  // namespace

Status tree_reduce(Context& ctx, const void* send, void* result, size_t count, rcc_datatype_t datatype, rcc_op_t op,
                   int root, uint32_t phase) {
  const size_t element = rcc_datatype_size(datatype), bytes = count * element;
  const int tag = ctx.tag(phase);
  int parent;
  std::vector<int> children;
  binomial_links(ctx.rank(), ctx.size(), root, &parent, &children);
  const size_t segments = segment_count(bytes);
  RequestSet sends(ctx.engine(), kSendWindow);
  if (children.empty()) {
    if (parent < 0) {  // a single rank
      if (result != send) std::memmove(result, send, bytes);
      return RCC_SUCCESS;
    }
    for (size_t j = 0; j < segments; ++j) {
      size_t begin, end;
      segment_range(count, segments, j, &begin, &end);
      RCC_RETURN_IF_ERROR(ctx.post_send(sends, at(send, begin, element), (end - begin) * element, parent, tag));
    }
    return sends.wait_all();
  }

  uint8_t* accumulator = static_cast<uint8_t*>(result);
  if (accumulator == nullptr) RCC_RETURN_IF_ERROR(scratch(1, bytes, &accumulator));
  // Incoming segments, double buffered: segment j+1 arrives while segment j is reduced.
  const size_t segment_bytes = (count / segments + 1) * element;
  const size_t half = segment_bytes * children.size();
  uint8_t* incoming = nullptr;
  RCC_RETURN_IF_ERROR(scratch(0, 2 * half, &incoming));
  RequestSet receives(ctx.engine());
  std::vector<size_t> receive_index(2 * children.size());
  auto post_receives = [&](size_t j) -> Status {
    size_t begin, end;
    segment_range(count, segments, j, &begin, &end);
    for (size_t c = 0; c < children.size(); ++c) {
      p2p::Request* request = nullptr;
      uint8_t* into = incoming + (j % 2) * half + c * segment_bytes;
      RCC_RETURN_IF_ERROR(ctx.irecv(into, (end - begin) * element, children[c], tag, &request));
      receive_index[(j % 2) * children.size() + c] = receives.add(request);
    }
    return RCC_SUCCESS;
  };

  const rcc_op_t reduce_op = kernel_op(op);
  RCC_RETURN_IF_ERROR(post_receives(0));
  for (size_t j = 0; j < segments; ++j) {
    if (j + 1 < segments) RCC_RETURN_IF_ERROR(post_receives(j + 1));
    size_t begin, end;
    segment_range(count, segments, j, &begin, &end);
    uint8_t* out = accumulator + begin * element;
    // Fixed order (own, then children by subtree size): the root computes each element once.
    for (size_t c = 0; c < children.size(); ++c) {
      RCC_RETURN_IF_ERROR(receives.wait(receive_index[(j % 2) * children.size() + c]));
      const uint8_t* left = c == 0 ? at(send, begin, element) : out;
      reduce(out, left, incoming + (j % 2) * half + c * segment_bytes, end - begin, datatype, reduce_op);
    }
    if (parent >= 0) {
      RCC_RETURN_IF_ERROR(ctx.post_send(sends, out, (end - begin) * element, parent, tag));
    }
  }
  return sends.wait_all();
}

Status tree_broadcast(Context& ctx, void* buf, size_t bytes, int root, bool chain, uint32_t phase) {
  const int ranks = ctx.size(), tag = ctx.tag(phase);
  int parent;
  std::vector<int> children;
  if (chain) {
    const int relative = mod(ctx.rank() - root, ranks);
    parent = relative == 0 ? -1 : mod(ctx.rank() - 1, ranks);
    if (relative + 1 < ranks) children.push_back(mod(ctx.rank() + 1, ranks));
  } else {
    binomial_links(ctx.rank(), ctx.size(), root, &parent, &children);
    // Largest subtree first: it has the longest way to go.
    std::vector<int> reversed(children.rbegin(), children.rend());
    children.swap(reversed);
  }
  const size_t segments = segment_count(bytes);
  auto segment = [&](size_t j, uint8_t** base, size_t* length) {
    size_t begin, end;
    segment_range(bytes, segments, j, &begin, &end);
    *base = static_cast<uint8_t*>(buf) + begin;
    *length = end - begin;
  };
  RequestSet receives(ctx.engine()), sends(ctx.engine(), kSendWindow);
  if (parent >= 0) {
    for (size_t j = 0; j < segments; ++j) {
      uint8_t* base;
      size_t length;
      segment(j, &base, &length);
      RCC_RETURN_IF_ERROR(ctx.post_recv(receives, base, length, parent, tag));
    }
  }
  for (size_t j = 0; j < segments; ++j) {
    uint8_t* base;
    size_t length;
    segment(j, &base, &length);
    if (parent >= 0) RCC_RETURN_IF_ERROR(receives.wait(j));
    for (int child : children) {
      RCC_RETURN_IF_ERROR(ctx.post_send(sends, base, length, child, tag));
    }
  }
  return sends.wait_all();
}

}  // namespace rcc::collectives
