#include "bootstrap/hosts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <fstream>

#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

// Same host = the ranks can share memory: the same kernel (boot id) and the same /dev/shm mount
// (device and inode of its root, which a private tmpfs in another mount namespace never shares).
// Host names do not count: containers on one machine that bind the same /dev/shm have names of
// their own and may still share it, while network namespaces given a private /dev/shm may not,
// whatever their name. The shared-memory segment then checks at set-up that every rank can map
// what the first one made (shm/segment.cc), so a wrong guess costs the segment, never a hang.
std::string host_identity() {
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  struct stat shm {};
  char mount[64] = "no-shm";
  if (stat("/dev/shm", &shm) == 0) {
    std::snprintf(mount, sizeof mount, "shm-%llx:%llx", static_cast<unsigned long long>(shm.st_dev),
                  static_cast<unsigned long long>(shm.st_ino));
  } else {
    // No /dev/shm: nothing to share, so only this process is on "its" host.
    std::snprintf(mount, sizeof mount, "no-shm-%d", static_cast<int>(getpid()));
  }
  return boot_id + "/" + mount;
}

std::vector<uint8_t> encode(const RankPlace& place) {
  const std::string text =
      place.identity + '\n' + place.host_name + '\n' + std::to_string(place.pid) + '\n' + place.cpus.to_text();
  return bytes_of(text);
}

Status decode(const std::vector<uint8_t>& bytes, int rank, RankPlace* out) {
  const std::string text(bytes.begin(), bytes.end());
  const size_t first = text.find('\n');
  const size_t second = first == std::string::npos ? first : text.find('\n', first + 1);
  const size_t third = second == std::string::npos ? second : text.find('\n', second + 1);
  if (third == std::string::npos) return fail(RCC_ERR_BOOTSTRAP, "rank %d published a malformed host entry", rank);
  RankPlace place;
  place.identity = text.substr(0, first);
  place.host_name = text.substr(first + 1, second - first - 1);
  place.pid = static_cast<pid_t>(std::atol(text.substr(second + 1, third - second - 1).c_str()));
  place.cpus = CpuSet::parse(text.substr(third + 1));
  *out = std::move(place);
  return RCC_SUCCESS;
}

}  // namespace

RankPlace HostMap::here() {
  RankPlace place;
  place.host_name = host_name();
  place.identity = host_identity();
  place.pid = getpid();
  place.cpus = CpuSet::of_this_thread();
  return place;
}

Status HostMap::exchange(Exchange& exchange, double timeout_s, HostMap* out) {
  std::vector<std::vector<uint8_t>> all;
  RCC_RETURN_IF_ERROR(exchange.allgather("hosts", encode(here()), timeout_s, &all));
  std::vector<RankPlace> places(all.size());
  for (size_t r = 0; r < all.size(); ++r) RCC_RETURN_IF_ERROR(decode(all[r], static_cast<int>(r), &places[r]));
  *out = of(std::move(places));
  return RCC_SUCCESS;
}

HostMap HostMap::of(std::vector<RankPlace> places) {
  HostMap map;
  map.places_ = std::move(places);
  for (const RankPlace& place : map.places_) {
    int host = -1;
    for (size_t h = 0; h < map.host_ranks_.size() && host < 0; ++h) {
      if (map.places_[static_cast<size_t>(map.host_ranks_[h].front())].identity == place.identity) {
        host = static_cast<int>(h);
      }
    }
    if (host < 0) {
      host = static_cast<int>(map.host_ranks_.size());
      map.host_ranks_.emplace_back();
    }
    map.host_ranks_[static_cast<size_t>(host)].push_back(static_cast<int>(map.host_of_.size()));
    map.host_of_.push_back(host);
  }
  return map;
}

namespace {

// The kernel a rank runs on (the boot id: the identity up to its '/'). Hosts that share memory
// share it; so do containers or test hosts with private /dev/shm on one machine, which share its
// cores.
std::string machine_of(const RankPlace& place) { return place.identity.substr(0, place.identity.find('/')); }

}  // namespace

bool HostMap::crowded(int host) const {
  // Every rank on this host's machine competes for its cores, whether or not it shares memory.
  const std::string machine = machine_of(place(ranks_on(host).front()));
  CpuSet cpus;
  int ranks = 0;
  for (const RankPlace& other : places_) {
    if (machine_of(other) != machine) continue;
    cpus.unite(other.cpus);
    ++ranks;
  }
  return ranks_outnumber_cores(ranks, cpus);
}

HostMap HostMap::subset(const std::vector<int>& ranks) const {
  std::vector<RankPlace> places;
  places.reserve(ranks.size());
  for (int rank : ranks) places.push_back(place(rank));
  return of(std::move(places));
}

}  // namespace rcc::bootstrap
