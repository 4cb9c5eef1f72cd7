#include "p2p/reserved_area.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rcc::p2p {
namespace {

size_t page_bytes() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

ReservedArea::~ReservedArea() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

Status ReservedArea::reserve(size_t bytes, const char* what) {
  const size_t page = page_bytes();
  const size_t rounded = (bytes + page - 1) / page * page;
  // MAP_NORESERVE: no swap is set aside for pages never touched (the slots of peers never met).
  void* mapped = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) {
    return fail(RCC_ERR_NO_MEMORY, "could not map %zu bytes for %s: %s", rounded, what, std::strerror(errno));
  }
  if (data_ != nullptr) munmap(data_, bytes_);
  data_ = static_cast<uint8_t*>(mapped);
  bytes_ = rounded;
  return RCC_SUCCESS;
}

size_t ReservedArea::resident_bytes() const {
  if (data_ == nullptr) return 0;
  const size_t page = page_bytes();
  std::vector<unsigned char> pages(bytes_ / page);
  if (mincore(data_, bytes_, pages.data()) != 0) return 0;
  size_t resident = 0;
  for (unsigned char flags : pages) resident += (flags & 1) != 0 ? page : 0;
  return resident;
}

}  // namespace rcc::p2p
