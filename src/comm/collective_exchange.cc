#include "comm/collective_exchange.h"

#include <numeric>

#include "collectives/execute.h"
#include "collectives/tuner.h"

namespace rcc {
namespace {

// One collective on comm's group through messages, with the cost model's choice (RCC_ALGO names
// what users' collectives do, not the library's own set-up).
Status run_on_messages(rcc_comm& comm, const collectives::Args& args, size_t bytes) {
  collectives::Context ctx = comm.next_collective();
  const collectives::AlgorithmRow& algorithm = collectives::model_choice(args.kind, bytes, comm.size, false);
  return collectives::execute(ctx, args, algorithm, false);
}

}  // namespace

Status CollectiveExchange::allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                                     std::vector<std::vector<uint8_t>>* all) {
  (void)timeout_s;  // the engine's waits are bounded by the same RCC_TIMEOUT
  const size_t size = static_cast<size_t>(comm_.size);
  const uint64_t my_bytes = mine.size();
  std::vector<uint64_t> lengths(size);
  Status status = run_on_messages(comm_,
                                  collectives::Args{.kind = collectives::Kind::kAllgather,
                                                    .sendbuf = &my_bytes,
                                                    .recvbuf = lengths.data(),
                                                    .count = 1,
                                                    .datatype = RCC_UINT64},
                                  sizeof my_bytes);
  std::vector<size_t> counts(lengths.begin(), lengths.end());
  std::vector<size_t> displacements(size, 0);
  if (status == RCC_SUCCESS) std::exclusive_scan(counts.begin(), counts.end(), displacements.begin(), size_t{0});
  const size_t total = size == 0 ? 0 : displacements.back() + counts.back();
  std::vector<uint8_t> gathered(total);
  if (status == RCC_SUCCESS) {
    status = run_on_messages(comm_,
                             collectives::Args{.kind = collectives::Kind::kAllgatherv,
                                               .sendbuf = mine.data(),
                                               .recvbuf = gathered.data(),
                                               .count = mine.size(),
                                               .datatype = RCC_UINT8,
                                               .recvcounts = counts.data(),
                                               .rdispls = displacements.data()},
                             total);
  }
  if (status != RCC_SUCCESS) {
    // Logged where it was decided; the message says what it was for.
    return fail_quietly(status, "setting up communicator %u (%s): %s", comm_.group->id(), name.c_str(),
                        last_error().c_str());
  }
  std::vector<std::vector<uint8_t>> result(size);
  for (size_t r = 0; r < size; ++r) {
    const auto begin = gathered.begin() + static_cast<std::ptrdiff_t>(displacements[r]);
    result[r].assign(begin, begin + static_cast<std::ptrdiff_t>(counts[r]));
  }
  *all = std::move(result);
  return RCC_SUCCESS;
}

}  // namespace rcc
