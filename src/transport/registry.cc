// The table of transport backends and RCC_TRANSPORT's choice among them. A backend is a row here
// and a create function; rows exist only for the backends this build has (RCC_WITH_VERBS,
// RCC_WITH_UCX), in the order auto tries them.
#include <string>

#include "base/log.h"
#include "base/settings.h"
#include "transport/transport.h"

namespace rcc::transport {
namespace {

const Backend kBackends[] = {
#ifdef RCC_WITH_VERBS
    {"verbs", create_verbs, "an active RDMA port (InfiniBand, RoCE v2, iWARP)"},
#endif
#ifdef RCC_WITH_UCX
    {"ucx", create_ucx, "UCX: shared memory on one host, TCP across hosts"},
#endif
};

std::string built_in() {
  std::string names;
  for (const Backend& backend : kBackends) names += (names.empty() ? "" : ", ") + std::string(backend.name);
  return names.empty() ? "none" : names;
}

}  // namespace

std::span<const Backend> backends() { return kBackends; }

Status create_transport(const Options& options, std::unique_ptr<Transport>* out) {
  std::string choice;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_TRANSPORT", &choice));
  if (choice != "auto") {
    for (const Backend& backend : kBackends) {
      if (choice != backend.name) continue;
      RCC_INFO("transport: %s (RCC_TRANSPORT=%s)", backend.name, backend.name);
      return backend.create(options, out);
    }
    return fail(RCC_ERR_NO_DEVICE, "RCC_TRANSPORT=%s: this rcc was built without it (built in: %s)", choice.c_str(),
                built_in().c_str());
  }
  std::string tried;
  for (const Backend& backend : kBackends) {
    Status status = backend.create(options, out);
    if (status == RCC_SUCCESS) {
      RCC_INFO("transport: %s (RCC_TRANSPORT=auto%s)", backend.name, tried.c_str());
      return status;
    }
    if (status != RCC_ERR_NO_DEVICE) return status;
    tried += std::string("; ") + backend.name + ": " + last_error();
  }
  return fail(RCC_ERR_NO_DEVICE, "RCC_TRANSPORT=auto: no transport can run here (built in: %s%s)", built_in().c_str(),
              tried.c_str());
}

}  // namespace rcc::transport
