#include "shm/cross_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstdint>

namespace rcc::shm {

int read_across(pid_t pid, const void* remote, void* local, size_t bytes) {
  if (bytes == 0) return 0;
  for (;;) {
    iovec here{local, bytes};
    iovec there{const_cast<void*>(remote), bytes};
    const ssize_t copied = process_vm_readv(pid, &here, 1, &there, 1, 0);
    if (copied < 0 && errno == EINTR) continue;
    if (copied < 0) return errno;
    // The kernel stops short only at an address it cannot read.
    return static_cast<size_t>(copied) == bytes ? 0 : EFAULT;
  }
}

}  // namespace rcc::shm
