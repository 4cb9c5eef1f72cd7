// Bad input to every public function: one gtest per (function, bad argument). Each checks the
// status AND that rcc_last_error() names the function and the argument, and that output
// parameters are left alone. Communicators are real (size 1, made with rcc_get_unique_id and
// rcc_comm_init_rank): one live, one aborted, and the handle of a destroyed one.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "rcc/rcc.h"

namespace {

rcc_comm_t g_live = nullptr;
rcc_comm_t g_aborted = nullptr;
rcc_comm_t g_destroyed = nullptr;  // a stale handle: destroyed after the other two were made

rcc_status_t make_comm(rcc_comm_t* comm) {
  rcc_unique_id_t id;
  rcc_status_t status = rcc_get_unique_id(&id);
  return status != RCC_SUCCESS ? status : rcc_comm_init_rank(comm, id, 0, 1);
}

class Communicators : public testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(make_comm(&g_live), RCC_SUCCESS) << rcc_last_error();
    ASSERT_EQ(make_comm(&g_aborted), RCC_SUCCESS) << rcc_last_error();
    ASSERT_EQ(rcc_comm_abort(g_aborted), RCC_SUCCESS) << rcc_last_error();
    // Made while the others live, so its address cannot be reused by them.
    ASSERT_EQ(make_comm(&g_destroyed), RCC_SUCCESS) << rcc_last_error();
    ASSERT_EQ(rcc_comm_destroy(g_destroyed), RCC_SUCCESS) << rcc_last_error();
  }
  void TearDown() override {
    EXPECT_EQ(rcc_comm_destroy(g_aborted), RCC_SUCCESS) << rcc_last_error();
    EXPECT_EQ(rcc_comm_destroy(g_live), RCC_SUCCESS) << rcc_last_error();
  }
};
const testing::Environment* const g_environment = testing::AddGlobalTestEnvironment(new Communicators);

const rcc_request_t kUntouched = reinterpret_cast<rcc_request_t>(uintptr_t{0x5a5a});

// The arguments of any data-moving call; each case changes one of them.
struct Args {
  rcc_comm_t comm = nullptr;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  size_t count = 4;
  // Held as int: a C caller may pass any int, but a C++ enum object must not hold an
  // out-of-range value (UBSan -fsanitize=enum); converted only at the call.
  int datatype_value = RCC_FLOAT32;
  int op_value = RCC_SUM;
  rcc_datatype_t datatype() const { return static_cast<rcc_datatype_t>(datatype_value); }
  rcc_op_t op() const { return static_cast<rcc_op_t>(op_value); }
  int rank = 0;  // root or peer
  int tag = 0;
  rcc_request_t* request = nullptr;
  // The vector collectives' arrays (one entry: the communicators have one rank): every count is
  // `count`, every displacement 0 but bad_displ in the array named by displ_array; the arrays
  // named in null_arrays are passed as NULL.
  std::string displ_array;
  size_t bad_displ = 0;
  size_t zero = 0;
  std::vector<std::string> null_arrays;
  const size_t* counts(const char* name) const { return is_null(name) ? nullptr : &count; }
  const size_t* displs(const char* name) const {
    return is_null(name) ? nullptr : displ_array == name ? &bad_displ : &zero;
  }
  bool is_null(const char* name) const {
    for (const std::string& n : null_arrays) {
      if (n == name) return true;
    }
    return false;
  }
};

// A public function and which arguments it has.
struct Function {
  const char* name;
  std::function<rcc_status_t(const Args&)> call;
  std::vector<const char*> buffers;  // "sendbuf", "recvbuf" or "buf"
  bool has_op = false;
  const char* rank_name = nullptr;  // "root" or "peer"
  bool has_tag = false;
  bool nonblocking = false;
  std::vector<const char*> count_arrays = {};  // "sendcounts", "recvcounts"
  std::vector<const char*> displ_arrays = {};  // "displs", "sdispls", "rdispls"
};

std::vector<Function> functions() {
  using A = const Args&;
  return {
      {"rcc_send",
       [](A a) { return rcc_send(a.comm, a.sendbuf, a.count, a.datatype(), a.rank, a.tag); },
       {"buf"},
       false,
       "peer",
       true},
      {"rcc_recv",
       [](A a) { return rcc_recv(a.comm, a.recvbuf, a.count, a.datatype(), a.rank, a.tag); },
       {"buf"},
       false,
       "peer",
       true},
      {"rcc_isend",
       [](A a) { return rcc_isend(a.comm, a.sendbuf, a.count, a.datatype(), a.rank, a.tag, a.request); },
       {"buf"},
       false,
       "peer",
       true,
       true},
      {"rcc_irecv",
       [](A a) { return rcc_irecv(a.comm, a.recvbuf, a.count, a.datatype(), a.rank, a.tag, a.request); },
       {"buf"},
       false,
       "peer",
       true,
       true},
      {"rcc_allreduce",
       [](A a) { return rcc_allreduce(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op()); },
       {"sendbuf", "recvbuf"},
       true},
      {"rcc_iallreduce",
       [](A a) { return rcc_iallreduce(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op(), a.request); },
       {"sendbuf", "recvbuf"},
       true,
       nullptr,
       false,
       true},
      {"rcc_broadcast",
       [](A a) { return rcc_broadcast(a.comm, a.recvbuf, a.count, a.datatype(), a.rank); },
       {"buf"},
       false,
       "root"},
      {"rcc_ibroadcast",
       [](A a) { return rcc_ibroadcast(a.comm, a.recvbuf, a.count, a.datatype(), a.rank, a.request); },
       {"buf"},
       false,
       "root",
       false,
       true},
      {"rcc_reduce",
       [](A a) { return rcc_reduce(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op(), a.rank); },
       {"sendbuf", "recvbuf"},
       true,
       "root"},
      {"rcc_ireduce",
       [](A a) { return rcc_ireduce(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op(), a.rank, a.request); },
       {"sendbuf", "recvbuf"},
       true,
       "root",
       false,
       true},
      {"rcc_allgather",
       [](A a) { return rcc_allgather(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype()); },
       {"sendbuf", "recvbuf"}},
      {"rcc_iallgather",
       [](A a) { return rcc_iallgather(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.request); },
       {"sendbuf", "recvbuf"},
       false,
       nullptr,
       false,
       true},
      {"rcc_reduce_scatter",
       [](A a) { return rcc_reduce_scatter(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op()); },
       {"sendbuf", "recvbuf"},
       true},
      {"rcc_ireduce_scatter",
       [](A a) { return rcc_ireduce_scatter(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op(), a.request); },
       {"sendbuf", "recvbuf"},
       true,
       nullptr,
       false,
       true},
      {"rcc_alltoall",
       [](A a) { return rcc_alltoall(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype()); },
       {"sendbuf", "recvbuf"}},
      {"rcc_ialltoall",
       [](A a) { return rcc_ialltoall(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.request); },
       {"sendbuf", "recvbuf"},
       false,
       nullptr,
       false,
       true},
      {"rcc_gather",
       [](A a) { return rcc_gather(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.rank); },
       {"sendbuf", "recvbuf"},
       false,
       "root"},
      {"rcc_igather",
       [](A a) { return rcc_igather(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.rank, a.request); },
       {"sendbuf", "recvbuf"},
       false,
       "root",
       false,
       true},
      {"rcc_scatter",
       [](A a) { return rcc_scatter(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.rank); },
       {"sendbuf", "recvbuf"},
       false,
       "root"},
      {"rcc_iscatter",
       [](A a) { return rcc_iscatter(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.rank, a.request); },
       {"sendbuf", "recvbuf"},
       false,
       "root",
       false,
       true},
      {.name = "rcc_allgatherv",
       .call =
           [](A a) {
             return rcc_allgatherv(a.comm, a.sendbuf, a.count, a.recvbuf, a.counts("recvcounts"), a.displs("displs"),
                                   a.datatype());
           },
       .buffers = {"sendbuf", "recvbuf"},
       .count_arrays = {"recvcounts"},
       .displ_arrays = {"displs"}},
      {.name = "rcc_iallgatherv",
       .call =
           [](A a) {
             return rcc_iallgatherv(a.comm, a.sendbuf, a.count, a.recvbuf, a.counts("recvcounts"), a.displs("displs"),
                                    a.datatype(), a.request);
           },
       .buffers = {"sendbuf", "recvbuf"},
       .nonblocking = true,
       .count_arrays = {"recvcounts"},
       .displ_arrays = {"displs"}},
      {.name = "rcc_alltoallv",
       .call =
           [](A a) {
             return rcc_alltoallv(a.comm, a.sendbuf, a.counts("sendcounts"), a.displs("sdispls"), a.recvbuf,
                                  a.counts("recvcounts"), a.displs("rdispls"), a.datatype());
           },
       .buffers = {"sendbuf", "recvbuf"},
       .count_arrays = {"sendcounts", "recvcounts"},
       .displ_arrays = {"sdispls", "rdispls"}},
      {.name = "rcc_ialltoallv",
       .call =
           [](A a) {
             return rcc_ialltoallv(a.comm, a.sendbuf, a.counts("sendcounts"), a.displs("sdispls"), a.recvbuf,
                                   a.counts("recvcounts"), a.displs("rdispls"), a.datatype(), a.request);
           },
       .buffers = {"sendbuf", "recvbuf"},
       .nonblocking = true,
       .count_arrays = {"sendcounts", "recvcounts"},
       .displ_arrays = {"sdispls", "rdispls"}},
      // Rank 0 is the root: recvcounts and displs matter there.
      {.name = "rcc_gatherv",
       .call =
           [](A a) {
             return rcc_gatherv(a.comm, a.sendbuf, a.count, a.recvbuf, a.counts("recvcounts"), a.displs("displs"),
                                a.datatype(), a.rank);
           },
       .buffers = {"sendbuf", "recvbuf"},
       .rank_name = "root",
       .count_arrays = {"recvcounts"},
       .displ_arrays = {"displs"}},
      {.name = "rcc_igatherv",
       .call =
           [](A a) {
             return rcc_igatherv(a.comm, a.sendbuf, a.count, a.recvbuf, a.counts("recvcounts"), a.displs("displs"),
                                 a.datatype(), a.rank, a.request);
           },
       .buffers = {"sendbuf", "recvbuf"},
       .rank_name = "root",
       .nonblocking = true,
       .count_arrays = {"recvcounts"},
       .displ_arrays = {"displs"}},
      {.name = "rcc_scatterv",
       .call =
           [](A a) {
             return rcc_scatterv(a.comm, a.sendbuf, a.counts("sendcounts"), a.displs("displs"), a.recvbuf, a.count,
                                 a.datatype(), a.rank);
           },
       .buffers = {"sendbuf", "recvbuf"},
       .rank_name = "root",
       .count_arrays = {"sendcounts"},
       .displ_arrays = {"displs"}},
      {.name = "rcc_iscatterv",
       .call =
           [](A a) {
             return rcc_iscatterv(a.comm, a.sendbuf, a.counts("sendcounts"), a.displs("displs"), a.recvbuf, a.count,
                                  a.datatype(), a.rank, a.request);
           },
       .buffers = {"sendbuf", "recvbuf"},
       .rank_name = "root",
       .nonblocking = true,
       .count_arrays = {"sendcounts"},
       .displ_arrays = {"displs"}},
      {.name = "rcc_reduce_scatterv",
       .call =
           [](A a) {
             return rcc_reduce_scatterv(a.comm, a.sendbuf, a.recvbuf, a.counts("recvcounts"), a.datatype(), a.op());
           },
       .buffers = {"sendbuf", "recvbuf"},
       .has_op = true,
       .count_arrays = {"recvcounts"}},
      {.name = "rcc_ireduce_scatterv",
       .call =
           [](A a) {
             return rcc_ireduce_scatterv(a.comm, a.sendbuf, a.recvbuf, a.counts("recvcounts"), a.datatype(), a.op(),
                                         a.request);
           },
       .buffers = {"sendbuf", "recvbuf"},
       .has_op = true,
       .nonblocking = true,
       .count_arrays = {"recvcounts"}},
      {.name = "rcc_scan",
       .call = [](A a) { return rcc_scan(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op()); },
       .buffers = {"sendbuf", "recvbuf"},
       .has_op = true},
      {.name = "rcc_iscan",
       .call = [](A a) { return rcc_iscan(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op(), a.request); },
       .buffers = {"sendbuf", "recvbuf"},
       .has_op = true,
       .nonblocking = true},
      // Rank 0's recvbuf may be NULL (it is untouched): only sendbuf is checked here (see ExscanRankZero).
      {.name = "rcc_exscan",
       .call = [](A a) { return rcc_exscan(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op()); },
       .buffers = {"sendbuf"},
       .has_op = true},
      {.name = "rcc_iexscan",
       .call = [](A a) { return rcc_iexscan(a.comm, a.sendbuf, a.recvbuf, a.count, a.datatype(), a.op(), a.request); },
       .buffers = {"sendbuf"},
       .has_op = true,
       .nonblocking = true},
      {"rcc_barrier", [](A a) { return rcc_barrier(a.comm); }, {}},
      {"rcc_ibarrier", [](A a) { return rcc_ibarrier(a.comm, a.request); }, {}, false, nullptr, false, true},
  };
}

enum class CommKind { kLive, kNull, kAborted, kDestroyed };

struct Case {
  std::string name;  // gtest name: function_case
  size_t function;   // index into functions()
  CommKind comm = CommKind::kLive;
  std::function<void(Args&)> change;  // the one bad argument
  rcc_status_t expected = RCC_ERR_INVALID_ARGUMENT;
  std::vector<std::string> mentions;  // besides the function name
};

std::vector<Case> cases() {
  std::vector<Case> all;
  auto fns = functions();
  for (size_t i = 0; i < fns.size(); ++i) {
    const Function& f = fns[i];
    auto add = [&](const std::string& what, CommKind comm, std::function<void(Args&)> change, rcc_status_t expected,
                   std::vector<std::string> mentions) {
      all.push_back({std::string(f.name) + "_" + what, i, comm, std::move(change), expected, std::move(mentions)});
    };
    auto none = [](Args&) {};
    add("null_comm", CommKind::kNull, none, RCC_ERR_INVALID_ARGUMENT, {"comm is NULL"});
    add("destroyed_comm", CommKind::kDestroyed, none, RCC_ERR_INVALID_USAGE, {"comm is not a live communicator"});
    add("aborted_comm", CommKind::kAborted, none, RCC_ERR_ABORTED, {"aborted"});
    for (std::string buffer : f.buffers) {
      add("null_" + buffer, CommKind::kLive,
          [buffer](Args& a) {
            if (buffer == "sendbuf") a.sendbuf = nullptr;
            if (buffer == "recvbuf") a.recvbuf = nullptr;
            if (buffer == "buf") a.sendbuf = a.recvbuf = nullptr;
          },
          RCC_ERR_INVALID_ARGUMENT, {buffer + " is NULL"});
    }
    // The vector collectives word the overflow of a count or of a sum of counts their own way.
    const bool vector = !f.count_arrays.empty();
    if (!f.buffers.empty()) {
      add(
          "count_overflow", CommKind::kLive, [](Args& a) { a.count = std::numeric_limits<size_t>::max() / 2; },
          RCC_ERR_INVALID_ARGUMENT,
          vector ? std::vector<std::string>{"count"} : std::vector<std::string>{"count", "overflows"});
      add("datatype_too_big", CommKind::kLive, [](Args& a) { a.datatype_value = RCC_NUM_DATATYPES; },
          RCC_ERR_INVALID_ARGUMENT, {"datatype " + std::to_string(RCC_NUM_DATATYPES)});
      add("datatype_negative", CommKind::kLive, [](Args& a) { a.datatype_value = -1; }, RCC_ERR_INVALID_ARGUMENT,
          {"datatype -1"});
    }
    if (f.has_op) {
      add("op_too_big", CommKind::kLive, [](Args& a) { a.op_value = RCC_NUM_OPS; }, RCC_ERR_INVALID_ARGUMENT,
          {"op " + std::to_string(RCC_NUM_OPS)});
      add("op_negative", CommKind::kLive, [](Args& a) { a.op_value = -3; }, RCC_ERR_INVALID_ARGUMENT, {"op -3"});
      add("avg_on_integers", CommKind::kLive, [](Args& a) { a.op_value = RCC_AVG, a.datatype_value = RCC_INT32; },
          RCC_ERR_INVALID_ARGUMENT, {"op RCC_AVG", "not defined"});
      add("avg_on_int16", CommKind::kLive, [](Args& a) { a.op_value = RCC_AVG, a.datatype_value = RCC_INT16; },
          RCC_ERR_INVALID_ARGUMENT, {"op RCC_AVG", "not defined"});
      // The bitwise ops are defined for integer types only.
      const std::pair<int, const char*> bitwise[] = {{RCC_BAND, "BAND"}, {RCC_BOR, "BOR"}, {RCC_BXOR, "BXOR"}};
      const std::pair<int, const char*> floating[] = {
          {RCC_FLOAT16, "float16"}, {RCC_BFLOAT16, "bfloat16"}, {RCC_FLOAT32, "float32"}, {RCC_FLOAT64, "float64"}};
      for (const auto& [op, op_name] : bitwise) {
        for (const auto& [type, type_name] : floating) {
          if (type != RCC_FLOAT32 && op != RCC_BXOR) continue;  // every op on float32, BXOR on every float
          add(std::string(op_name) + "_on_" + type_name, CommKind::kLive,
              [op, type](Args& a) { a.op_value = op, a.datatype_value = type; }, RCC_ERR_INVALID_ARGUMENT,
              {"op RCC_" + std::string(op_name), "not defined"});
        }
      }
    }
    for (std::string array : f.count_arrays) {
      add("null_" + array, CommKind::kLive, [array](Args& a) { a.null_arrays.push_back(array); },
          RCC_ERR_INVALID_ARGUMENT, {array});
    }
    for (std::string array : f.displ_arrays) {
      add("null_" + array, CommKind::kLive, [array](Args& a) { a.null_arrays.push_back(array); },
          RCC_ERR_INVALID_ARGUMENT, {array});
      // displs[0] + counts[0] overflows size_t.
      add(array + "_plus_count_overflows", CommKind::kLive,
          [array](Args& a) { a.displ_array = array, a.bad_displ = std::numeric_limits<size_t>::max() - 1; },
          RCC_ERR_INVALID_ARGUMENT, {array});
      // The end of the block in elements fits in size_t, in bytes it does not.
      add(array + "_bytes_overflow", CommKind::kLive,
          [array](Args& a) { a.displ_array = array, a.bad_displ = std::numeric_limits<size_t>::max() / 4; },
          RCC_ERR_INVALID_ARGUMENT, {array});
    }
    if (f.rank_name != nullptr) {
      const std::string rank = f.rank_name;
      // -2, not -1: -1 is RCC_ANY_SOURCE, a valid peer of a receive (checked below for the sends).
      add(rank + "_negative", CommKind::kLive, [](Args& a) { a.rank = -2; }, RCC_ERR_INVALID_ARGUMENT,
          {rank + " -2 is out of range"});
      add(rank + "_very_negative", CommKind::kLive, [](Args& a) { a.rank = std::numeric_limits<int>::min(); },
          RCC_ERR_INVALID_ARGUMENT, {rank});
      const std::string name = f.name;
      if (name == "rcc_send" || name == "rcc_isend" || f.rank_name == std::string("root")) {
        add(rank + "_any_source", CommKind::kLive, [](Args& a) { a.rank = RCC_ANY_SOURCE; }, RCC_ERR_INVALID_ARGUMENT,
            {rank});
      }
      add(rank + "_too_big", CommKind::kLive, [](Args& a) { a.rank = 1; }, RCC_ERR_INVALID_ARGUMENT,
          {rank + " 1 is out of range"});
    }
    if (f.has_tag) {
      add("negative_tag", CommKind::kLive, [](Args& a) { a.tag = -5; }, RCC_ERR_INVALID_ARGUMENT, {"tag -5"});
    }
    if (f.nonblocking) {
      add("null_request", CommKind::kLive, [](Args& a) { a.request = nullptr; }, RCC_ERR_INVALID_ARGUMENT,
          {"request is NULL"});
    }
  }
  return all;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class BadCallTest : public testing::TestWithParam<Case> {};

TEST_P(BadCallTest, FailsNamingTheArgument) {
  const Case& c = GetParam();
  const Function f = functions()[c.function];
  std::vector<float> send(64, 1.0f), recv(64, 0.0f);
  rcc_request_t request = kUntouched;
  Args args;
  args.sendbuf = send.data();
  args.recvbuf = recv.data();
  args.request = &request;
  switch (c.comm) {
    case CommKind::kLive: args.comm = g_live; break;
    case CommKind::kNull: args.comm = nullptr; break;
    case CommKind::kAborted: args.comm = g_aborted; break;
    case CommKind::kDestroyed: args.comm = g_destroyed; break;
  }
  c.change(args);
  rcc_status_t status = f.call(args);
  const std::string message = rcc_last_error();
  EXPECT_EQ(status, c.expected) << rcc_status_string(status) << ": " << message;
  EXPECT_NE(message.find(f.name), std::string::npos) << "does not name the function: " << message;
  for (const std::string& needle : c.mentions) {
    EXPECT_NE(message.find(needle), std::string::npos) << "does not say '" << needle << "': " << message;
  }
  EXPECT_EQ(request, kUntouched) << "the request was written on failure";
  EXPECT_EQ(recv, std::vector<float>(64, 0.0f)) << "the receive buffer was written on failure";
}

INSTANTIATE_TEST_SUITE_P(AllFunctions, BadCallTest, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

// ---- Functions outside the table ----

void expect_error(rcc_status_t status, rcc_status_t expected, std::vector<std::string> mentions) {
  const std::string message = rcc_last_error();
  EXPECT_EQ(status, expected) << rcc_status_string(status) << ": " << message;
  for (const std::string& needle : mentions) {
    EXPECT_NE(message.find(needle), std::string::npos) << "does not say '" << needle << "': " << message;
  }
}

TEST(CommQueries, NullComm) {
  int value = -7;
  const char* name = "untouched";
  expect_error(rcc_comm_rank(nullptr, &value), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_rank", "comm is NULL"});
  expect_error(rcc_comm_size(nullptr, &value), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_size", "comm is NULL"});
  expect_error(rcc_comm_transport(nullptr, &name), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_transport", "comm is NULL"});
  rcc_footprint_t held{-7, -7, 7};
  expect_error(rcc_comm_footprint(nullptr, &held), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_footprint", "comm is NULL"});
  EXPECT_EQ(held.connected_peers, -7);
  EXPECT_EQ(value, -7);
  EXPECT_STREQ(name, "untouched");
}

TEST(CommQueries, NullOutputs) {
  expect_error(rcc_comm_rank(g_live, nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_rank", "rank is NULL"});
  expect_error(rcc_comm_size(g_live, nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_size", "size is NULL"});
  expect_error(rcc_comm_transport(g_live, nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_transport", "name is NULL"});
  expect_error(rcc_comm_footprint(g_live, nullptr), RCC_ERR_INVALID_ARGUMENT,
               {"rcc_comm_footprint", "footprint is NULL"});
}

TEST(CommQueries, DestroyedComm) {
  int value = -7;
  const char* name = "untouched";
  expect_error(rcc_comm_rank(g_destroyed, &value), RCC_ERR_INVALID_USAGE, {"rcc_comm_rank", "not a live"});
  expect_error(rcc_comm_size(g_destroyed, &value), RCC_ERR_INVALID_USAGE, {"rcc_comm_size", "not a live"});
  expect_error(rcc_comm_transport(g_destroyed, &name), RCC_ERR_INVALID_USAGE, {"rcc_comm_transport", "not a live"});
  rcc_footprint_t held{-7, -7, 7};
  expect_error(rcc_comm_footprint(g_destroyed, &held), RCC_ERR_INVALID_USAGE, {"rcc_comm_footprint", "not a live"});
  EXPECT_EQ(held.connected_peers, -7);
  EXPECT_EQ(value, -7);
  EXPECT_STREQ(name, "untouched");
}

TEST(CommQueries, AbortedComm) {
  int value = -7;
  expect_error(rcc_comm_rank(g_aborted, &value), RCC_ERR_ABORTED, {"rcc_comm_rank", "aborted"});
  expect_error(rcc_comm_size(g_aborted, &value), RCC_ERR_ABORTED, {"rcc_comm_size", "aborted"});
  EXPECT_EQ(value, -7);
}

TEST(CommLifecycle, AbortAndDestroyNullOrDestroyed) {
  expect_error(rcc_comm_abort(nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_abort", "comm is NULL"});
  expect_error(rcc_comm_destroy(nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_destroy", "comm is NULL"});
  expect_error(rcc_comm_abort(g_destroyed), RCC_ERR_INVALID_USAGE, {"rcc_comm_abort", "not a live"});
  expect_error(rcc_comm_destroy(g_destroyed), RCC_ERR_INVALID_USAGE, {"rcc_comm_destroy", "not a live"});
  EXPECT_EQ(rcc_comm_abort(g_aborted), RCC_SUCCESS) << "aborting twice is harmless: " << rcc_last_error();
}

TEST(CommInit, NullOutputs) {
  expect_error(rcc_comm_init(nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_init", "comm is NULL"});
  expect_error(rcc_get_unique_id(nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_get_unique_id", "id is NULL"});
  rcc_unique_id_t id{};
  expect_error(rcc_comm_init_rank(nullptr, id, 0, 1), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_init_rank", "comm is NULL"});
}

TEST(CommInit, RankAndSizeOutOfRange) {
  rcc_unique_id_t id{};
  rcc_comm_t comm = nullptr;
  expect_error(rcc_comm_init_rank(&comm, id, 0, 0), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_init_rank", "size 0"});
  expect_error(rcc_comm_init_rank(&comm, id, -1, 2), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_init_rank", "rank -1"});
  expect_error(rcc_comm_init_rank(&comm, id, 2, 2), RCC_ERR_INVALID_ARGUMENT, {"rcc_comm_init_rank", "rank 2"});
  EXPECT_EQ(comm, nullptr);
}

TEST(CommInit, GarbageUniqueId) {
  rcc_unique_id_t zeros{};
  rcc_comm_t comm = nullptr;
  expect_error(rcc_comm_init_rank(&comm, zeros, 0, 2), RCC_ERR_INVALID_ARGUMENT, {"unique id"});
  rcc_unique_id_t corrupted;
  ASSERT_EQ(rcc_get_unique_id(&corrupted), RCC_SUCCESS) << rcc_last_error();
  corrupted.internal[20] ^= 0x40;
  expect_error(rcc_comm_init_rank(&comm, corrupted, 0, 2), RCC_ERR_INVALID_ARGUMENT, {"unique id", "corrupted"});
  EXPECT_EQ(comm, nullptr);
}

TEST(Requests, NullAndStaleRequests) {
  int done = -1;
  expect_error(rcc_test(nullptr, &done), RCC_ERR_INVALID_ARGUMENT, {"rcc_test", "request is NULL"});
  expect_error(rcc_wait(nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_wait", "request is NULL"});
  EXPECT_EQ(done, -1);
  // A real request, completed by rcc_wait, is then stale.
  rcc_request_t request = nullptr;
  ASSERT_EQ(rcc_ibarrier(g_live, &request), RCC_SUCCESS) << rcc_last_error();
  expect_error(rcc_test(request, nullptr), RCC_ERR_INVALID_ARGUMENT, {"rcc_test", "done is NULL"});
  ASSERT_EQ(rcc_wait(request), RCC_SUCCESS) << rcc_last_error();
  expect_error(rcc_wait(request), RCC_ERR_INVALID_USAGE, {"rcc_wait", "not pending"});
  expect_error(rcc_test(request, &done), RCC_ERR_INVALID_USAGE, {"rcc_test", "not pending"});
  EXPECT_EQ(done, -1);
  // Handles rcc never gave out: inside a pooled request (misaligned) and outside the pool.
  rcc_request_t again = nullptr;
  ASSERT_EQ(rcc_ibarrier(g_live, &again), RCC_SUCCESS) << rcc_last_error();
  auto* inside = reinterpret_cast<rcc_request_t>(reinterpret_cast<char*>(again) + 8);
  expect_error(rcc_wait(inside), RCC_ERR_INVALID_USAGE, {"rcc_wait", "not pending"});
  alignas(64) static char foreign[256] = {};
  expect_error(rcc_wait(reinterpret_cast<rcc_request_t>(foreign)), RCC_ERR_INVALID_USAGE, {"rcc_wait", "not pending"});
  expect_error(rcc_test(reinterpret_cast<rcc_request_t>(foreign), &done), RCC_ERR_INVALID_USAGE,
               {"rcc_test", "not pending"});
  ASSERT_EQ(rcc_wait(again), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(done, -1);
}

TEST(Status, DatatypeSizes) {
  const std::pair<rcc_datatype_t, size_t> sizes[] = {
      {RCC_INT8, 1},    {RCC_UINT8, 1},    {RCC_INT32, 4},   {RCC_UINT32, 4},  {RCC_INT64, 8}, {RCC_UINT64, 8},
      {RCC_FLOAT16, 2}, {RCC_BFLOAT16, 2}, {RCC_FLOAT32, 4}, {RCC_FLOAT64, 8}, {RCC_INT16, 2}, {RCC_UINT16, 2}};
  static_assert(sizeof sizes / sizeof sizes[0] == RCC_NUM_DATATYPES);
  for (const auto& [type, bytes] : sizes) EXPECT_EQ(rcc_datatype_size(type), bytes) << "datatype " << type;
}

TEST(Status, OutOfRangeValues) {
  EXPECT_EQ(rcc_datatype_size(RCC_NUM_DATATYPES), 0u);
  EXPECT_EQ(rcc_datatype_size(static_cast<rcc_datatype_t>(-1)), 0u);
  ASSERT_NE(rcc_status_string(static_cast<rcc_status_t>(999)), nullptr);
  ASSERT_NE(rcc_status_string(static_cast<rcc_status_t>(-1)), nullptr);
  ASSERT_NE(rcc_last_error(), nullptr);
}

// rcc_sendrecv: the destination is one rank, never RCC_ANY_SOURCE (only a receive's source may be).
TEST(Sendrecv, DestMustBeARank) {
  float send[4] = {1, 2, 3, 4}, recv[4] = {0, 0, 0, 0};
  rcc_msg_info_t info{-7, -7, 7};
  expect_error(rcc_sendrecv(g_live, send, 4, RCC_ANY_SOURCE, 0, recv, 4, 0, 0, RCC_FLOAT32, &info),
               RCC_ERR_INVALID_ARGUMENT, {"rcc_sendrecv", "dest"});
  expect_error(rcc_sendrecv(g_live, send, 4, 1, 0, recv, 4, 0, 0, RCC_FLOAT32, &info), RCC_ERR_INVALID_ARGUMENT,
               {"rcc_sendrecv", "dest"});
  expect_error(rcc_sendrecv(g_live, send, 4, -2, 0, recv, 4, 0, 0, RCC_FLOAT32, &info), RCC_ERR_INVALID_ARGUMENT,
               {"rcc_sendrecv", "dest"});
  expect_error(rcc_sendrecv(g_live, send, 4, 0, 0, recv, 4, -2, 0, RCC_FLOAT32, &info), RCC_ERR_INVALID_ARGUMENT,
               {"rcc_sendrecv", "source"});
  EXPECT_EQ(recv[0], 0.0f);
  EXPECT_EQ(info.source, -7) << "info was written on failure";
  // To itself, from any source: fine.
  ASSERT_EQ(rcc_sendrecv(g_live, send, 4, 0, 3, recv, 4, RCC_ANY_SOURCE, 3, RCC_FLOAT32, &info), RCC_SUCCESS)
      << rcc_last_error();
  EXPECT_EQ(recv[3], 4.0f);
  EXPECT_EQ(info.source, 0);
}

// Exscan leaves rank 0's recvbuf untouched, so rank 0 may pass NULL (the communicators here have
// only rank 0); the inclusive scan may not.
TEST(Exscan, RankZeroMayPassNullRecvbuf) {
  float send[4] = {1, 2, 3, 4}, recv[4] = {-1, -1, -1, -1};
  ASSERT_EQ(rcc_exscan(g_live, send, nullptr, 4, RCC_FLOAT32, RCC_SUM), RCC_SUCCESS) << rcc_last_error();
  ASSERT_EQ(rcc_exscan(g_live, send, recv, 4, RCC_FLOAT32, RCC_MAX), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(recv[0], -1.0f) << "exscan wrote rank 0's recvbuf";
  rcc_request_t request = nullptr;
  ASSERT_EQ(rcc_iexscan(g_live, send, nullptr, 4, RCC_FLOAT32, RCC_SUM, &request), RCC_SUCCESS) << rcc_last_error();
  ASSERT_EQ(rcc_wait(request), RCC_SUCCESS) << rcc_last_error();
  int16_t bits[3] = {0x0f0f, 0x7000, -1}, out[3] = {0, 0, 0};
  ASSERT_EQ(rcc_exscan(g_live, bits, out, 3, RCC_INT16, RCC_BXOR), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(out[0], 0);
  expect_error(rcc_scan(g_live, send, nullptr, 4, RCC_FLOAT32, RCC_SUM), RCC_ERR_INVALID_ARGUMENT,
               {"rcc_scan", "recvbuf is NULL"});
  // On one rank the inclusive scan is a copy.
  ASSERT_EQ(rcc_scan(g_live, bits, out, 3, RCC_INT16, RCC_BAND), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(out[0], 0x0f0f);
  EXPECT_EQ(out[2], -1);
}

// Empty vector collectives with NULL buffers are valid no-ops; a count array is still needed.
TEST(VectorCollectives, ZeroCountsWithNullBuffers) {
  const size_t zero[1] = {0}, at[1] = {0};
  ASSERT_EQ(rcc_allgatherv(g_live, nullptr, 0, nullptr, zero, at, RCC_INT32), RCC_SUCCESS) << rcc_last_error();
  ASSERT_EQ(rcc_alltoallv(g_live, nullptr, zero, at, nullptr, zero, at, RCC_UINT16), RCC_SUCCESS) << rcc_last_error();
  ASSERT_EQ(rcc_gatherv(g_live, nullptr, 0, nullptr, zero, at, RCC_INT8, 0), RCC_SUCCESS) << rcc_last_error();
  ASSERT_EQ(rcc_scatterv(g_live, nullptr, zero, at, nullptr, 0, RCC_FLOAT64, 0), RCC_SUCCESS) << rcc_last_error();
  ASSERT_EQ(rcc_reduce_scatterv(g_live, nullptr, nullptr, zero, RCC_INT16, RCC_BOR), RCC_SUCCESS) << rcc_last_error();
  expect_error(rcc_reduce_scatterv(g_live, nullptr, nullptr, nullptr, RCC_INT16, RCC_BOR), RCC_ERR_INVALID_ARGUMENT,
               {"rcc_reduce_scatterv", "recvcounts"});
  // One rank: each is a copy between the displaced blocks.
  const int32_t in[3] = {7, 8, 9};
  int32_t out[6] = {-1, -1, -1, -1, -1, -1};
  const size_t three[1] = {3}, two[1] = {2};
  ASSERT_EQ(rcc_allgatherv(g_live, in, 3, out, three, two, RCC_INT32), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(std::vector<int32_t>(out, out + 6), (std::vector<int32_t>{-1, -1, 7, 8, 9, -1}));
  ASSERT_EQ(rcc_reduce_scatterv(g_live, in, out, three, RCC_INT32, RCC_BXOR), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(std::vector<int32_t>(out, out + 6), (std::vector<int32_t>{7, 8, 9, 8, 9, -1}));
}

// The live communicator still works after all of the above.
TEST(Sanity, LiveCommStillWorks) {
  float x = 2.5f, y = 0;
  ASSERT_EQ(rcc_allreduce(g_live, &x, &y, 1, RCC_FLOAT32, RCC_SUM), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(y, 2.5f);
}

}  // namespace
