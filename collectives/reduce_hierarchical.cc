// Reduce in levels (docs/hierarchy.md): each host reduces its ranks' data into one slice per
// channel through its segment, local rank c reduces slice c onto rank c of the root's host, and
// that host hands the slices to the root through its segment. A small reduce has one carrier
// (local rank 0: carriers_for).
#include "collectives/algorithms.h"
#include "collectives/cost_model.h"
#include "collectives/levels.h"

namespace rcc::collectives {

namespace {

// One carrier per host up to 8 KiB (carriers_for). At 10 Gbit/s one carrier against every channel:
// 2 x 2 8-512 B 12-18 against 15-22 us, 2-8 KiB even, 32 KiB slower (35-66 against 35 us); 2 x 4
// 8 B-8 KiB 18-29 against 25-43 us, 32 KiB even.
constexpr size_t kOneCarrierBytes = size_t{8} << 10;

Status reduce_hierarchical(Context& ctx, const Args& args) {
  Levels& levels = ctx.levels();
  const size_t element = rcc_datatype_size(args.datatype);
  const rcc_op_t op = kernel_op(args.op);
  const bool is_root = ctx.rank() == args.root;
  const int root_host = levels.host_of[static_cast<size_t>(args.root)];
  auto* slices = static_cast<uint8_t*>(args.recvbuf);
  if (!is_root) RCC_RETURN_IF_ERROR(level_scratch(0, args.count * element, &slices));
  const int carriers = carriers_for(args.count * element, kOneCarrierBytes, levels);
  RCC_RETURN_IF_ERROR(
      host_reduce_to_carriers(ctx, carriers, args.sendbuf, slices, args.count, args.datatype, op, "reduce"));
  const int channel = levels.host.rank;
  if (channel < carriers) {
    const Slice slice = channel_slice(args.count, carriers, channel);
    void* data = slices + slice.begin * element;
    RCC_RETURN_IF_ERROR(run_on_cross(ctx, Args{.kind = Kind::kReduce,
                                               .sendbuf = data,
                                               .recvbuf = data,
                                               .count = slice.count,
                                               .datatype = args.datatype,
                                               .op = op,
                                               .root = root_host}));
  }
  if (levels.my_host == root_host) {
    const int reader = levels.local_of[static_cast<size_t>(args.root)];
    RCC_RETURN_IF_ERROR(host_share_carriers(ctx, carriers, slices, args.count, element, reader, "reduce"));
  }
  if (is_root && args.op == RCC_AVG) scale_divide(args.recvbuf, args.count, args.datatype, ctx.size());
  return RCC_SUCCESS;
}

double reduce_hierarchical_cost(size_t bytes, const Levels& levels) {
  const int most = most_ranks_per_host(levels);
  return 2 * host_pass_cost(bytes, most) + static_cast<double>(bytes) / cost::kReduceRate +
         cross_cost(Kind::kReduce, bytes, levels.hosts);
}

}  // namespace

extern const AlgorithmRow kReduceHierarchical;
const AlgorithmRow kReduceHierarchical{Kind::kReduce,  "hierarchical",          "hier", reduce_hierarchical, nullptr,
                                       Needs::kLevels, reduce_hierarchical_cost};

}  // namespace rcc::collectives
