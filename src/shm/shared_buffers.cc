#include "shm/shared_buffers.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#include "base/log.h"

// Linux 5.6; older C library headers may not name them.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace rcc::shm {

namespace {

struct Allocation {
  int fd;  // -1: from the heap
  uint64_t serial;
  uint64_t inode;
  size_t bytes;
};

// This process's allocations by start address. Looked up by every large collective, changed by
// rcc_mem_alloc and rcc_mem_free, from any thread.
struct Allocations {
  std::mutex mutex;
  std::map<const uint8_t*, Allocation> by_start;
  uint64_t next_serial = 1;
  size_t memory_files = 0;  // allocations that hold a memfd
  bool told_heap = false;   // logged once why an allocation came from the heap
};

Allocations& allocations() {
  static Allocations* all = new Allocations;  // never destroyed: buffers may be freed after exit handlers
  return *all;
}

size_t page_bytes() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// A memfd of `bytes` mapped here; *fd -1 when there is none (the errno in *error).
void* map_new_memfd(size_t bytes, int* fd, uint64_t* inode, int* error) {
  *fd = static_cast<int>(syscall(SYS_memfd_create, "rcc_mem_alloc", MFD_CLOEXEC));
  if (*fd < 0) {
    *error = errno;
    return nullptr;
  }
  struct stat info {};
  void* memory = MAP_FAILED;
  if (ftruncate(*fd, static_cast<off_t>(bytes)) == 0 && fstat(*fd, &info) == 0) {
    memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
  }
  if (memory == MAP_FAILED) {
    *error = errno;
    close(*fd);
    *fd = -1;
    return nullptr;
  }
  *inode = static_cast<uint64_t>(info.st_ino);
  return memory;
}

// Takes descriptor `fd` of process `pid` into this one (*taken); 0 or the errno.
int take_descriptor(pid_t pid, int fd, int* taken) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return errno;
  *taken = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  const int error = errno;
  close(pidfd);
  return *taken < 0 ? error : 0;
}

}  // namespace

Status allocate_shared(size_t bytes, void** out) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "rcc_mem_alloc: memory is NULL");
  if (bytes == 0) {
    *out = nullptr;
    return RCC_SUCCESS;
  }
  const size_t page = page_bytes();
  if (bytes > SIZE_MAX - page) return fail(RCC_ERR_INVALID_ARGUMENT, "rcc_mem_alloc: bytes %zu is too large", bytes);
  const size_t mapped = (bytes + page - 1) / page * page;
  Allocations& all = allocations();
  Allocation allocation{-1, 0, 0, mapped};
  void* memory = nullptr;
  if (bytes >= kSharedFromBytes) {
    // At most half the process's file descriptors: sockets, and the descriptors rcc itself opens
    // while it maps a peer's buffer, must not run out because of them.
    rlimit files{};
    const size_t budget = getrlimit(RLIMIT_NOFILE, &files) == 0 ? static_cast<size_t>(files.rlim_cur / 2) : 512;
    std::string why;
    {
      std::lock_guard<std::mutex> lock(all.mutex);
      if (all.memory_files >= budget) why = "half the file descriptors (RLIMIT_NOFILE) hold shared buffers already";
    }
    int error = 0;
    if (why.empty()) memory = map_new_memfd(mapped, &allocation.fd, &allocation.inode, &error);
    if (why.empty() && memory == nullptr) why = std::string("memfd: ") + std::strerror(error);
    // Heap memory still serves, only not shared.
    std::lock_guard<std::mutex> lock(all.mutex);
    if (memory == nullptr && !all.told_heap) {
      RCC_INFO(
          "rcc_mem_alloc: %zu bytes from the heap, not shared with the other ranks (%s); allreduces over "
          "such buffers go through the slots",
          bytes, why.c_str());
      all.told_heap = true;
    }
  }
  if (memory == nullptr) {
    memory = std::aligned_alloc(page, mapped);
    if (memory == nullptr) return fail(RCC_ERR_NO_MEMORY, "rcc_mem_alloc: %zu bytes: out of memory", bytes);
  }
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    allocation.serial = all.next_serial++;
    if (allocation.fd >= 0) ++all.memory_files;
    all.by_start[static_cast<const uint8_t*>(memory)] = allocation;
  }
  *out = memory;
  return RCC_SUCCESS;
}

Status free_shared(void* memory) {
  if (memory == nullptr) return RCC_SUCCESS;
  Allocations& all = allocations();
  Allocation allocation{};
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    const auto found = all.by_start.find(static_cast<const uint8_t*>(memory));
    if (found == all.by_start.end()) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "rcc_mem_free: memory %p did not come from rcc_mem_alloc (or was freed)",
                  memory);
    }
    allocation = found->second;
    all.by_start.erase(found);
    if (allocation.fd >= 0) --all.memory_files;
  }
  if (allocation.fd < 0) {
    std::free(memory);
  } else {
    munmap(memory, allocation.bytes);
    close(allocation.fd);
  }
  return RCC_SUCCESS;
}

bool find_shared(const void* buffer, size_t bytes, SharedPlace* place) {
  const auto* start = static_cast<const uint8_t*>(buffer);
  Allocations& all = allocations();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (all.by_start.empty() || start == nullptr) return false;
  auto after = all.by_start.upper_bound(start);
  if (after == all.by_start.begin()) return false;
  const auto& [base, allocation] = *std::prev(after);
  const size_t offset = static_cast<size_t>(start - base);
  if (allocation.fd < 0 || offset > allocation.bytes || bytes > allocation.bytes - offset) return false;
  place->fd = allocation.fd;
  place->serial = allocation.serial;
  place->inode = allocation.inode;
  place->bytes = allocation.bytes;
  place->offset = offset;
  place->length = bytes;
  return true;
}

BufferProbe::BufferProbe(uint64_t value) {
  fd_ = static_cast<int>(syscall(SYS_memfd_create, "rcc_probe", MFD_CLOEXEC));
  if (fd_ >= 0 && pwrite(fd_, &value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    close(fd_);
    fd_ = -1;
  }
}

BufferProbe::~BufferProbe() {
  if (fd_ >= 0) close(fd_);
}

int probe_peer_buffer(pid_t pid, int fd, uint64_t value) {
  int taken = -1;
  if (const int error = take_descriptor(pid, fd, &taken)) return error;
  uint64_t found = 0;
  const bool same = pread(taken, &found, sizeof found, 0) == static_cast<ssize_t>(sizeof found) && found == value;
  close(taken);
  return same ? 0 : EBADF;  // another file: another process with that pid (another PID namespace)
}

PeerBuffers::~PeerBuffers() {
  for (const Entry& entry : entries_) munmap(entry.base, entry.bytes);
}

int PeerBuffers::map(pid_t pid, const SharedPlace& place, uint8_t** buffer) {
  if (place.offset > place.bytes || place.length > place.bytes - place.offset) return EFAULT;
  ++uses_;
  for (Entry& entry : entries_) {
    if (entry.pid == pid && entry.serial == place.serial) {
      if (entry.bytes != place.bytes) return EFAULT;
      entry.last_use = uses_;
      *buffer = entry.base + place.offset;
      return 0;
    }
  }
  int fd = -1;
  if (const int error = take_descriptor(pid, place.fd, &fd)) return error;
  // The file taken must be the allocation posted (same inode and size), not whatever the number
  // names in the owner by now.
  struct stat info {};
  void* memory = MAP_FAILED;
  int error = EFAULT;
  if (fstat(fd, &info) == 0 && static_cast<uint64_t>(info.st_ino) == place.inode &&
      static_cast<uint64_t>(info.st_size) == place.bytes) {
    memory = mmap(nullptr, place.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    error = memory == MAP_FAILED ? errno : 0;
  }
  close(fd);
  if (memory == MAP_FAILED) return error;
  if (entries_.size() >= capacity_) {
    const auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                         [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
    munmap(oldest->base, oldest->bytes);
    entries_.erase(oldest);
  }
  entries_.push_back(Entry{pid, place.serial, place.bytes, static_cast<uint8_t*>(memory), uses_});
  *buffer = static_cast<uint8_t*>(memory) + place.offset;
  return 0;
}

}  // namespace rcc::shm
