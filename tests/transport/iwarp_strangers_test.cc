// Strangers on the iWARP connection manager's port (run in the RDMA VM on siw, label verbs-siw).
// Three ranks (threads, each with its own verbs transport) set up a job while this test, knowing
// only what a port scan finds (each rank's listener address), sends connection requests that no
// rank of the job sends: no private data, random bytes, a wrong secret, and with the right secret
// ranks out of range (2^31 and 2^32-1, which once became a negative index into the peer table),
// the rank itself, a higher rank and a wrong job size; then raw TCP: random bytes, a connection
// that never sends and 1000 connections at once. No request may be accepted, the job must connect
// and move data, the ranks count the refusals, and once set up nothing listens.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>

#include "rank_threads.h"
#include "transport/verbs/connect_request.h"
#include "transport/verbs/verbs_transport.h"
#include "transport/verbs/wire.h"

namespace transport_test {
namespace {

using rcc::transport::verbs::VerbsInfo;

constexpr int kRanks = 3;
const char* const kSecret = "the job's secret, which strangers do not know";

struct Listener {
  uint32_t ipv4 = 0;  // network byte order
  uint16_t port = 0;
};

// One stranger's connection request, sent on its own rdma_cm id; result() says how it ended.
class StrangerRequest {
 public:
  StrangerRequest(rdma_event_channel* channel, const Listener& target, std::vector<uint8_t> private_data)
      : channel_(channel), private_data_(std::move(private_data)) {
    EXPECT_EQ(rdma_create_id(channel_, &id_, this, RDMA_PS_TCP), 0) << std::strerror(errno);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = target.ipv4;
    address.sin_port = htons(target.port);
    if (rdma_resolve_addr(id_, nullptr, reinterpret_cast<sockaddr*>(&address), 5000) != 0) {
      outcome_ = RDMA_CM_EVENT_ADDR_ERROR;
      ended_at_once_ = true;
    }
  }
  bool ended_at_once() const { return ended_at_once_; }
  ~StrangerRequest() {
    if (id_ != nullptr) {
      if (id_->qp != nullptr) rdma_destroy_qp(id_);
      rdma_destroy_id(id_);
    }
  }
  // Steps the request on an event of its id; true once it has ended.
  bool on_event(const rdma_cm_event& event) {
    switch (event.event) {
      case RDMA_CM_EVENT_ADDR_RESOLVED: EXPECT_EQ(rdma_resolve_route(id_, 5000), 0); return false;
      case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        ibv_qp_init_attr attr = {};
        attr.cap.max_send_wr = attr.cap.max_recv_wr = 4;
        attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
        attr.qp_type = IBV_QPT_RC;
        EXPECT_EQ(rdma_create_qp(id_, nullptr, &attr), 0) << std::strerror(errno);
        rdma_conn_param param = {};
        param.private_data = private_data_.empty() ? nullptr : private_data_.data();
        param.private_data_len = static_cast<uint8_t>(private_data_.size());
        param.responder_resources = param.initiator_depth = 1;
        param.retry_count = 7;
        if (rdma_connect(id_, &param) != 0) {  // the port refused at once (closed, or overloaded)
          outcome_ = RDMA_CM_EVENT_CONNECT_ERROR;
          return true;
        }
        return false;
      }
      default: outcome_ = event.event; return true;
    }
  }
  rdma_cm_event_type outcome() const { return outcome_; }
  rdma_cm_id* id() const { return id_; }

 private:
  rdma_event_channel* channel_;
  std::vector<uint8_t> private_data_;
  rdma_cm_id* id_ = nullptr;
  rdma_cm_event_type outcome_ = RDMA_CM_EVENT_TIMEWAIT_EXIT;  // none yet
  bool ended_at_once_ = false;
};

// Runs the requests' events until every one has ended or the deadline passes.
void finish(rdma_event_channel* channel, std::vector<std::unique_ptr<StrangerRequest>>& requests) {
  size_t ended = 0;
  for (const auto& request : requests) ended += request->ended_at_once();
  const auto deadline = std::chrono::steady_clock::now() + kTimeout;
  while (ended < requests.size() && std::chrono::steady_clock::now() < deadline) {
    pollfd fd = {channel->fd, POLLIN, 0};
    if (::poll(&fd, 1, 100) <= 0) continue;
    rdma_cm_event* event = nullptr;
    if (rdma_get_cm_event(channel, &event) != 0) continue;
    const rdma_cm_event copy = *event;
    rdma_ack_cm_event(event);
    auto* request = static_cast<StrangerRequest*>(copy.id->context);
    if (request->on_event(copy)) ++ended;
  }
  EXPECT_EQ(ended, requests.size()) << "stranger requests left unanswered";
}

std::vector<uint8_t> request_bytes(uint32_t rank, uint32_t size, const std::string& secret) {
  std::vector<uint8_t> bytes(rcc::transport::verbs::kConnectRequestBytes);
  rcc::transport::verbs::encode_connect_request(static_cast<int>(rank), static_cast<int>(size), secret, bytes.data());
  return bytes;
}

// What no rank of this job sends to rank `me`.
std::vector<std::vector<uint8_t>> bad_requests(int me) {
  std::mt19937 random(me);
  std::vector<uint8_t> noise(rcc::transport::verbs::kConnectRequestBytes);
  for (uint8_t& b : noise) b = static_cast<uint8_t>(random());
  std::vector<uint8_t> old_format = request_bytes(0x80000000u, kRanks, kSecret);
  old_format.resize(12);  // the request before it carried a secret: magic, rank, size
  return {
      {},                                                         // no private data
      {1, 2, 3, 4, 5, 6, 7, 8},                                   // too short
      noise,                                                      // random bytes
      old_format,                                                 // the old form, with a rank of 2^31
      request_bytes(0, kRanks, "a guess"),                        // wrong secret
      request_bytes(0x80000000u, kRanks, kSecret),                // rank 2^31: negative as an int
      request_bytes(0xffffffffu, kRanks, kSecret),                // rank -1 as an int
      request_bytes(static_cast<uint32_t>(me), kRanks, kSecret),  // itself: only lower ranks connect
      request_bytes(kRanks + 5, kRanks, kSecret),                 // not a rank of the job
      request_bytes(0, kRanks + 1, kSecret),                      // another job size
  };
}

int tcp_connect(const Listener& target, bool wait) {
  int fd = socket(AF_INET, SOCK_STREAM | (wait ? 0 : SOCK_NONBLOCK), 0);
  if (fd < 0) return -1;
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = target.ipv4;
  address.sin_port = htons(target.port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 && (wait || errno != EINPROGRESS)) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST(IwarpStrangers, EveryStrangerIsRefusedAndTheJobConnects) {
  ScopedEnv device("RCC_IB_DEVICE", "siw0");
  rlimit files = {};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::min<rlim_t>(files.rlim_max, 4096);
  setrlimit(RLIMIT_NOFILE, &files);

  std::vector<std::unique_ptr<Transport>> transports(kRanks);
  std::vector<std::vector<uint8_t>> blobs(kRanks);
  std::vector<Listener> listeners(kRanks);
  for (int rank = 0; rank < kRanks; ++rank) {
    rcc::transport::Options options;
    options.rank = rank;
    options.size = kRanks;
    options.secret = kSecret;
    ASSERT_EQ(rcc::transport::create_verbs(options, &transports[rank]), RCC_SUCCESS) << rcc::last_error();
    ASSERT_EQ(transports[rank]->local_address(&blobs[rank]), RCC_SUCCESS) << rcc::last_error();
    rcc::transport::verbs::RankAddress address;
    ASSERT_EQ(rcc::transport::verbs::decode_address(blobs[rank].data(), blobs[rank].size(), &address), RCC_SUCCESS);
    ASSERT_EQ(address.kind, rcc::transport::verbs::LinkKind::kIwarp) << "this test needs siw";
    listeners[rank] = {address.ipv4, address.cm_port};
  }

  // Ranks 1 and 2 start set-up and wait for rank 0, which starts last. Meanwhile: requests to
  // both (each must be refused by the rank itself), then raw TCP on rank 2's port (random bytes, a
  // connection that never sends, 1000 at once), then more requests while rank 0 connects.
  std::vector<rcc::Status> connected(kRanks, RCC_ERR_INTERNAL);
  std::vector<std::string> messages(kRanks);
  auto set_up = [&](int rank) {
    connected[rank] = transports[rank]->connect_all(blobs);
    messages[rank] = rcc::last_error();
  };
  std::thread rank1(set_up, 1), rank2(set_up, 2);
  rdma_event_channel* channel = rdma_create_event_channel();
  ASSERT_NE(channel, nullptr);
  std::vector<std::unique_ptr<StrangerRequest>> early, late;
  for (int target : {1, 2}) {
    for (auto& bytes : bad_requests(target)) {
      early.push_back(std::make_unique<StrangerRequest>(channel, listeners[target], bytes));
    }
  }
  finish(channel, early);

  std::vector<int> sockets;
  if (int fd = tcp_connect(listeners[2], true); fd >= 0) {
    char noise[256];
    for (size_t i = 0; i < sizeof noise; ++i) noise[i] = static_cast<char>(i * 37);
    EXPECT_GT(send(fd, noise, sizeof noise, MSG_NOSIGNAL), 0);
    sockets.push_back(fd);
  }
  if (int fd = tcp_connect(listeners[2], true); fd >= 0) sockets.push_back(fd);  // silent
  for (int i = 0; i < 1000; ++i) {
    if (int fd = tcp_connect(listeners[2], false); fd >= 0) sockets.push_back(fd);
  }
  EXPECT_GT(sockets.size(), 0u);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::thread rank0(set_up, 0);  // its connection to rank 2 may meet the flood: it dials again
  for (auto& bytes : bad_requests(2)) late.push_back(std::make_unique<StrangerRequest>(channel, listeners[2], bytes));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (int fd : sockets) close(fd);
  sockets.clear();
  rank0.join();
  rank1.join();
  rank2.join();
  for (int rank = 0; rank < kRanks; ++rank) ASSERT_EQ(connected[rank], RCC_SUCCESS) << messages[rank];
  finish(channel, late);
  for (const auto& request : early) {
    EXPECT_NE(request->outcome(), RDMA_CM_EVENT_ESTABLISHED) << "a stranger's request was accepted";
  }
  for (const auto& request : late) {
    EXPECT_NE(request->outcome(), RDMA_CM_EVENT_ESTABLISHED) << "a stranger's request was accepted";
  }

  // Each early request was refused by the rank it reached; late ones may have met a closed port.
  VerbsInfo info[kRanks];
  for (int rank = 0; rank < kRanks; ++rank) {
    ASSERT_TRUE(rcc::transport::verbs::query(*transports[rank], &info[rank]));
    EXPECT_FALSE(info[rank].listening) << "rank " << rank << " still listens after set-up";
  }
  // Most requests reach the rank, which refuses them itself (the kernel's iWARP connection
  // manager may end a few first, with a connect error).
  EXPECT_GE(info[1].refused_connections, bad_requests(1).size() / 2);
  EXPECT_LE(info[1].refused_connections, bad_requests(1).size());
  EXPECT_GE(info[2].refused_connections, bad_requests(2).size() / 2);
  EXPECT_LE(info[2].refused_connections, 2 * bad_requests(2).size());
  EXPECT_EQ(info[0].refused_connections, 0u);

  // Once set up, nobody listens: a request meets a closed port.
  std::vector<std::unique_ptr<StrangerRequest>> after;
  after.push_back(std::make_unique<StrangerRequest>(channel, listeners[2], request_bytes(0, kRanks, kSecret)));
  finish(channel, after);
  EXPECT_NE(after[0]->outcome(), RDMA_CM_EVENT_ESTABLISHED);
  early.clear();
  late.clear();
  after.clear();
  rdma_destroy_event_channel(channel);

  // And the job works: every rank writes a notified word to every other.
  std::vector<uint64_t> words(kRanks * kRanks, 0);
  std::vector<std::unique_ptr<Memory>> memory(kRanks);
  std::vector<std::vector<uint8_t>> keys(kRanks);
  for (int rank = 0; rank < kRanks; ++rank) {
    ASSERT_EQ(transports[rank]->register_memory(&words[rank * kRanks], kRanks * sizeof(uint64_t), &memory[rank]),
              RCC_SUCCESS);
    ASSERT_EQ(transports[rank]->pack_key(*memory[rank], &keys[rank]), RCC_SUCCESS);
  }
  for (int rank = 0; rank < kRanks; ++rank) words[rank * kRanks + rank] = 1000 + rank;
  for (int rank = 0; rank < kRanks; ++rank) {
    for (int peer = 0; peer < kRanks; ++peer) {
      if (peer == rank) continue;
      std::unique_ptr<RemoteKey> key;
      ASSERT_EQ(transports[rank]->import_key(peer, keys[peer], &key), RCC_SUCCESS) << rcc::last_error();
      const uint64_t target = reinterpret_cast<uint64_t>(&words[peer * kRanks + rank]);
      ASSERT_EQ(transports[rank]->write(peer, &words[rank * kRanks + rank], sizeof(uint64_t), *memory[rank], target,
                                        *key, true, 7, 1),
                RCC_SUCCESS)
          << rcc::last_error();
      int notices = 0, done = 0;
      const auto deadline = std::chrono::steady_clock::now() + kTimeout;
      while ((notices == 0 || done == 0) && std::chrono::steady_clock::now() < deadline) {
        std::vector<Event> events;
        ASSERT_EQ(transports[peer]->poll(&events), RCC_SUCCESS);
        for (const Event& e : events) notices += e.kind == EventKind::kNotify && e.peer == rank;
        events.clear();
        ASSERT_EQ(transports[rank]->poll(&events), RCC_SUCCESS);
        for (const Event& e : events) done += e.kind == EventKind::kWriteDone && e.cookie == 1;
      }
      ASSERT_EQ(notices, 1) << rank << " -> " << peer;
      EXPECT_EQ(words[peer * kRanks + rank], static_cast<uint64_t>(1000 + rank));
    }
  }
  for (int rank = 0; rank < kRanks; ++rank) memory[rank].reset();
}

}  // namespace
}  // namespace transport_test
