// Thread-locals read on every call (the communicator check, the request-handle cache) use the
// initial-exec TLS model: a direct offset from the thread pointer instead of a __tls_get_addr
// call per access, which a shared library otherwise pays. They total a few dozen bytes, well
// inside the static TLS reserve glibc keeps for libraries loaded with dlopen.
#pragma once

#define RCC_FAST_TLS __attribute__((tls_model("initial-exec")))
