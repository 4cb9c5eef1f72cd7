#include "collectives/levels.h"

#include <algorithm>
#include <cstring>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/tuner.h"

namespace rcc::collectives {
namespace {

// The part [*lo, *hi) of channel c's slice (in bytes) inside the chunk [base, base + length).
bool slice_in_chunk(size_t count, size_t element, int channels, int c, size_t base, size_t length, size_t* lo,
                    size_t* hi) {
  *lo = std::max(channel_begin(count, channels, c) * element, base);
  *hi = std::min(channel_end(count, channels, c) * element, base + length);
  return *lo < *hi;
}

// Bytes a step moves: the slot, less what does not make a whole element.
size_t chunk_bytes(const shm::Segment& segment, size_t element) {
  return segment.slot_bytes() - segment.slot_bytes() % element;
}

}  // namespace

Status host_reduce_to_carriers(Context& ctx, int carriers, const void* send, void* out, size_t count,
                               rcc_datatype_t datatype, rcc_op_t op, const char* what) {
  Context host = ctx.host_level();
  const size_t element = rcc_datatype_size(datatype);
  const size_t bytes = count * element;
  if (host.size() == 1) {  // a host of one rank: the smallest, so one channel, the whole buffer
    if (out != send) std::memmove(out, send, bytes);
    return RCC_SUCCESS;
  }
  shm::Segment& segment = host.shm();
  RCC_RETURN_IF_ERROR(segment.check_usable(what));
  const Args reduce_args{.kind = Kind::kReduce, .datatype = datatype, .op = op};
  const int me = host.rank();
  std::vector<const uint8_t*>& inputs = shm_input_list(host.size());
  const size_t chunk = chunk_bytes(segment, element);
  const auto* from = static_cast<const uint8_t*>(send);
  auto* to = static_cast<uint8_t*>(out);
  for (size_t base = 0; base < bytes; base += chunk) {
    const size_t length = std::min(chunk, bytes - base);
    RCC_RETURN_IF_ERROR(segment.begin(what));
    const uint64_t step = segment.next_step();
    // Every rank's whole chunk (its own too, so that out may alias send).
    std::memcpy(segment.slot(me, step), from + base, length);
    RCC_RETURN_IF_ERROR(segment.step(what));
    size_t lo = 0, hi = 0;
    if (me < carriers && slice_in_chunk(count, element, carriers, me, base, length, &lo, &hi)) {
      for (int q = 0; q < host.size(); ++q) inputs[static_cast<size_t>(q)] = segment.slot(q, step) + (lo - base);
      shm_reduce_in_order(to + lo, inputs.data(), host.size(), (hi - lo) / element, reduce_args);
    }
  }
  return RCC_SUCCESS;
}

namespace {

// host_share_*'s loop; range(c, &lo, &hi) gives channel c's bytes of buf (no allocation per call:
// an allreduce runs this on every call).
template <typename Range>
Status share(Context& ctx, int channels, void* buf, size_t bytes, Range range, int reader, const char* what) {
  Context host = ctx.host_level();
  if (host.size() == 1) return RCC_SUCCESS;  // one rank: it holds the only slice
  shm::Segment& segment = host.shm();
  RCC_RETURN_IF_ERROR(segment.check_usable(what));
  const int me = host.rank();
  const size_t chunk = segment.slot_bytes();  // whole slots: ranges need not be whole elements
  auto* data = static_cast<uint8_t*>(buf);
  // The part [*lo, *hi) of channel c's range inside the chunk [base, base + length).
  auto part = [&](int c, size_t base, size_t length, size_t* lo, size_t* hi) {
    range(c, lo, hi);
    *lo = std::max(*lo, base);
    *hi = std::min(*hi, base + length);
    return *lo < *hi;
  };
  for (size_t base = 0; base < bytes; base += chunk) {
    const size_t length = std::min(chunk, bytes - base);
    RCC_RETURN_IF_ERROR(segment.begin(what));
    const uint64_t step = segment.next_step();
    size_t lo = 0, hi = 0;
    if (me < channels && part(me, base, length, &lo, &hi)) {
      std::memcpy(segment.slot(me, step) + (lo - base), data + lo, hi - lo);
    }
    RCC_RETURN_IF_ERROR(segment.step(what));
    if (reader >= 0 && me != reader) continue;
    for (int c = 0; c < channels; ++c) {
      if (c != me && part(c, base, length, &lo, &hi))
        std::memcpy(data + lo, segment.slot(c, step) + (lo - base), hi - lo);
    }
  }
  return RCC_SUCCESS;
}

}  // namespace

Status host_share_carriers(Context& ctx, int carriers, void* buf, size_t count, size_t element, int reader,
                           const char* what) {
  auto range = [&](int c, size_t* lo, size_t* hi) {
    *lo = channel_begin(count, carriers, c) * element;
    *hi = channel_end(count, carriers, c) * element;
  };
  return share(ctx, carriers, buf, count * element, range, reader, what);
}

Status host_share_ranges(Context& ctx, void* buf, size_t bytes, const std::vector<std::pair<size_t, size_t>>& ranges,
                         int reader, const char* what) {
  auto range = [&](int c, size_t* lo, size_t* hi) {
    *lo = ranges[static_cast<size_t>(c)].first;
    *hi = ranges[static_cast<size_t>(c)].second;
  };
  return share(ctx, static_cast<int>(ranges.size()), buf, bytes, range, reader, what);
}

Status run_on_host(Context& ctx, const Args& args, const AlgorithmRow& row) {
  Context host = ctx.host_level();
  // A host of one rank has nothing to meet or broadcast (and may have no segment).
  if (host.size() == 1 && (args.kind == Kind::kBarrier || args.kind == Kind::kBroadcast)) return RCC_SUCCESS;
  if (row.needs == Needs::kSharedMemory) RCC_RETURN_IF_ERROR(host.shm().check_usable(kind_name(args.kind)));
  return row.run(host, args);
}

Status level_scratch(int slot, size_t bytes, uint8_t** out) {
  thread_local std::vector<uint8_t> buffers[kLevelScratchSlots];
  std::vector<uint8_t>& buffer = buffers[slot];
  try {
    if (buffer.size() < bytes) buffer.resize(bytes);
  } catch (const std::bad_alloc&) {
    return fail(RCC_ERR_NO_MEMORY, "no memory for %zu bytes of scratch between levels", bytes);
  }
  *out = buffer.data();
  return RCC_SUCCESS;
}

Status run_on_cross(Context& ctx, const Args& args) {
  Context cross = ctx.cross_level();
  if (cross.size() == 1 || (args.count == 0 && args.kind != Kind::kBarrier)) return RCC_SUCCESS;
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  return model_choice(args.kind, bytes, cross.size(), false).run(cross, args);
}

double cross_cost(Kind kind, size_t bytes, int hosts) {
  return estimate_seconds(model_choice(kind, bytes, hosts, false), bytes, hosts);
}

double host_pass_cost(size_t bytes, int ranks) {
  if (ranks <= 1) return 0.0;
  const cost::Rates& rates = cost::rates();
  const double steps = std::max(1.0, std::ceil(static_cast<double>(bytes) / static_cast<double>(512 * 1024)));
  return steps * rates.shm_alpha + 2.0 * static_cast<double>(bytes) / rates.shm_bandwidth;
}

}  // namespace rcc::collectives
