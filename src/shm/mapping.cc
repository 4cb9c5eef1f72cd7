#include "shm/mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rcc::shm {

PendingMapping::~PendingMapping() {
  if (!name.empty()) shm_unlink(name.c_str());
  if (mapping != nullptr) munmap(mapping, bytes);
}

Status create_mapping(const std::string& name, size_t bytes, void** mapping) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return fail_quietly(RCC_ERR_NO_MEMORY, "shm_open(%s): %s", name.c_str(), std::strerror(errno));
  // Allocate now: a full /dev/shm is then an error here, not a SIGBUS in the middle of a collective.
  const int allocated =
      ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : errno;
  void* memory = MAP_FAILED;
  if (allocated == 0) memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  const int error = allocated != 0 ? allocated : errno;
  close(fd);
  if (memory == MAP_FAILED) {
    shm_unlink(name.c_str());
    return fail_quietly(RCC_ERR_NO_MEMORY, "%zu bytes of shared memory at /dev/shm%s: %s (is /dev/shm full or small?)",
                        bytes, name.c_str(), std::strerror(error));
  }
  *mapping = memory;
  return RCC_SUCCESS;
}

Status open_mapping(const std::string& name, size_t bytes, void** mapping) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    return fail_quietly(RCC_ERR_NO_MEMORY, "shm_open(%s): %s (rank 0 is in another /dev/shm, e.g. another container?)",
                        name.c_str(), std::strerror(errno));
  }
  struct stat info {};
  void* memory = MAP_FAILED;
  if (fstat(fd, &info) == 0 && static_cast<size_t>(info.st_size) == bytes) {
    memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  }
  close(fd);
  if (memory == MAP_FAILED) return fail_quietly(RCC_ERR_NO_MEMORY, "mapping %s failed", name.c_str());
  *mapping = memory;
  return RCC_SUCCESS;
}

}  // namespace rcc::shm
