// The eager slot layout (slot_layout.h).
#include "p2p/slot_layout.h"

#include <algorithm>
#include <utility>

#include "p2p/wire.h"

namespace rcc::p2p {
namespace {

constexpr size_t kSlotAlign = 64;

}  // namespace

SlotGeometry slot_geometry(size_t eager_limit) {
  // The anchor byte lies after the longest message's tail word: no headed or bare message reaches it.
  const size_t bytes = tail_offset(eager_limit) + kTailBytes + kAnchorReserve;
  return SlotGeometry{eager_limit, (bytes + kSlotAlign - 1) / kSlotAlign * kSlotAlign};
}

size_t far_eager_limit(size_t near_limit, size_t net_limit, size_t copy_bytes, size_t budget_bytes, uint32_t slots,
                       int max_far_peers) {
  if (copy_bytes == 0 || max_far_peers <= 0 || net_limit <= near_limit) return near_limit;
  size_t limit = net_limit;
  // A slot message is the payload with a header and a tail word around it: all of it must be copied.
  const size_t overhead = slot_geometry(0).slot_bytes;
  limit = copy_bytes > overhead ? std::min(limit, copy_bytes - overhead) : 0;
  const auto fits = [&](size_t candidate) {
    return 2 * static_cast<size_t>(slots) * slot_geometry(candidate).slot_bytes * static_cast<size_t>(max_far_peers) <=
           budget_bytes;
  };
  while (limit > near_limit && !fits(limit)) limit /= 2;
  return std::max(limit, near_limit);
}

int max_far_peers(const bootstrap::HostMap& hosts) {
  size_t smallest = static_cast<size_t>(hosts.size());
  for (int h = 0; h < hosts.hosts(); ++h) smallest = std::min(smallest, hosts.ranks_on(h).size());
  return hosts.size() - static_cast<int>(smallest);
}

SlotLayout::SlotLayout(bootstrap::HostMap hosts, uint32_t slots, SlotGeometry near, SlotGeometry far)
    : hosts_(std::move(hosts)), slots_(slots), near_(near), far_(far) {
  has_far_ = hosts_.hosts() > 1 && far_.eager_limit > near_.eager_limit;
  if (!has_far_) far_ = near_;
}

bool SlotLayout::far(int owner, int peer) const { return has_far_ && hosts_.host_of(owner) != hosts_.host_of(peer); }

size_t SlotLayout::near_before(int owner, int before) const {
  const std::vector<int>& mates = hosts_.ranks_on(hosts_.host_of(owner));
  const size_t count = static_cast<size_t>(std::lower_bound(mates.begin(), mates.end(), before) - mates.begin());
  return count - (owner < before ? 1 : 0);
}

size_t SlotLayout::offset(int owner, int peer) const {
  const size_t before = static_cast<size_t>(peer) - (owner < peer ? 1 : 0);  // peers before it, owner excluded
  if (!has_far_) return before * slots_ * near_.slot_bytes;
  const size_t near = near_before(owner, peer);
  return (near * near_.slot_bytes + (before - near) * far_.slot_bytes) * slots_;
}

size_t SlotLayout::area_bytes(int owner) const { return offset(owner, hosts_.size()); }

}  // namespace rcc::p2p
