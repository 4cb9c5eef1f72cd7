// Ring building blocks: reduce-scatter and allgather over uneven blocks, pipelined in segments.
#include <cstring>

#include "collectives/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace rcc::collectives {

Status ring_reduce_scatter(Context& ctx, const void* send, void* own_out, const BlockLayout& layout,
                           rcc_datatype_t datatype, rcc_op_t op, uint32_t phase) {
  const int ranks = ctx.size(), rank = ctx.rank();
  const size_t element = rcc_datatype_size(datatype);
  if (ranks == 1) {
    const uint8_t* own = at(send, layout.offset(0), element);
    if (own != own_out) std::memmove(own_out, own, layout.count(0) * element);
    return RCC_SUCCESS;
  }
  const int next = mod(rank + 1, ranks), prev = mod(rank - 1, ranks), tag = ctx.tag(phase);
  const size_t block_bytes = layout.max_count() * element;
  // Every rank derives the same segment count from the layout, so segment boundaries agree.
  const size_t segments = segment_count(block_bytes);
  uint8_t* incoming = nullptr;  // two halves: step s+1's receives are posted while step s is reduced
  uint8_t* partial = nullptr;   // two halves: a step's outgoing partial while the next is computed
  RCC_RETURN_IF_ERROR(scratch(0, 2 * block_bytes, &incoming));
  RCC_RETURN_IF_ERROR(scratch(1, 2 * block_bytes, &partial));
  const rcc_op_t reduce_op = kernel_op(op);

  RequestSet sends_from_input(ctx.engine(), kSendWindow);
  RequestSet sends_from_partial[2] = {RequestSet(ctx.engine(), kSendWindow), RequestSet(ctx.engine(), kSendWindow)};
  RequestSet receives(ctx.engine());
  std::vector<size_t> receive_index(2 * segments);
  auto for_each_segment = [&](int block, auto&& fn) -> Status {
    const size_t n = layout.count(block);
    for (size_t j = 0; j < segments; ++j) {
      size_t begin, end;
      segment_range(n, segments, j, &begin, &end);
      if (begin != end) RCC_RETURN_IF_ERROR(fn(j, begin * element, (end - begin) * element));
    }
    return RCC_SUCCESS;
  };
  // Step s: send block r-s-1 (own data at step 0, else the partial received at step s-1) and
  // receive block r-s-2, adding this rank's own contribution. At the last step that block is r.
  auto post_receives = [&](int step) {
    uint8_t* half = incoming + (step % 2) * block_bytes;
    return for_each_segment(mod(rank - step - 2, ranks), [&](size_t j, size_t offset, size_t bytes) {
      return ctx.post_recv(receives, half + offset, bytes, prev, tag, &receive_index[(step % 2) * segments + j]);
    });
  };
  // Receives are always posted a step ahead of the sends that wait for them: a send may wait for
  // its window, and the peer's sends wait for our receives.
  RCC_RETURN_IF_ERROR(post_receives(0));
  const int first = mod(rank - 1, ranks);
  const uint8_t* first_data = at(send, layout.offset(first), element);
  RCC_RETURN_IF_ERROR(for_each_segment(first, [&](size_t, size_t offset, size_t bytes) {
    return ctx.post_send(sends_from_input, first_data + offset, bytes, next, tag);
  }));
  for (int step = 0; step < ranks - 1; ++step) {
    const int block = mod(rank - step - 2, ranks);
    const bool last = step == ranks - 2;
    if (!last) RCC_RETURN_IF_ERROR(post_receives(step + 1));
    uint8_t* out = last ? static_cast<uint8_t*>(own_out) : partial + (step % 2) * block_bytes;
    RequestSet& out_sends = sends_from_partial[step % 2];
    if (!last) RCC_RETURN_IF_ERROR(out_sends.wait_all());  // sent two steps ago from this half
    const uint8_t* own = at(send, layout.offset(block), element);
    const uint8_t* half = incoming + (step % 2) * block_bytes;
    RCC_RETURN_IF_ERROR(for_each_segment(block, [&](size_t j, size_t offset, size_t bytes) -> Status {
      RCC_RETURN_IF_ERROR(receives.wait(receive_index[(step % 2) * segments + j]));
      reduce(out + offset, own + offset, half + offset, bytes / element, datatype, reduce_op);
      if (last) return RCC_SUCCESS;
      return ctx.post_send(out_sends, out + offset, bytes, next, tag);
    }));
  }
  RCC_RETURN_IF_ERROR(sends_from_input.wait_all());
  RCC_RETURN_IF_ERROR(sends_from_partial[0].wait_all());
  return sends_from_partial[1].wait_all();
}

Status ring_allgather(Context& ctx, void* buf, const BlockLayout& layout, size_t element_bytes, uint32_t phase) {
  const int ranks = ctx.size(), rank = ctx.rank();
  if (ranks == 1) return RCC_SUCCESS;
  const int next = mod(rank + 1, ranks), prev = mod(rank - 1, ranks), tag = ctx.tag(phase);
  const size_t segments = segment_count(layout.max_count() * element_bytes);
  auto segment = [&](int block, size_t j, uint8_t** base, size_t* bytes) {
    size_t begin, end;
    segment_range(layout.count(block), segments, j, &begin, &end);
    *base = at(buf, layout.offset(block) + begin, element_bytes);
    *bytes = (end - begin) * element_bytes;
  };

  // Step s receives block r-s-1 from prev and forwards it at step s+1.
  RequestSet receives(ctx.engine()), sends(ctx.engine(), kSendWindow);
  std::vector<size_t> receive_index(static_cast<size_t>(ranks - 1) * segments, SIZE_MAX);
  for (int step = 0; step < ranks - 1; ++step) {
    const int block = mod(rank - step - 1, ranks);
    for (size_t j = 0; j < segments; ++j) {
      uint8_t* base;
      size_t bytes;
      segment(block, j, &base, &bytes);
      if (bytes == 0) continue;
      RCC_RETURN_IF_ERROR(ctx.post_recv(receives, base, bytes, prev, tag, &receive_index[step * segments + j]));
    }
  }
  for (int step = 0; step < ranks - 1; ++step) {
    const int block = mod(rank - step, ranks);  // own block at step 0, then the one received at step-1
    for (size_t j = 0; j < segments; ++j) {
      uint8_t* base;
      size_t bytes;
      segment(block, j, &base, &bytes);
      if (bytes == 0) continue;
      if (step > 0) RCC_RETURN_IF_ERROR(receives.wait(receive_index[(step - 1) * segments + j]));
      RCC_RETURN_IF_ERROR(ctx.post_send(sends, base, bytes, next, tag));
    }
  }
  RCC_RETURN_IF_ERROR(receives.wait_all());
  return sends.wait_all();
}

}  // namespace rcc::collectives
