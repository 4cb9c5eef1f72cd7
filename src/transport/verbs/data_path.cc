// The verbs data path: writes become work requests (split, inline, queued in software when the send
// queue is full), completions become events; receives carry notices (immediates, or the iWARP
// notice send).
#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/log.h"
#include "transport/verbs/transport_impl.h"

namespace rcc::transport::verbs {

Status VerbsTransport::write(int peer, const void* src, size_t length, Memory& local, uint64_t remote_addr,
                             RemoteKey& remote, bool notify, uint32_t imm, uint64_t cookie) {
  if (peer < 0 || peer >= options_.size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write: peer %d is not in 0..%d", peer, options_.size - 1);
  }
  auto* memory = local.owner == this ? static_cast<VerbsMemory*>(&local) : nullptr;
  auto* key = remote.owner == this ? static_cast<VerbsRemoteKey*>(&remote) : nullptr;
  if (memory == nullptr || memory->mr == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: local memory was not registered by the verbs transport",
                peer);
  }
  if (key == nullptr || key->peer != peer) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: remote key was imported for rank %d", peer,
                key == nullptr ? -1 : key->peer);
  }
  auto src_addr = reinterpret_cast<uintptr_t>(src);
  auto base = reinterpret_cast<uintptr_t>(memory->addr);
  if (src_addr < base || length > memory->length || src_addr - base > memory->length - length) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: source %p+%zu lies outside the registered %p+%zu", peer,
                src, length, memory->addr, memory->length);
  }
  if (remote_addr < key->key.addr || length > key->key.length ||
      remote_addr - key->key.addr > key->key.length - length) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: destination 0x%llx+%zu lies outside its key 0x%llx+%llu",
                peer, static_cast<unsigned long long>(remote_addr), length,
                static_cast<unsigned long long>(key->key.addr), static_cast<unsigned long long>(key->key.length));
  }
  Peer& p = peers_[peer];
  if (!p.connected) return fail(RCC_ERR_INVALID_USAGE, "write to rank %d before connect_all", peer);
  if (p.failed) {
    return fail(RCC_ERR_PEER_FAILED, "write to rank %d (%s): its connection already failed", peer,
                describe_peer(peer).c_str());
  }

  if (peer == options_.rank) {
    // Self: a copy, with the events a loopback write would give.
    if (length > 0) std::memmove(reinterpret_cast<void*>(remote_addr), src, length);
    if (notify) pending_.push_back(Event{EventKind::kNotify, peer, 0, imm, length, RCC_SUCCESS, {}});
    if (cookie != 0) pending_.push_back(Event{EventKind::kWriteDone, peer, cookie, 0, 0, RCC_SUCCESS, {}});
    return RCC_SUCCESS;
  }

  if (!notify) ++counters_.writes_without_notice;
  PendingWr wr;
  wr.lkey = memory->mr->lkey;
  wr.rkey = key->key.rkey;
  if ((notify && use_imm_ && length <= max_chunk_) || (!notify && length - 1 < max_chunk_)) {
    // One request (every eager message): posted at once unless others wait ahead of it.
    wr.op = notify ? PendingWr::Op::kWriteImm : PendingWr::Op::kWrite;
    wr.local_addr = src_addr;
    wr.length = static_cast<uint32_t>(length);
    wr.remote_addr = remote_addr;
    wr.imm = imm;
    wr.cookie = cookie;
    return submit(peer, wr);
  }
  // Pieces of at most max_chunk_; the notice (if any) is a send after them on the same QP.
  for (size_t offset = 0; offset < length; offset += max_chunk_) {
    size_t piece = std::min(max_chunk_, length - offset);
    wr.op = PendingWr::Op::kWrite;
    wr.local_addr = src_addr + offset;
    wr.length = static_cast<uint32_t>(piece);
    wr.remote_addr = remote_addr + offset;
    wr.cookie = (!notify && offset + piece == length) ? cookie : 0;
    RCC_RETURN_IF_ERROR(submit(peer, wr));
  }
  if (notify) {
    PendingWr send;
    send.op = PendingWr::Op::kNotifySend;
    send.imm = imm;
    send.notify_length = length;
    send.cookie = cookie;
    RCC_RETURN_IF_ERROR(submit(peer, send));
  } else if (length == 0 && cookie != 0) {
    pending_.push_back(Event{EventKind::kWriteDone, peer, cookie, 0, 0, RCC_SUCCESS, {}});
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::submit(int peer, const PendingWr& wr) {
  Peer& p = peers_[peer];
  // Posted at once when nothing waits ahead of it and the send queue has room (no queue push and
  // pop per write); otherwise behind the others, posted from poll() as completions free room.
  if (p.queue.empty() && p.posted - p.completed < depth_) return post_one(peer, wr);
  p.queue.push_back(wr);
  ++counters_.queued_in_software;
  return RCC_SUCCESS;
}

Status VerbsTransport::post_queued(int peer) {
  Peer& p = peers_[peer];
  while (!p.queue.empty() && !p.failed && p.posted - p.completed < depth_) {
    RCC_RETURN_IF_ERROR(post_one(peer, p.queue.front()));
    p.queue.pop_front();
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::post_one(int peer, const PendingWr& pending) {
  Peer& p = peers_[peer];
  uint64_t seq = p.posted;
  uint32_t ring = static_cast<uint32_t>(seq % depth_);
  // Signal every write() that wants a kWriteDone, and at least every depth/2 requests so a full
  // send queue always has a signalled request in flight to free it.
  bool signalled = pending.cookie != 0 || p.unsignalled + 1 >= std::max<uint32_t>(1, depth_ / 2);
  ibv_sge sge = {pending.local_addr, pending.length, pending.lkey};
  ibv_send_wr wr = {};
  wr.wr_id = make_wr_id(false, peer, static_cast<uint32_t>(seq));
  wr.sg_list = &sge;
  wr.num_sge = pending.length > 0 ? 1 : 0;
  wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
  if (pending.op != PendingWr::Op::kNotifySend && pending.length > 0 && pending.length <= p.max_inline) {
    wr.send_flags |= IBV_SEND_INLINE;
  }
  switch (pending.op) {
    case PendingWr::Op::kWrite: wr.opcode = IBV_WR_RDMA_WRITE; break;
    case PendingWr::Op::kWriteImm:
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.imm_data = htonl(pending.imm);
      break;
    case PendingWr::Op::kNotifySend: {
      NotifyMessage* slot = &send_slots_[static_cast<size_t>(peer) * depth_ + ring];
      *slot = NotifyMessage{pending.imm, kNotifyMagic, pending.notify_length};
      sge = {reinterpret_cast<uintptr_t>(slot), sizeof(NotifyMessage), send_mr_->lkey};
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND;
      if (sizeof(NotifyMessage) <= p.max_inline) wr.send_flags |= IBV_SEND_INLINE;
      break;
    }
  }
  if (wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
    wr.wr.rdma.remote_addr = pending.remote_addr;
    wr.wr.rdma.rkey = pending.rkey;
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(p.qp, &wr, &bad);
  if (rc != 0) {
    rc = rc < 0 ? -rc : rc;  // libsiw returns negative errnos
    std::string message = "verbs: ibv_post_send to rank " + std::to_string(peer) + " (" + describe_peer(peer) +
                          ") on " + describe_local() + ": " + std::strerror(rc);
    fail_peer(peer, RCC_ERR_TRANSPORT, message);
    return fail(RCC_ERR_TRANSPORT, "%s", message.c_str());
  }
  p.cookies[ring] = pending.cookie;
  p.unsignalled = signalled ? 0 : p.unsignalled + 1;
  ++p.posted;
  ++counters_.work_requests;
  if (pending.op == PendingWr::Op::kWriteImm) ++counters_.writes_with_immediate;
  if (pending.op == PendingWr::Op::kNotifySend) ++counters_.notify_sends;
  if ((wr.send_flags & IBV_SEND_INLINE) != 0) ++counters_.inline_writes;
  return RCC_SUCCESS;
}

Status VerbsTransport::post_receive(int peer, uint32_t slot) {
  NotifyMessage* buffer = &recv_slots_[static_cast<size_t>(peer) * receives_ + slot];
  ibv_sge sge = {reinterpret_cast<uintptr_t>(buffer), sizeof(NotifyMessage), recv_mr_->lkey};
  ibv_recv_wr wr = {};
  wr.wr_id = make_wr_id(true, peer, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(peers_[peer].qp, &wr, &bad);
  if (rc != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_post_recv toward rank %d on %s: %s", peer, port_.device.c_str(),
                std::strerror(rc < 0 ? -rc : rc));
  }
  return RCC_SUCCESS;
}

void VerbsTransport::drain_completions() {
  ibv_wc wcs[32];
  for (;;) {
    int n = ibv_poll_cq(cq_, 32, wcs);
    if (n < 0) {
      fail_peer(-1, RCC_ERR_TRANSPORT, "verbs: ibv_poll_cq failed on " + describe_local());
      return;
    }
    for (int i = 0; i < n; ++i) handle_completion(wcs[i]);
    if (n < 32) return;
  }
}

void VerbsTransport::handle_completion(const ibv_wc& wc) {
  int peer = wr_peer(wc.wr_id);
  if (peer < 0 || peer >= options_.size) return;  // cannot happen: every wr_id is ours
  Peer& p = peers_[peer];
  if (p.qp == nullptr || wc.qp_num != p.qp->qp_num) return;  // of a queue pair given up during set-up (iWARP)
  bool recv = (wc.wr_id & kRecvBit) != 0;
  if (wc.status != IBV_WC_SUCCESS) {
    if (p.failed) return;  // the flushes that follow the first error
    char vendor[32];
    std::snprintf(vendor, sizeof vendor, " (vendor error 0x%x); ", wc.vendor_err);
    std::string message = "verbs: " + std::string(recv ? "receive from" : "write to") + " rank " +
                          std::to_string(peer) + " (" + describe_peer(peer) + ") failed on " + describe_local() + ": " +
                          ibv_wc_status_str(wc.status) + vendor + completion_error_hint(wc.status);
    fail_peer(peer, completion_error_status(wc.status), message);
    return;
  }
  if (recv) {
    ++counters_.receive_completions;
    auto slot = static_cast<uint32_t>(wc.wr_id & 0xffffffffu);
    Event event{EventKind::kNotify, peer, 0, 0, 0, RCC_SUCCESS, {}};
    if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
      event.imm = ntohl(wc.imm_data);
      event.length = wc.byte_len;
    } else {
      const NotifyMessage& notice = recv_slots_[static_cast<size_t>(peer) * receives_ + slot];
      if (wc.byte_len != sizeof(NotifyMessage) || notice.magic != kNotifyMagic) {
        fail_peer(peer, RCC_ERR_TRANSPORT,
                  "verbs: rank " + std::to_string(peer) + " sent a " + std::to_string(wc.byte_len) +
                      "-byte message that is not an rcc notice (mixed rcc builds?)");
        return;
      }
      event.imm = notice.imm;
      event.length = notice.length;
    }
    pending_.push_back(event);
    if (post_receive(peer, slot) != RCC_SUCCESS) fail_peer(peer, RCC_ERR_TRANSPORT, last_error());
    return;
  }
  // A signalled send completion: it and every earlier request of this QP are done (in order).
  ++counters_.send_completions;
  uint64_t seq =
      p.completed + static_cast<uint32_t>(static_cast<uint32_t>(wc.wr_id) - static_cast<uint32_t>(p.completed));
  for (; p.completed <= seq && p.completed < p.posted; ++p.completed) {
    uint64_t& cookie = p.cookies[p.completed % depth_];
    if (cookie != 0) pending_.push_back(Event{EventKind::kWriteDone, peer, cookie, 0, 0, RCC_SUCCESS, {}});
    cookie = 0;
  }
  post_queued(peer);
}

Status VerbsTransport::poll(std::vector<Event>* events) {
  if (events == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "poll: events is null");
  drain_completions();
  // Fatal async events are rare, and each look is a read() that almost always fails: look every
  // 65536 polls (every 1024 was a system call per ~3 round trips of a 1 KiB ping-pong on rxe). A
  // fatal error also fails the outstanding requests' completions; wait_for_event looks every time.
  if ((++polls_ & 0xffff) == 0) handle_async_events();
  if (!pending_.empty()) {
    if (events->empty()) {
      events->swap(pending_);  // the usual case: no per-event moves
    } else {
      events->insert(events->end(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
    }
    pending_.clear();
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::wait_for_event(int timeout_ms) {
  if (!pending_.empty()) return RCC_SUCCESS;
  if (ibv_req_notify_cq(cq_, 0) != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_req_notify_cq on %s: %s", port_.device.c_str(), std::strerror(errno));
  }
  // Completions that arrived before the request above raise no event: look once more.
  drain_completions();
  if (!pending_.empty()) return RCC_SUCCESS;
  pollfd fds[2] = {{channel_->fd, POLLIN, 0}, {ctx_->async_fd, POLLIN, 0}};
  int n = ::poll(fds, 2, timeout_ms < 0 ? -1 : timeout_ms);
  if (n < 0 && errno != EINTR)
    return fail(RCC_ERR_TRANSPORT, "verbs: poll on completion channel: %s", std::strerror(errno));
  if (n > 0 && (fds[0].revents & POLLIN) != 0) {
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    while (ibv_get_cq_event(channel_, &cq, &context) == 0) {
      ibv_ack_cq_events(cq, 1);
      ++counters_.completion_wakeups;
    }
  }
  if (n > 0 && (fds[1].revents & POLLIN) != 0) handle_async_events();
  return RCC_SUCCESS;
}

}  // namespace rcc::transport::verbs
