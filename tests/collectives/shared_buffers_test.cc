// Allreduce over buffers from rcc_mem_alloc, which the ranks of a host read and write in each
// other's memory (collectives/shm_shared_buffers.cc): every datatype and op against the exact
// reference, in place and out of place, on every rank or only some (the slots' forms then), buffers
// at odd offsets inside their allocations; and rcc_mem_alloc's and rcc_mem_free's bad input.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>

#include "coll_test_util.h"

using namespace coll_test;

namespace {

// One allocation from rcc_mem_alloc for the scope, freed at its end.
class SharedMemory {
 public:
  explicit SharedMemory(size_t bytes) {
    void* memory = nullptr;
    EXPECT_EQ(rcc_mem_alloc(bytes, &memory), RCC_SUCCESS) << rcc_last_error();
    memory_ = static_cast<uint8_t*>(memory);
  }
  ~SharedMemory() { EXPECT_EQ(rcc_mem_free(memory_), RCC_SUCCESS) << rcc_last_error(); }
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  uint8_t* get() const { return memory_; }

 private:
  uint8_t* memory_ = nullptr;
};

// The inodes of the rcc_mem_alloc memory this process has mapped (its own allocations and the
// peers' it reduces straight out of), and the one holding `address` in *holding.
std::vector<uint64_t> shared_inodes(const void* address, uint64_t* holding) {
  std::ifstream maps("/proc/self/maps");
  std::vector<uint64_t> inodes;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:rcc_mem_alloc") == std::string::npos) continue;
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    char perms[8] = {}, device[16] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %15s %llu", &start, &end, perms, &offset, device, &inode) != 6) {
      continue;
    }
    inodes.push_back(inode);
    const auto at = reinterpret_cast<uintptr_t>(address);
    if (at >= start && at < end) *holding = inode;
  }
  return inodes;
}

// Where a case's buffers are: both from rcc_mem_alloc (at `offset` bytes into their allocations),
// or both private.
struct Buffers {
  Buffers(size_t bytes, size_t offset, bool shared)
      : shared_send(shared ? bytes + offset : 0), shared_recv(shared ? bytes + offset : 0) {
    if (shared) {
      send = shared_send.get() + offset;
      recv = shared_recv.get() + offset;
    } else {
      private_send.resize(bytes + 1);
      private_recv.resize(bytes + 1);
      send = private_send.data();
      recv = private_recv.data();
    }
  }
  SharedMemory shared_send, shared_recv;
  std::vector<uint8_t> private_send, private_recv;
  uint8_t* send = nullptr;
  uint8_t* recv = nullptr;
};

// One allreduce checked against the reference and across ranks.
void run_checked(rcc_datatype_t t, rcc_op_t op, size_t count, uint8_t* send, uint8_t* recv, bool in_place, int salt,
                 const std::string& what) {
  const size_t element = rcc_datatype_size(t);
  fill(t, op, ranktest::rank(), send, count, salt);
  void* out = in_place ? send : recv;
  RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), send, out, count, t, op));
  std::string first;
  const size_t bad = check_reduced(t, op, ranktest::size(), out, count, 0, &first, salt);
  EXPECT_EQ(bad, 0u) << what << ": " << type_name(t) << " " << op_name(op) << " count " << count
                     << (in_place ? " in place" : "") << ": " << first;
  EXPECT_TRUE(same_on_all_ranks(out, count * element)) << what << ": " << type_name(t) << " " << op_name(op);
}

// Counts around the size from which the shared form runs (16 KiB), a count not a whole number of
// cache lines per rank, and, unless quick, 1 MiB + 5 elements (several blocks per rank).
std::vector<size_t> shared_counts(rcc_datatype_t t, bool large) {
  const size_t element = rcc_datatype_size(t);
  std::vector<size_t> counts = {0, 3, (size_t{16} << 10) / element - 1, (size_t{16} << 10) / element,
                                (size_t{40} << 10) / element + 7};
  if (large && !quick()) counts.push_back((size_t{1} << 20) / element + 5);
  return counts;
}

}  // namespace

TEST(SharedBuffers, AllocateAndFreeCheckTheirArguments) {
  void* memory = reinterpret_cast<void*>(1);
  EXPECT_EQ(rcc_mem_alloc(0, &memory), RCC_SUCCESS);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(rcc_mem_alloc(64, nullptr), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rcc_last_error()).find("memory"), std::string::npos) << rcc_last_error();
  EXPECT_EQ(rcc_mem_alloc(SIZE_MAX, &memory), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rcc_last_error()).find("bytes"), std::string::npos) << rcc_last_error();
  EXPECT_EQ(rcc_mem_free(nullptr), RCC_SUCCESS);
  std::vector<uint8_t> elsewhere(64);
  EXPECT_EQ(rcc_mem_free(elsewhere.data()), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rcc_last_error()).find("memory"), std::string::npos) << rcc_last_error();
  // Page-aligned, writable, and freed once only.
  ASSERT_EQ(rcc_mem_alloc(5000, &memory), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % 4096, 0u);
  std::memset(memory, 0x5a, 5000);
  EXPECT_EQ(rcc_mem_free(static_cast<uint8_t*>(memory) + 64), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rcc_mem_free(memory), RCC_SUCCESS);
  EXPECT_EQ(rcc_mem_free(memory), RCC_ERR_INVALID_ARGUMENT);
}

// Allocations of 16 KiB or more hold a file descriptor each, up to half of RLIMIT_NOFILE; beyond,
// they come from the heap and still work (an allreduce over them goes through the slots).
TEST(SharedBuffers, HeapBeyondHalfTheDescriptors) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  int open_now = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++open_now;
  }
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(open_now + 40);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<void*> memory(40, nullptr);
  for (void*& one : memory) EXPECT_EQ(rcc_mem_alloc(16 << 10, &one), RCC_SUCCESS) << rcc_last_error();
  size_t files = 0;  // how many of them are memfds
  for (void* one : memory) {
    uint64_t inode = 0;
    shared_inodes(one, &inode);
    files += inode != 0 ? 1 : 0;
  }
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_LE(files, static_cast<size_t>(open_now + 40) / 2) << "more memfds than half the descriptors";
  EXPECT_GE(files, 1u) << "none of the allocations is shared";
  for (void* one : memory) {
    ASSERT_NE(one, nullptr);
    std::memset(one, 0x3c, 16 << 10);  // every one usable
    EXPECT_EQ(rcc_mem_free(one), RCC_SUCCESS) << rcc_last_error();
  }
  const size_t count = (size_t{64} << 10) / 4;  // an allreduce still works afterwards
  Buffers buffers(count * 4, 0, true);
  run_checked(RCC_INT32, RCC_SUM, count, buffers.send, buffers.recv, false, 2, "after the limit");
}

// Each case twice: the first call finds every rank's buffers shared (through the slots, which tell
// the ranks so), the second moves the data straight between them.
TEST(SharedBuffers, EveryTypeOpCount) {
  for (int t = 0; t < RCC_NUM_DATATYPES; ++t) {
    for (int o = 0; o < RCC_NUM_OPS; ++o) {
      const auto type = static_cast<rcc_datatype_t>(t);
      const auto op = static_cast<rcc_op_t>(o);
      if (!op_defined(type, op)) continue;
      const bool large = op == RCC_SUM || type == RCC_FLOAT32;
      for (size_t count : shared_counts(type, large)) {
        const size_t bytes = count * rcc_datatype_size(type);
        // Offsets inside the allocation: page-aligned, and off by an element and a few lines.
        for (size_t offset : {size_t{0}, size_t{64} * 3 + rcc_datatype_size(type)}) {
          Buffers buffers(bytes, offset, true);
          for (bool in_place : {false, true}) {
            for (int call = 0; call < 2; ++call) {
              run_checked(type, op, count, buffers.send, buffers.recv, in_place, t + o + call, "shared");
            }
          }
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Some ranks' buffers shared and others' private, in place on some ranks and not on others, one call
// after another, so that a stale choice carried from the call before (or a rank that took the
// other form) would show; counts not a whole number of cache lines per rank.
TEST(SharedBuffers, SomeRanksPrivateOrInPlace) {
  const int rank = ranktest::rank(), last = ranktest::size() - 1;
  struct Pattern {
    const char* name;
    std::function<bool(int)> shared;
    std::function<bool(int)> in_place;
  };
  const auto all = [](int) { return true; };
  const auto none = [](int) { return false; };
  const std::vector<Pattern> patterns = {
      {"all shared", all, none},
      {"all shared", all, none},
      {"rank 0 private", [](int r) { return r != 0; }, none},
      {"all shared, all in place", all, all},
      {"all shared, all in place", all, all},
      {"all shared, rank 0 in place", all, [](int r) { return r == 0; }},
      {"all shared, the last in place", all, [last](int r) { return r == last; }},
      {"the last private", [last](int r) { return r != last; }, [](int r) { return r % 2 == 1; }},
      {"all private", none, none},
      {"all shared, odd ranks in place", all, [](int r) { return r % 2 == 1; }},
      {"all shared, even ranks in place", all, [](int r) { return r % 2 == 0; }}};
  const size_t int_count = (size_t{4} << 20) / 4 + 21, double_count = (size_t{64} << 10) / 8 + 3;
  for (const Pattern& pattern : patterns) {
    Buffers ints(int_count * 4, 128, pattern.shared(rank));
    Buffers doubles(double_count * 8, 8, pattern.shared(rank));
    run_checked(RCC_INT32, RCC_SUM, int_count, ints.send, ints.recv, pattern.in_place(rank), 3, pattern.name);
    run_checked(RCC_FLOAT64, RCC_AVG, double_count, doubles.send, doubles.recv, pattern.in_place(rank), 5,
                pattern.name);
    if (HasFailure()) return;
  }
}

// One-chunk allreduces one after another, rank 0's buffers shared in every other call and the
// others' always, with no other collective in between: each call's notes decide whether the next
// tries the shared form, and the shared form's posted buffers whether it takes it, so every call
// flips the choice; a rank that decided otherwise than the rest would pair its steps with another
// form's (wrong sums, or a hang that rccrun's timeout ends). Checked to fail when one rank ignores
// the notes.
TEST(SharedBuffers, AlternatingCallsAgree) {
  const int rank = ranktest::rank();
  const size_t count = (size_t{32} << 10) / 4;
  Buffers shared(count * 4, 0, true), owned(count * 4, 0, false);
  const int calls = quick() ? 300 : 1500;
  size_t bad = 0;
  for (int call = 0; call < calls && bad == 0; ++call) {
    if (call % 97 == rank) usleep(100);
    // Every third call rank 0's buffers are private: the call after two shared ones takes the shared
    // form, the one after that finds rank 0 private and goes through the slots.
    Buffers& buffers = rank == 0 && call % 3 == 2 ? owned : shared;
    fill(RCC_INT32, RCC_SUM, rank, buffers.send, count, call % 11);
    std::memset(buffers.recv, 0xee, count * 4);  // a call that writes nothing shows
    RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), buffers.send, buffers.recv, count, RCC_INT32, RCC_SUM));
    std::string first;
    bad = check_reduced(RCC_INT32, RCC_SUM, ranktest::size(), buffers.recv, count, 0, &first, call % 11);
    EXPECT_EQ(bad, 0u) << "call " << call << ": " << first;
  }
}

// Send and receive buffers in one allocation, side by side.
TEST(SharedBuffers, SendAndReceiveInOneAllocation) {
  const size_t count = (size_t{256} << 10) / 4 + 1, bytes = count * 4;
  SharedMemory memory(2 * bytes + 4);
  for (int call = 0; call < 3; ++call) {
    run_checked(RCC_UINT32, RCC_MAX, count, memory.get(), memory.get() + bytes + 4, false, call, "one allocation");
  }
}

// Where the shared form must run (RCC_TEST_REQUIRE_SHARED_FORM=1: ranks on one host with their
// cross-memory permission, as the cma variant checks), it did: this process mapped a peer's buffer.
TEST(SharedBuffers, TheSharedFormRuns) {
  const char* required = std::getenv("RCC_TEST_REQUIRE_SHARED_FORM");
  if (required == nullptr || std::string(required) != "1" || ranktest::size() < 2) {
    GTEST_SKIP() << "RCC_TEST_REQUIRE_SHARED_FORM=1 not set, or one rank";
  }
  const size_t count = (size_t{1} << 20) / 4 + 3;
  Buffers buffers(count * 4, 0, true);
  for (bool in_place : {false, true}) {  // in place: at 3 ranks or more, rank 2 through its private block
    for (int call = 0; call < 2; ++call) {
      run_checked(RCC_FLOAT32, RCC_SUM, count, buffers.send, buffers.recv, in_place, call, "mapped");
    }
  }
  // Every rank's send buffer, by the inode of its memory, must be mapped by every other rank.
  uint64_t mine = 0;
  const std::vector<uint64_t> mapped = shared_inodes(buffers.send, &mine);
  ASSERT_NE(mine, 0u) << "the send buffer is not in a memfd:rcc_mem_alloc mapping";
  std::vector<uint64_t> all(static_cast<size_t>(ranktest::size()));
  RCC_ASSERT_OK(rcc_allgather(ranktest::comm(), &mine, all.data(), 1, RCC_UINT64));
  for (int r = 0; r < ranktest::size(); ++r) {
    EXPECT_NE(std::find(mapped.begin(), mapped.end(), all[static_cast<size_t>(r)]), mapped.end())
        << "rank " << r << "'s send buffer is not mapped here: the slots' forms ran";
  }
}
