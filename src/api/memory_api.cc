// rcc_mem_alloc and rcc_mem_free: memory the ranks of a host can map from each other (shm/shared_buffers.h).
#include "rcc/rcc.h"
#include "shm/shared_buffers.h"

extern "C" rcc_status_t rcc_mem_alloc(size_t bytes, void** memory) { return rcc::shm::allocate_shared(bytes, memory); }

extern "C" rcc_status_t rcc_mem_free(void* memory) { return rcc::shm::free_shared(memory); }
