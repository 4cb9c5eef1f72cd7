#include "comm/launch.h"

#include "collectives/argument_check.h"
#include "collectives/execute.h"
#include "collectives/tuner.h"
#include "comm/call_dump.h"
#include "comm/call_record.h"

namespace rcc {
namespace {

bool rooted(collectives::Kind kind) {
  using collectives::Kind;
  return kind == Kind::kBroadcast || kind == Kind::kReduce || kind == Kind::kGather || kind == Kind::kScatter ||
         kind == Kind::kGatherv || kind == Kind::kScatterv;
}

Status run(rcc_comm* comm, const collectives::Args& args, const collectives::AlgorithmRow& algorithm, bool check) {
  if (comm->aborted.load())
    return fail(RCC_ERR_ABORTED, "%s: the communicator was aborted", collectives::kind_name(args.kind));
  // Recorded when it starts running (queued nonblocking ones wait their turn unrecorded).
  const uint64_t sequence = comm->collective_sequence;
  const int op = static_cast<int>(args.kind);
  CallRecorder& recorder = CallRecorder::instance();
  const uint64_t ticket = recorder.begin(comm->group->id(), sequence, op, args.datatype, args.count,
                                         rooted(args.kind) ? args.root : -1, -1);
  collectives::Context ctx = comm->next_collective();
  const Status status = collectives::execute(ctx, args, algorithm, check);
  if (status != RCC_SUCCESS) {
    // Which call of which communicator, numbered as on every other rank.
    if (status == RCC_ERR_TIMEOUT || status == RCC_ERR_MISMATCH) {
      set_last_error(describe_call(*comm, op, sequence) + ": " + last_error());
    }
    const std::string message = last_error();
    dump_calls_after_failure(*comm->job, status);
    set_last_error(message);  // writing the dump may not replace it
  }
  recorder.end(ticket, status);
  return status;
}

// Runs `args` with `algorithm`: inline when request is null, else queued behind a new handle.
Status start(rcc_comm* comm, const collectives::Args& args, const collectives::AlgorithmRow* algorithm,
             rcc_request_t* request) {
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

size_t bytes_of(const collectives::Args& args) { return args.count * rcc_datatype_size(args.datatype); }

}  // namespace

Status launch_collective(rcc_comm* comm, const collectives::Args& args, rcc_request_t* request) {
  const collectives::AlgorithmRow* algorithm = nullptr;
  RCC_RETURN_IF_ERROR(collectives::choose_algorithm(args.kind, bytes_of(args), comm->size, comm->shm != nullptr,
                                                    comm->levels.get(), &algorithm));
  return start(comm, args, algorithm, request);
}

Status run_internal_collective(rcc_comm* comm, const collectives::Args& args) {
  return start(
      comm, args,
      &collectives::model_choice(args.kind, bytes_of(args), comm->size, comm->shm != nullptr, comm->levels.get()),
      nullptr);
}

}  // namespace rcc
