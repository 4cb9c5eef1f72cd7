#include "bootstrap/exchange.h"

namespace rcc::bootstrap {

Status Exchange::publish(const std::string& name, const std::vector<uint8_t>& mine) {
  (void)mine;
  return fail(RCC_ERR_INTERNAL, "publish(%s): this exchange serves no lookups (allgather instead)", name.c_str());
}

Status Exchange::lookup(const std::string& name, int rank, double timeout_s, std::vector<uint8_t>* blob) {
  (void)timeout_s;
  (void)blob;
  return fail(RCC_ERR_INTERNAL, "lookup(%s, rank %d): this exchange serves no lookups (allgather instead)",
              name.c_str(), rank);
}

}  // namespace rcc::bootstrap
