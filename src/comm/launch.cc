#include "comm/launch.h"

#include "collectives/argument_check.h"
#include "collectives/execute.h"
#include "collectives/tuner.h"

namespace rcc {
namespace {

Status run(rcc_comm* comm, const collectives::Args& args, const collectives::AlgorithmRow& algorithm, bool check) {
  if (comm->aborted.load())
    return fail(RCC_ERR_ABORTED, "%s: the communicator was aborted", collectives::kind_name(args.kind));
  collectives::Context ctx = comm->next_collective();
  return collectives::execute(ctx, args, algorithm, check);
}

}  // namespace

Status launch_collective(rcc_comm* comm, const collectives::Args& args, rcc_request_t* request) {
  const size_t bytes = args.count * rcc_datatype_size(args.datatype);
  const collectives::AlgorithmRow* algorithm = nullptr;
  RCC_RETURN_IF_ERROR(collectives::choose_algorithm(args.kind, bytes, comm->size, comm->shm != nullptr, &algorithm));
  bool check = false;
  RCC_RETURN_IF_ERROR(collectives::argument_check_enabled(&check));
  if (request == nullptr) {
    return comm->executor->run_now([&] { return run(comm, args, *algorithm, check); });
  }
  std::shared_ptr<Task> task =
      comm->executor->submit([comm, args, algorithm, check] { return run(comm, args, *algorithm, check); });
  rcc_request* wrapped = acquire_request();
  wrapped->comm = comm;
  wrapped->collective = std::move(task);
  *request = wrapped;
  return RCC_SUCCESS;
}

}  // namespace rcc
