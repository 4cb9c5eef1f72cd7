// Reductions with an operation rcc's kernels do not have: the program's (MPI_Op_create) and
// MINLOC/MAXLOC. They run over the communicator's shadow with point-to-point messages: a binomial
// reduce to rank 0 that keeps rank order (so non-commutative operations are right), then what the
// collective needs (a broadcast, a send to the root, the blocks scattered), or a chain for scans.
// Buffers are "images": count elements laid out as the datatype says, as the operation expects.
#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "layer_reduce.h"

namespace rcc_mpi {
namespace {

// count elements of type, laid out as in the program's buffer.
class Image {
 public:
  Image(const rcc_mpi_datatype* type, size_t count) : type_(type), count_(count) {
    const size_t span = count == 0 ? 0 : (count - 1) * static_cast<size_t>(type->extent) + type->true_extent;
    // Element 0 starts at an address aligned as the type's widest member (as in a C array the
    // operation's function may read with aligned loads), its data true_lb from there.
    const ptrdiff_t lead = std::max<ptrdiff_t>(0, -type->true_lb);
    memory_.assign(span + static_cast<size_t>(std::max<ptrdiff_t>(0, type->true_lb) + lead) + type->align + 1, 0);
    const auto start = reinterpret_cast<uintptr_t>(memory_.data()) + static_cast<uintptr_t>(lead);
    base_ = reinterpret_cast<char*>((start + type->align - 1) / type->align * type->align);
  }
  // Where element 0 starts (its data may begin before or after it: true_lb).
  char* base() { return base_; }
  size_t packed_bytes() const { return count_ * type_->size; }
  void load(const void* buffer) {  // from a program's buffer
    std::vector<char> packed(packed_bytes());
    pack(buffer, count_, type_, packed.data());
    unpack(packed.data(), packed.size(), type_, base());
  }
  void store(void* buffer, size_t first = 0, size_t count = SIZE_MAX) {  // elements [first, first+count) out
    count = std::min(count, count_ - first);
    std::vector<char> packed(count * type_->size);
    pack(base() + first * type_->extent, count, type_, packed.data());
    unpack(packed.data(), packed.size(), type_, buffer);
  }
  std::vector<char> packed(size_t first = 0, size_t count = SIZE_MAX) {
    count = std::min(count, count_ - first);
    std::vector<char> out(count * type_->size);
    pack(base() + first * type_->extent, count, type_, out.data());
    return out;
  }
  void set_packed(const std::vector<char>& in) { unpack(in.data(), in.size(), type_, base()); }

 private:
  const rcc_mpi_datatype* type_;
  size_t count_;
  std::vector<char> memory_;
  char* base_ = nullptr;
};

struct Context {
  rcc_comm_t shadow;
  int rank, size;
  int tag;  // this call's tags: tag .. tag + 3
  rcc_mpi_op op;
  TypeRef type;
  std::string* message;

  bool check(rcc_status_t status) {
    if (status == RCC_SUCCESS) return true;
    *message = std::string(rcc_last_error()) + " [" + rcc_status_string(status) + "]";
    last = error_class_of(status);
    return false;
  }
  int last = MPI_SUCCESS;

  bool send(const std::vector<char>& data, int peer, int phase) {
    return check(rcc_send(shadow, data.data(), data.size(), RCC_UINT8, peer, tag + phase));
  }
  bool receive(std::vector<char>* data, size_t bytes, int peer, int phase) {
    data->assign(bytes, 0);
    return check(rcc_recv(shadow, data->data(), bytes, RCC_UINT8, peer, tag + phase));
  }
  // inout = in op inout over `count` elements of images.
  void combine(Image& in, Image& inout, size_t count) {
    apply_op(&op, in.base(), inout.base(), static_cast<int>(count), const_cast<MPI_Datatype>(type.get()));
  }
};

// The binomial reduce to rank 0 in rank order: on rank 0 *acc ends as ranks 0..n-1 combined.
bool reduce_to_zero(Context& ctx, Image* acc, size_t count) {
  for (int mask = 1; mask < ctx.size; mask <<= 1) {
    if (ctx.rank & mask) return ctx.send(acc->packed(), ctx.rank - mask, 0);
    if (ctx.rank + mask >= ctx.size) continue;
    std::vector<char> data;
    if (!ctx.receive(&data, acc->packed_bytes(), ctx.rank + mask, 0)) return false;
    Image higher(ctx.type.get(), count);  // ranks rank+mask.. combined
    higher.set_packed(data);
    ctx.combine(*acc, higher, count);  // lower ranks first: acc op higher
    *acc = std::move(higher);
  }
  return true;
}

// A binomial broadcast from rank 0 of packed bytes.
bool broadcast_from_zero(Context& ctx, std::vector<char>* data, size_t bytes) {
  int mask = 1;
  while (mask < ctx.size) mask <<= 1;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (ctx.rank % (2 * mask) == 0 && ctx.rank + mask < ctx.size) {
      if (!ctx.send(*data, ctx.rank + mask, 1)) return false;
    } else if (ctx.rank % (2 * mask) == mask) {
      if (!ctx.receive(data, bytes, ctx.rank - mask, 1)) return false;
    }
  }
  return true;
}

int run(Reduction kind, Context& ctx, const void* input, void* recvbuf, const std::vector<int>& out_counts,
        size_t count, int root) {
  const rcc_mpi_datatype* type = ctx.type.get();
  size_t in_count = count;
  if (kind == Reduction::kReduceScatter) in_count = std::accumulate(out_counts.begin(), out_counts.end(), size_t{0});
  if (kind == Reduction::kReduceScatterBlock) in_count = count * static_cast<size_t>(ctx.size);
  Image mine(type, in_count);
  mine.load(input);
  switch (kind) {
    case Reduction::kScan:
    case Reduction::kExscan: {
      // A chain: rank r gets ranks 0..r-1 combined from r-1, passes 0..r on.
      Image prefix(type, count);
      if (ctx.rank > 0) {
        std::vector<char> data;
        if (!ctx.receive(&data, mine.packed_bytes(), ctx.rank - 1, 2)) return ctx.last;
        prefix.set_packed(data);
        if (kind == Reduction::kExscan) prefix.store(recvbuf);
        ctx.combine(prefix, mine, count);  // prefix op mine
      }
      if (kind == Reduction::kScan) mine.store(recvbuf);
      if (ctx.rank + 1 < ctx.size && !ctx.send(mine.packed(), ctx.rank + 1, 2)) return ctx.last;
      return MPI_SUCCESS;
    }
    default: break;
  }
  if (!reduce_to_zero(ctx, &mine, in_count)) return ctx.last;
  switch (kind) {
    case Reduction::kReduce:
      if (root == 0) {
        if (ctx.rank == 0) mine.store(recvbuf);
      } else if (ctx.rank == 0) {
        if (!ctx.send(mine.packed(), root, 1)) return ctx.last;
      } else if (ctx.rank == root) {
        std::vector<char> data;
        if (!ctx.receive(&data, mine.packed_bytes(), 0, 1)) return ctx.last;
        mine.set_packed(data);
        mine.store(recvbuf);
      }
      return MPI_SUCCESS;
    case Reduction::kAllreduce: {
      std::vector<char> data = ctx.rank == 0 ? mine.packed() : std::vector<char>();
      if (!broadcast_from_zero(ctx, &data, mine.packed_bytes())) return ctx.last;
      mine.set_packed(data);
      mine.store(recvbuf);
      return MPI_SUCCESS;
    }
    default: {  // reduce_scatter(_block): rank 0 sends each rank its block
      std::vector<size_t> counts(static_cast<size_t>(ctx.size), count), first(static_cast<size_t>(ctx.size), 0);
      if (kind == Reduction::kReduceScatter) counts.assign(out_counts.begin(), out_counts.end());
      for (size_t r = 1; r < counts.size(); ++r) first[r] = first[r - 1] + counts[r - 1];
      const auto me = static_cast<size_t>(ctx.rank);
      if (ctx.rank == 0) {
        for (int r = 1; r < ctx.size; ++r) {
          if (!ctx.send(mine.packed(first[static_cast<size_t>(r)], counts[static_cast<size_t>(r)]), r, 3))
            return ctx.last;
        }
        mine.store(recvbuf, 0, counts[0]);
        return MPI_SUCCESS;
      }
      std::vector<char> data;
      if (!ctx.receive(&data, counts[me] * type->size, 0, 3)) return ctx.last;
      unpack(data.data(), data.size(), type, recvbuf);
      return MPI_SUCCESS;
    }
  }
}

}  // namespace

int layer_reduction(Reduction kind, const void* input, void* recvbuf, const std::vector<int>& out_counts, int count,
                    MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request, const char* function) {
  // Tags are numbered in call order, the same on every rank, so calls in flight never mix.
  const uint64_t sequence = comm->sequence.fetch_add(1);
  const int tag = static_cast<int>(sequence % (1u << 28)) * 4;
  const rcc_mpi_op op_copy = *op;  // the program may free op before a nonblocking call ends
  TypeRef held = hold(type);
  rcc_comm_t shadow = comm->shadow;
  const int rank = comm->rank, size = comm->size;
  // A nonblocking call reads its input when the worker runs it: the program may not change the
  // buffers before the call completes.
  const std::vector<int> counts = out_counts;
  LayerCall body = [=](std::string* message) {
    Context ctx{shadow, rank, size, tag, op_copy, held, message};
    return run(kind, ctx, input, recvbuf, counts, static_cast<size_t>(count), root);
  };
  return run_layer_collective(comm, function, std::move(body), request);
}

Worker::Worker() : thread_([this] { run(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Worker::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void Worker::run() {
  pthread_setname_np(pthread_self(), "rcc-mpi-worker");
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and every job posted is done
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

int run_layer_collective(MPI_Comm comm, const char* function, LayerCall body, MPI_Request* request) {
  if (request == nullptr) {
    std::string message;
    const int error = body(&message);
    return error == MPI_SUCCESS ? MPI_SUCCESS : fail(comm, error, function, "%s", message.c_str());
  }
  MPI_Request created = new_request(comm, rcc_mpi_request::Kind::kTask);
  created->task = std::make_shared<rcc_mpi_task_state>();
  auto task = created->task;
  worker_of(comm).post([task, body = std::move(body)]() {
    std::string message;
    const int error = body(&message);
    std::lock_guard<std::mutex> guard(task->mutex);
    task->done = true;
    task->error = error;
    task->message = message;
    task->changed.notify_all();
  });
  *request = created;
  return MPI_SUCCESS;
}

}  // namespace rcc_mpi
