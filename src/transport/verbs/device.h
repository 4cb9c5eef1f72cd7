// Choosing the RDMA device, port and (RoCE) GID this rank uses.
#pragma once

#include <infiniband/verbs.h>

#include <string>

#include "base/status.h"
#include "transport/verbs/wire.h"

namespace rcc::transport::verbs {

struct PortChoice {
  ibv_context* context = nullptr;  // opened; the caller owns it (ibv_close_device)
  std::string device;
  uint8_t port = 0;
  LinkKind kind = LinkKind::kRoce;
  ibv_device_attr device_attr = {};
  ibv_port_attr port_attr = {};
};

// RCC_IB_DEVICE, else the active port nearest this process's cores (IB/RoCE before iWARP when equally
// near). RCC_ERR_NO_DEVICE with a message listing the devices, ports and their states otherwise.
Status choose_port(PortChoice* out);

struct GidChoice {
  int index = -1;
  uint8_t gid[16] = {};
  std::string description;  // "1 (::ffff:10.0.2.15, RoCE v2)"
};

// RCC_IB_GID_INDEX (validated), else the RoCE v2 GID with an IPv4-mapped address, skipping empty
// and link-local entries.
Status choose_gid(const PortChoice& port, GidChoice* out);

}  // namespace rcc::transport::verbs
