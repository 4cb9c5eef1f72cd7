#include "core/config.h"
#include "core/log.h"
#include "transport/transport.h"

namespace rcc::transport {

Status create_transport(const Options& options, std::unique_ptr<Transport>* out) {
  std::string choice = config::get_string("RCC_TRANSPORT");
  if (choice == "ucx") {
    RCC_INFO("transport: ucx (RCC_TRANSPORT=ucx)");
    return create_ucx(options, out);
  }
  if (choice == "verbs") {
    RCC_INFO("transport: verbs (RCC_TRANSPORT=verbs)");
    return create_verbs(options, out);
  }
  if (choice != "auto") {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_TRANSPORT='%s' is not one of auto, verbs, ucx", choice.c_str());
  }
  Status status = create_verbs(options, out);
  if (status == RCC_SUCCESS) {
    RCC_INFO("transport: verbs (RCC_TRANSPORT=auto found an active RDMA port)");
    return status;
  }
  if (status != RCC_ERR_NO_DEVICE) return status;
  RCC_INFO("transport: ucx (RCC_TRANSPORT=auto: %s)", last_error().c_str());
  return create_ucx(options, out);
}

}  // namespace rcc::transport
