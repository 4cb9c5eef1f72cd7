#include "collectives/execute.h"

#include "collectives/argument_check.h"

namespace rcc::collectives {
namespace {

constexpr uint32_t kCheckPhase = 0xfff0;  // algorithms use low phase numbers

}  // namespace

Status execute(Context& ctx, const Args& args, const AlgorithmRow& algorithm, bool check) {
  if (check) RCC_RETURN_IF_ERROR(check_arguments(ctx, args, kCheckPhase));
  // The vector collectives' counts differ between ranks: a rank with nothing of its own may still
  // have to serve the others.
  if (args.count == 0 && args.kind != Kind::kBarrier && !is_vector(args.kind)) return RCC_SUCCESS;
  // Shared-memory collectives may not wait for anyone (a broadcast root), so they would not notice
  // a failure by themselves.
  if (algorithm.needs == Needs::kSharedMemory) RCC_RETURN_IF_ERROR(ctx.shm().check_usable(kind_name(args.kind)));
  return algorithm.run(ctx, args);
}

}  // namespace rcc::collectives
