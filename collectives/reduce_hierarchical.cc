// Reduce in levels (docs/hierarchy.md): each host reduces its ranks' data into one slice per
// channel through its segment, local rank c reduces slice c onto rank c of the root's host, and
// that host hands the slices to the root through its segment.
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

// A whole-buffer scratch of this thread's, apart from scratch()'s slots (the cross level's
// algorithm may use those while this one holds its slices).
Status slices_buffer(size_t bytes, void** out) {
  thread_local std::vector<uint64_t> buffer;
  const size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  try {
    if (buffer.size() < words) buffer.resize(words);
  } catch (const std::bad_alloc&) {
    return fail(RCC_ERR_NO_MEMORY, "reduce: no memory for %zu bytes of slices", bytes);
  }
  *out = buffer.data();
  return RCC_SUCCESS;
}

Status reduce_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const rcc_op_t op = kernel_op(args.op);
  const bool is_root = ctx.rank() == args.root;
  const int root_host = levels.host_of[static_cast<size_t>(args.root)];
  void* slices = args.recvbuf;
  if (!is_root) RCC_RETURN_IF_ERROR(slices_buffer(args.count * element, &slices));
  RCC_RETURN_IF_ERROR(host_reduce_to_channels(ctx, args.sendbuf, slices, args.count, args.datatype, op, "reduce"));
  const int channel = levels.host.rank;
  if (channel < levels.channels) {
    const size_t begin = channel_begin(args.count, levels.channels, channel);
    void* slice = at(slices, begin, element);
    RCC_RETURN_IF_ERROR(run_on_cross(ctx, Args{.kind = Kind::kReduce,
                                               .sendbuf = slice,
                                               .recvbuf = slice,
                                               .count = channel_end(args.count, levels.channels, channel) - begin,
                                               .datatype = args.datatype,
                                               .op = op,
                                               .root = root_host}));
  }
  if (levels.my_host == root_host) {
    const int reader = levels.local_of[static_cast<size_t>(args.root)];
    RCC_RETURN_IF_ERROR(host_share_channels(ctx, slices, args.count, element, reader, "reduce"));
  }
  if (is_root && args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

double reduce_hierarchical_cost(size_t bytes, const Levels& levels) {
  const int most = *std::max_element(levels.host_sizes.begin(), levels.host_sizes.end());
  return 2 * host_pass_cost(bytes, most) + static_cast<double>(bytes) / cost::kReduceRate +
         cross_cost(Kind::kReduce, bytes, levels.hosts);
}

}  // namespace

extern const AlgorithmRow kReduceHierarchical;
const AlgorithmRow kReduceHierarchical{Kind::kReduce,  "hierarchical",          "hier", reduce_hierarchical, nullptr,
                                       Needs::kLevels, reduce_hierarchical_cost};

}  // namespace rcc::collectives
