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

}  // namespace rcc::shm
