#include "shm/cross_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstdint>

namespace rcc::shm {

namespace {

using CrossCopy = ssize_t (*)(pid_t, const iovec*, unsigned long, const iovec*, unsigned long, unsigned long);

int copy_across(CrossCopy copy, pid_t pid, void* local, void* remote, size_t bytes) {
  if (bytes == 0) return 0;
  for (;;) {
    iovec here{local, bytes};
    iovec there{remote, bytes};
    const ssize_t copied = copy(pid, &here, 1, &there, 1, 0);
    if (copied < 0 && errno == EINTR) continue;
    if (copied < 0) return errno;
    // The kernel stops short only at an address it cannot read or write.
    return static_cast<size_t>(copied) == bytes ? 0 : EFAULT;
  }
}

}  // namespace

int read_across(pid_t pid, const void* remote, void* local, size_t bytes) {
  return copy_across(process_vm_readv, pid, local, const_cast<void*>(remote), bytes);
}

int write_across(pid_t pid, const void* local, void* remote, size_t bytes) {
  return copy_across(process_vm_writev, pid, const_cast<void*>(local), remote, bytes);
}

}  // namespace rcc::shm
