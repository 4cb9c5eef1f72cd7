// Where each peer's eager slots lie in a rank's receive area (and the same in its staging area),
// and how large they are. Peers on other hosts reached through a backend that copies their
// messages anyway (Transport::network_copy_bytes: UCX over TCP) get slots for a larger eager limit
// (RCC_EAGER_LIMIT_NET): a rendezvous there saves no copy and costs a round trip between the
// hosts. Every rank computes every rank's layout from the same host map and settings, so a sender
// knows where its slots lie in the receiver's area without asking.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bootstrap/hosts.h"

namespace rcc::p2p {

struct SlotGeometry {
  size_t eager_limit = 0;  // the largest eager payload
  size_t slot_bytes = 0;   // header, payload, tail word and anchor byte, 64-aligned
};

// The slots a given eager limit needs.
SlotGeometry slot_geometry(size_t eager_limit);

// The eager limit toward peers on other hosts: net_limit, capped so that a whole slot message
// still goes as the backend's copy (copy_bytes; 0: none, the backend is zero copy), and halved
// until the slots of the rank with the most such peers (receive and staging areas) fit
// budget_bytes. Never below near_limit: when nothing larger fits, it is near_limit.
size_t far_eager_limit(size_t near_limit, size_t net_limit, size_t copy_bytes, size_t budget_bytes, uint32_t slots,
                       int max_far_peers);

// How many peers on other hosts the rank with the most of them has (0 for one host).
int max_far_peers(const bootstrap::HostMap& hosts);

class SlotLayout {
 public:
  SlotLayout() = default;
  // near, far: the geometries for peers on the same and on other hosts of `hosts` (far's limit no
  // larger than near's: every peer is near).
  SlotLayout(bootstrap::HostMap hosts, uint32_t slots, SlotGeometry near, SlotGeometry far);

  // Whether the slots owner offers peer (and peer offers owner) take the far geometry.
  bool far(int owner, int peer) const;
  const SlotGeometry& geometry(int owner, int peer) const { return far(owner, peer) ? far_ : near_; }
  // Bytes from the start of owner's area to its first slot for peer (an owner has none for itself).
  size_t offset(int owner, int peer) const;
  size_t area_bytes(int owner) const;
  bool has_far() const { return has_far_; }
  const SlotGeometry& near_geometry() const { return near_; }
  const SlotGeometry& far_geometry() const { return far_; }  // near's when there is no far class

 private:
  // How many ranks before `before` (or all, when before is past the last) share owner's host, owner excluded.
  size_t near_before(int owner, int before) const;

  bootstrap::HostMap hosts_;
  uint32_t slots_ = 0;
  SlotGeometry near_, far_;
  bool has_far_ = false;
};

}  // namespace rcc::p2p
