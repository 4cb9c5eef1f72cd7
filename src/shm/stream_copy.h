// Copying into a shared slot that other cores read next.
#pragma once

#include <cstddef>

namespace rcc::shm {

// memcpy with non-temporal (streaming) stores where the CPU has them (x86-64: SSE2): the copy goes
// to memory without passing through this core's cache, so a reader on another core loads it from
// memory instead of pulling each line out of this core's cache, and this core keeps what its cache
// held. Ends with a store fence: the whole copy is visible before any store that follows (the step
// that tells the readers it is there).
void copy_streaming(void* dst, const void* src, size_t bytes);

// RCC_SHM_STREAM_OUTPUT_BYTES=auto: from how many bytes a copy out of the slots into a caller's
// buffer (a result nobody reads next) uses copy_streaming. A quarter of the last-level cache, at
// least 4 MiB: glibc's memcpy switches to streaming stores at the same point on x86. Below it the
// buffer fits the cache, where ordinary stores are faster; above it they would first read every
// destination line from memory.
size_t default_stream_output_bytes();

}  // namespace rcc::shm
