// Internal query API of the verbs backend, for tests and diagnostics (not part of the C API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/transport.h"
#include "transport/verbs/wire.h"

namespace rcc::transport::verbs {

struct VerbsInfo {
  std::string device;
  int port = 0;
  LinkKind kind = LinkKind::kRoce;
  int gid_index = -1;           // RoCE only
  std::string gid;              // RoCE only, text form
  bool uses_immediate = false;  // false: notified writes are a write followed by a send
  size_t max_chunk = 0;         // writes are split into pieces of at most this many bytes
  int send_queue_depth = 0;
  int receives_per_peer = 0;
  int max_inline = -1;  // writes up to this size are posted inline (-1: no queue pair yet)
  // Counters since creation.
  uint64_t writes_with_immediate = 0;  // RDMA WRITE_WITH_IMM work requests
  uint64_t notify_sends = 0;           // SENDs carrying a notice (write+send path)
  uint64_t work_requests = 0;          // every posted send-side work request
  uint64_t writes_without_notice = 0;  // write() calls to a peer with notify false (polled delivery's)
  uint64_t queued_in_software = 0;     // requests that waited in software for room in the send queue
  uint64_t inline_writes = 0;          // work requests posted with IBV_SEND_INLINE
  uint64_t completion_wakeups = 0;     // sleeps in wait_for_event ended by a completion event
  uint64_t receive_completions = 0;    // notices taken off the completion queue (receives consumed)
  uint64_t send_completions = 0;       // signalled send-side completions taken off it
  uint64_t refused_connections = 0;    // iWARP: connection requests rejected (not from this job's ranks)
  bool listening = false;              // iWARP: the connection listener is open (until set-up ends)
};

// False when transport is not a verbs transport.
bool query(Transport& transport, VerbsInfo* out);
// Lowers the split size so tests can cover splitting without GiB buffers.
bool set_max_chunk_for_testing(Transport& transport, size_t bytes);

}  // namespace rcc::transport::verbs
