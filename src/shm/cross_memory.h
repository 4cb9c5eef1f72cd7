// Cross-memory attach (process_vm_readv, process_vm_writev): one rank copies straight out of or into
// another's buffer, one copy made by the kernel where going through the shared slots takes two. It needs ptrace
// permission over the other process (same user, and neither Yama's ptrace_scope >= 1 nor a
// seccomp filter forbidding it), so the segment's set-up probes it between every pair of ranks.
#pragma once

#include <sys/types.h>
#include <cstddef>

namespace rcc::shm {

// Copies `bytes` from `remote` in process `pid` to `local`; 0, or the errno of the failed call.
int read_across(pid_t pid, const void* remote, void* local, size_t bytes);
// Copies `bytes` from `local` to `remote` in process `pid`; 0, or the errno of the failed call.
int write_across(pid_t pid, const void* local, void* remote, size_t bytes);

}  // namespace rcc::shm
