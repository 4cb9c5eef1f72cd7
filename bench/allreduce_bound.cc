// allreduce-bound: what a 2-process float sum allreduce can reach on this machine with nothing but
// its copies, beside one core's memcpy of the same bytes (rcc-bench's memcpy column). No rcc: two
// processes (fork) spin on one shared counter each, and move the data in one of two ways:
//   slots   private buffers: each process copies the half the other reduces into a shared slot,
//           reduces its own half from its input and the other's slot, puts the result in a slot,
//           and copies the other's result out (the copies rcc's shared-memory allreduce makes);
//   shared  buffers both processes map: each reduces its half straight from both inputs into its
//           output and copies it on into the other's (rcc's form for rcc_mem_alloc buffers).
// busbw = bytes / time, as rcc-bench reports for 2 ranks; the best of five batches.
//
//   allreduce-bound [--iters N] [SIZE...]       sizes in bytes (default 8, 16, 32, 64 MiB)
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr size_t kSlotBytes = 512 * 1024;   // one half-chunk, as rcc's default slot
constexpr size_t kBlockBytes = 128 * 1024;  // the shared form's block
constexpr int kBatches = 5;

struct alignas(128) Counter {
  std::atomic<long> value;
};

struct Control {
  Counter arrived[2];
  double seconds[2][kBatches];
};

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Both processes arrive at the next step, each waiting for the other.
class Steps {
 public:
  Steps(Control* control, int rank) : control_(control), rank_(rank) {}
  void step() {
    ++step_;
    control_->arrived[rank_].value.store(step_, std::memory_order_release);
    while (control_->arrived[1 - rank_].value.load(std::memory_order_acquire) < step_) relax();
  }

 private:
  Control* control_;
  int rank_;
  long step_ = 0;
};

void add(float* __restrict out, const float* __restrict a, const float* __restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void* shared_memory(size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::perror("allreduce-bound: mmap");
    std::exit(1);
  }
  return memory;
}

// One allreduce through the slots: half r is this process's, in chunks of one slot.
void through_slots(Steps& steps, int rank, const float* in, float* out, float* slots, size_t count) {
  const size_t half = count / 2, per_slot = kSlotBytes / sizeof(float);
  const size_t mine = rank * half, theirs = (1 - rank) * half;
  float* my_in = slots + static_cast<size_t>(rank) * 2 * per_slot;
  float* my_result = my_in + per_slot;
  const float* their_in = slots + static_cast<size_t>(1 - rank) * 2 * per_slot;
  const float* their_result = their_in + per_slot;
  for (size_t base = 0; base < half; base += per_slot) {
    const size_t n = std::min(per_slot, half - base);
    std::memcpy(my_in, in + theirs + base, n * sizeof(float));
    steps.step();
    add(out + mine + base, in + mine + base, their_in, n);
    std::memcpy(my_result, out + mine + base, n * sizeof(float));
    steps.step();
    std::memcpy(out + theirs + base, their_result, n * sizeof(float));
    steps.step();  // before the slots are written again
  }
}

// One allreduce between shared buffers.
void between_shared(Steps& steps, int rank, float* const in[2], float* const out[2], size_t count) {
  const size_t half = count / 2, per_block = kBlockBytes / sizeof(float);
  const size_t mine = rank * half;
  steps.step();
  for (size_t base = mine; base < mine + half; base += per_block) {
    const size_t n = std::min(per_block, mine + half - base);
    add(out[rank] + base, in[0] + base, in[1] + base, n);
    std::memcpy(out[1 - rank] + base, out[rank] + base, n * sizeof(float));
  }
  steps.step();
}

double memcpy_rate(size_t bytes, int iters) {
  std::vector<char> from(bytes, 1), to(bytes, 2);
  double best = 1e30;
  for (int batch = 0; batch < kBatches; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      std::memcpy(to.data(), from.data(), bytes);
      asm volatile("" ::: "memory");
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters);
  }
  return static_cast<double>(bytes) / best / 1e9;
}

// busbw of one form at one size, both processes timed, the slower one counted.
double allreduce_rate(bool shared, size_t bytes, int iters) {
  const size_t count = bytes / sizeof(float);
  auto* control = new (shared_memory(sizeof(Control))) Control{};
  float* slots = static_cast<float*>(shared_memory(4 * kSlotBytes));
  float* shared_in[2] = {nullptr, nullptr};
  float* shared_out[2] = {nullptr, nullptr};
  if (shared) {
    for (int r = 0; r < 2; ++r) {
      shared_in[r] = static_cast<float*>(shared_memory(bytes));
      shared_out[r] = static_cast<float*>(shared_memory(bytes));
    }
  }
  const pid_t child = fork();
  if (child < 0) {
    std::perror("allreduce-bound: fork");
    std::exit(1);
  }
  const int rank = child == 0 ? 1 : 0;
  std::vector<float> private_in, private_out;
  float* in = shared_in[rank];
  float* out = shared_out[rank];
  if (!shared) {
    private_in.assign(count, 1.0f + static_cast<float>(rank));
    private_out.assign(count, 0.0f);
    in = private_in.data();
    out = private_out.data();
  } else {
    std::fill(in, in + count, 1.0f + static_cast<float>(rank));
    std::fill(out, out + count, 0.0f);
  }
  Steps steps(control, rank);
  for (int batch = 0; batch < kBatches; ++batch) {
    steps.step();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      if (shared) {
        between_shared(steps, rank, shared_in, shared_out, count);
      } else {
        through_slots(steps, rank, in, out, slots, count);
      }
    }
    control->seconds[rank][batch] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const bool right = out[0] == 3.0f && out[count - 1] == 3.0f && out[count / 2] == 3.0f;
  if (child == 0) std::_Exit(right ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  if (!right || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "allreduce-bound: wrong sums (%s, %zu bytes)\n", shared ? "shared" : "slots", bytes);
    std::exit(1);
  }
  double best = 1e30;
  for (int batch = 0; batch < kBatches; ++batch) {
    best = std::min(best, std::max(control->seconds[0][batch], control->seconds[1][batch]) / iters);
  }
  for (int r = 0; r < 2 && shared; ++r) {
    munmap(shared_in[r], bytes);
    munmap(shared_out[r], bytes);
  }
  munmap(slots, 4 * kSlotBytes);
  munmap(control, sizeof(Control));
  return static_cast<double>(bytes) / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20;
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--iters" && i + 1 < argc) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else if (!arg.empty() && arg[0] != '-') {
      sizes.push_back(std::strtoull(arg.c_str(), nullptr, 0) / (2 * kSlotBytes) * (2 * kSlotBytes));
    } else {
      std::fprintf(stderr, "usage: allreduce-bound [--iters N] [SIZE...] (bytes, whole MiB)\n");
      return 2;
    }
  }
  if (sizes.empty()) sizes = {size_t{8} << 20, size_t{16} << 20, size_t{32} << 20, size_t{64} << 20};
  std::printf("# 2 processes, float sum, busbw GB/s (best of %d batches of %d); memcpy: one core, the same bytes\n",
              kBatches, iters);
  std::printf("%12s %10s %10s %10s %12s %12s\n", "bytes", "slots", "shared", "memcpy", "slots/memcpy", "shared/memcpy");
  for (const size_t bytes : sizes) {
    if (bytes == 0) continue;
    const double copy = memcpy_rate(bytes, iters);
    const double slots = allreduce_rate(false, bytes, iters);
    const double shared = allreduce_rate(true, bytes, iters);
    std::printf("%12zu %10.2f %10.2f %10.2f %12.2f %12.2f\n", bytes, slots, shared, copy, slots / copy, shared / copy);
  }
  return 0;
}
