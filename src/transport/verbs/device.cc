#include "transport/verbs/device.h"

#include <hwloc.h>
#include <hwloc/openfabrics-verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "base/log.h"
#include "base/settings.h"

namespace rcc::transport::verbs {
namespace {

struct FilterEntry {
  std::string device;
  int port = 0;  // 0: any port
};

struct DeviceFilter {
  bool exclude = false;
  std::vector<FilterEntry> entries;
  bool matches(const std::string& device, int port) const {
    for (const FilterEntry& e : entries) {
      if (e.device == device && (e.port == 0 || e.port == port)) return true;
    }
    return false;
  }
};

Status parse_filter(const std::string& text, DeviceFilter* out) {
  DeviceFilter filter;
  std::string rest = text;
  if (!rest.empty() && rest[0] == '^') {
    filter.exclude = true;
    rest.erase(0, 1);
  }
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    std::string item = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? rest.size() + 1 : comma + 1;
    if (item.empty()) continue;
    FilterEntry entry;
    size_t colon = item.find(':');
    entry.device = item.substr(0, colon);
    if (colon != std::string::npos) {
      char* end = nullptr;
      long port = std::strtol(item.c_str() + colon + 1, &end, 10);
      if (*end != '\0' || port < 1 || port > 255 || entry.device.empty()) {
        return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_IB_DEVICE='%s': '%s' is not name[:port]", text.c_str(),
                    item.c_str());
      }
      entry.port = static_cast<int>(port);
    }
    filter.entries.push_back(entry);
  }
  if (filter.entries.empty()) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_IB_DEVICE='%s' names no device", text.c_str());
  }
  *out = filter;
  return RCC_SUCCESS;
}

struct Candidate {
  int device_index = -1;
  uint8_t port = 0;
  LinkKind kind = LinkKind::kRoce;
  ibv_port_attr attr = {};
};

LinkKind kind_of(const ibv_device* device, const ibv_port_attr& attr) {
  if (device->transport_type == IBV_TRANSPORT_IWARP) return LinkKind::kIwarp;
  return attr.link_layer == IBV_LINK_LAYER_INFINIBAND ? LinkKind::kInfiniband : LinkKind::kRoce;
}

// True when the device's PCI locality overlaps the cores this process may run on. Devices without
// PCI locality (rxe, siw) get the full cpuset from hwloc, so they count as near.
class Locality {
 public:
  Locality() {
    if (hwloc_topology_init(&topology_) != 0) return;
    if (hwloc_topology_load(topology_) != 0) return;
    binding_ = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topology_, binding_, HWLOC_CPUBIND_PROCESS) != 0) {
      hwloc_bitmap_copy(binding_, hwloc_topology_get_complete_cpuset(topology_));
    }
    ok_ = true;
  }
  ~Locality() {
    if (binding_ != nullptr) hwloc_bitmap_free(binding_);
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
  }
  bool near(ibv_device* device) {
    if (!ok_) return true;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    bool result = hwloc_ibv_get_device_cpuset(topology_, device, set) != 0 || hwloc_bitmap_intersects(set, binding_);
    hwloc_bitmap_free(set);
    return result;
  }

 private:
  hwloc_topology_t topology_ = nullptr;
  hwloc_bitmap_t binding_ = nullptr;
  bool ok_ = false;
};

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};

}  // namespace

Status choose_port(PortChoice* out) {
  std::string setting = settings::text("RCC_IB_DEVICE");
  DeviceFilter filter;
  if (!setting.empty()) RCC_RETURN_IF_ERROR(parse_filter(setting, &filter));

  int count = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&count));
  if (!list || count == 0) {
    int error = errno;
    if (!setting.empty()) {
      return fail(RCC_ERR_NO_DEVICE, "RCC_IB_DEVICE='%s': this host has no RDMA devices (%s)", setting.c_str(),
                  list ? "ibv_get_device_list found none" : std::strerror(error));
    }
    return fail_quietly(RCC_ERR_NO_DEVICE, "no RDMA devices (ibv_get_device_list: %s)",
                        list ? "ibv_get_device_list found none" : std::strerror(error));
  }

  // Open every device once to read its ports; keep the contexts until one is chosen.
  std::vector<ibv_context*> contexts(count, nullptr);
  std::vector<ibv_device_attr> device_attrs(count);
  std::vector<Candidate> candidates;
  std::string inventory;
  for (int i = 0; i < count; ++i) {
    ibv_device* device = list.get()[i];
    const char* name = ibv_get_device_name(device);
    contexts[i] = ibv_open_device(device);
    if (contexts[i] == nullptr || ibv_query_device(contexts[i], &device_attrs[i]) != 0) {
      inventory += std::string(inventory.empty() ? "" : ", ") + name + " (cannot open: " + std::strerror(errno) + ")";
      continue;
    }
    for (int port = 1; port <= device_attrs[i].phys_port_cnt; ++port) {
      Candidate c;
      c.device_index = i;
      c.port = static_cast<uint8_t>(port);
      if (ibv_query_port(contexts[i], c.port, &c.attr) != 0) continue;
      c.kind = kind_of(device, c.attr);
      inventory += std::string(inventory.empty() ? "" : ", ") + name + ":" + std::to_string(port) + " (" +
                   ibv_port_state_str(c.attr.state) + ", " + link_kind_name(c.kind) + ")";
      bool listed = setting.empty() || filter.matches(name, port) != filter.exclude;
      if (listed && c.attr.state == IBV_PORT_ACTIVE) candidates.push_back(c);
    }
  }

  auto close_all_but = [&](int keep) {
    for (int i = 0; i < count; ++i) {
      if (i != keep && contexts[i] != nullptr) ibv_close_device(contexts[i]);
    }
  };
  if (candidates.empty()) {
    close_all_but(-1);
    if (!setting.empty()) {
      return fail(RCC_ERR_NO_DEVICE, "RCC_IB_DEVICE='%s' matches no active port; ports here: %s", setting.c_str(),
                  inventory.c_str());
    }
    return fail_quietly(RCC_ERR_NO_DEVICE, "no active RDMA port; ports here: %s", inventory.c_str());
  }

  // Nearest first; among equals IB/RoCE before iWARP (immediate data, no connection manager), then
  // the order of the device list.
  size_t best = 0;
  if (candidates.size() > 1) {
    Locality locality;
    auto rank_of = [&](const Candidate& c) {
      return (locality.near(list.get()[c.device_index]) ? 0 : 2) + (c.kind == LinkKind::kIwarp ? 1 : 0);
    };
    int best_rank = rank_of(candidates[0]);
    for (size_t i = 1; i < candidates.size(); ++i) {
      int r = rank_of(candidates[i]);
      if (r < best_rank) {
        best = i;
        best_rank = r;
      }
    }
  }
  const Candidate& chosen = candidates[best];
  close_all_but(chosen.device_index);
  PortChoice choice;
  choice.context = contexts[chosen.device_index];
  choice.device = ibv_get_device_name(list.get()[chosen.device_index]);
  choice.port = chosen.port;
  choice.kind = chosen.kind;
  choice.device_attr = device_attrs[chosen.device_index];
  choice.port_attr = chosen.attr;
  RCC_INFO("verbs: device %s port %u (%s, %s%s); ports here: %s", choice.device.c_str(), choice.port,
           link_kind_name(choice.kind), setting.empty() ? "nearest active port" : "RCC_IB_DEVICE=", setting.c_str(),
           inventory.c_str());
  *out = choice;
  return RCC_SUCCESS;
}

namespace {

enum class GidType { kUnknown, kRoceV1, kRoceV2 };

struct GidEntry {
  int index = 0;
  uint8_t gid[16] = {};
  GidType type = GidType::kUnknown;
};

const char* gid_type_name(GidType type) {
  switch (type) {
    case GidType::kRoceV1: return "IB/RoCE v1";
    case GidType::kRoceV2: return "RoCE v2";
    case GidType::kUnknown: return "type unknown";
  }
  return "?";
}

// Containers often hide gid_attrs: an unreadable type is "unknown", not an error.
GidType sysfs_gid_type(const PortChoice& port, int index) {
  std::ifstream file("/sys/class/infiniband/" + port.device + "/ports/" + std::to_string(port.port) +
                     "/gid_attrs/types/" + std::to_string(index));
  std::string line;
  if (!file || !std::getline(file, line)) return GidType::kUnknown;
  if (line.find("RoCE v2") != std::string::npos) return GidType::kRoceV2;
  if (line.find("RoCE v1") != std::string::npos || line.find("IB/RoCE") != std::string::npos) return GidType::kRoceV1;
  return GidType::kUnknown;
}

bool is_zero(const uint8_t gid[16]) {
  for (int i = 0; i < 16; ++i) {
    if (gid[i] != 0) return false;
  }
  return true;
}
bool is_link_local(const uint8_t gid[16]) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }
bool is_ipv4_mapped(const uint8_t gid[16]) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid, prefix, 12) == 0;
}

GidEntry entry_of(const ibv_gid_entry& ex) {
  GidEntry entry;
  entry.index = static_cast<int>(ex.gid_index);
  std::memcpy(entry.gid, ex.gid.raw, 16);
  entry.type = ex.gid_type == IBV_GID_TYPE_ROCE_V2 ? GidType::kRoceV2 : GidType::kRoceV1;
  return entry;
}

// The non-empty entries of the port's GID table. One ibv_query_gid_table call where the kernel
// supports it: entry by entry, a 1024-entry rxe table cost a second of start-up in the test VM.
std::vector<GidEntry> read_gid_table(const PortChoice& port) {
  std::vector<GidEntry> table;
  const int ports = std::max<int>(1, port.device_attr.phys_port_cnt);
  std::vector<ibv_gid_entry> valid(static_cast<size_t>(port.port_attr.gid_tbl_len) * static_cast<size_t>(ports));
  const ssize_t count = valid.empty() ? -1 : ibv_query_gid_table(port.context, valid.data(), valid.size(), 0);
  if (count >= 0) {
    for (ssize_t i = 0; i < count; ++i) {
      const ibv_gid_entry& ex = valid[static_cast<size_t>(i)];
      if (ex.port_num != port.port) continue;
      GidEntry entry = entry_of(ex);
      if (!is_zero(entry.gid)) table.push_back(entry);
    }
    std::sort(table.begin(), table.end(), [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
    return table;
  }
  for (int i = 0; i < port.port_attr.gid_tbl_len; ++i) {
    ibv_gid_entry ex = {};
    if (ibv_query_gid_ex(port.context, port.port, i, &ex, 0) == 0) {
      ex.gid_index = static_cast<uint32_t>(i);
      GidEntry entry = entry_of(ex);
      if (!is_zero(entry.gid)) table.push_back(entry);
      continue;
    }
    GidEntry entry;
    entry.index = i;
    ibv_gid gid;
    if (ibv_query_gid(port.context, port.port, i, &gid) != 0) continue;
    std::memcpy(entry.gid, gid.raw, 16);
    if (is_zero(entry.gid)) continue;  // empty: its type file cannot be read anyway
    entry.type = sysfs_gid_type(port, i);
    table.push_back(entry);
  }
  return table;
}

std::string describe(const GidEntry& e) {
  return std::to_string(e.index) + " (" + gid_to_string(e.gid) + ", " + gid_type_name(e.type) + ")";
}

std::string describe_all(const std::vector<GidEntry>& table) {
  std::string text;
  for (const GidEntry& e : table) text += (text.empty() ? "" : ", ") + describe(e);
  return text.empty() ? "none" : text;
}

}  // namespace

Status choose_gid(const PortChoice& port, GidChoice* out) {
  std::vector<GidEntry> table = read_gid_table(port);
  const GidEntry* chosen = nullptr;
  std::optional<int64_t> requested;
  RCC_RETURN_IF_ERROR(settings::auto_or_integer("RCC_IB_GID_INDEX", &requested));
  if (requested) {
    const int64_t index = *requested;
    for (const GidEntry& e : table) {
      if (e.index == index) chosen = &e;
    }
    if (chosen == nullptr) {
      return fail(RCC_ERR_INVALID_ARGUMENT,
                  "RCC_IB_GID_INDEX=%lld: %s on %s port %u (table has %d entries); usable indexes: %s",
                  static_cast<long long>(index),
                  index < 0 || index >= port.port_attr.gid_tbl_len ? "out of range" : "empty entry",
                  port.device.c_str(), port.port, port.port_attr.gid_tbl_len, describe_all(table).c_str());
    }
  } else {
    // Lower score is better; link-local entries are never chosen automatically.
    auto score = [](const GidEntry& e) {
      if (is_link_local(e.gid)) return 100;
      bool v4 = is_ipv4_mapped(e.gid);
      switch (e.type) {
        case GidType::kRoceV2: return v4 ? 0 : 1;
        case GidType::kUnknown: return v4 ? 2 : 4;
        case GidType::kRoceV1: return v4 ? 3 : 5;
      }
      return 100;
    };
    int best = 100;
    for (const GidEntry& e : table) {
      if (score(e) < best) {
        best = score(e);
        chosen = &e;
      }
    }
    if (chosen == nullptr) {
      return fail(RCC_ERR_NO_DEVICE,
                  "%s port %u has no usable RoCE GID (only empty or link-local entries: %s); give the netdev an IP "
                  "address or set RCC_IB_GID_INDEX",
                  port.device.c_str(), port.port, describe_all(table).c_str());
    }
  }
  GidChoice choice;
  choice.index = chosen->index;
  std::memcpy(choice.gid, chosen->gid, 16);
  choice.description = describe(*chosen);
  RCC_INFO("verbs: %s port %u GID index %s%s", port.device.c_str(), port.port, choice.description.c_str(),
           requested ? " (RCC_IB_GID_INDEX)" : " (automatic)");
  *out = choice;
  return RCC_SUCCESS;
}

}  // namespace rcc::transport::verbs
