#include "collectives/cost_model.h"

#include "base/log.h"
#include "base/settings.h"

namespace rcc::collectives::cost {
namespace {

// *out = the setting's value times scale, unless it cannot be read (then the default stays).
void read_rate(const char* name, double scale, double* out) {
  int64_t value = 0;
  if (settings::integer(name, &value) == RCC_SUCCESS) {
    *out = static_cast<double>(value) * scale;
  } else {
    RCC_WARN("%s: keeping the default", last_error().c_str());
  }
}

Rates read_rates() {
  Rates rates;
  read_rate("RCC_TUNER_NET_MBPS", 1e6, &rates.bandwidth);
  read_rate("RCC_TUNER_NET_LATENCY_NS", 1e-9, &rates.alpha);
  read_rate("RCC_TUNER_SHM_MBPS", 1e6, &rates.shm_bandwidth);
  read_rate("RCC_TUNER_SHM_LATENCY_NS", 1e-9, &rates.shm_alpha);
  return rates;
}

}  // namespace

const Rates& rates() {
  static const Rates kRates = read_rates();
  return kRates;
}

}  // namespace rcc::collectives::cost
