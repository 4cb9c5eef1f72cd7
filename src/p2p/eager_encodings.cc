// The table of eager encodings (eager.h) and RCC_EAGER_ENCODINGS.
#include <optional>
#include <string>
#include <vector>

#include "base/settings.h"
#include "p2p/eager.h"

namespace rcc::p2p {

std::span<const EagerEncoding* const> eager_encodings() {
  // Cheapest first: no header and no notice, then no header, then the header.
  static const EagerEncoding* const kTable[] = {&anchored_encoding(), &bare_encoding(), &headed_encoding()};
  return kTable;
}

Status enabled_encodings(bool polled, uint32_t* mask) {
  std::optional<std::vector<std::string>> listed;
  RCC_RETURN_IF_ERROR(settings::auto_or_list("RCC_EAGER_ENCODINGS", &listed));
  uint32_t enabled = kHeaded;
  for (const EagerEncoding* encoding : eager_encodings()) {
    bool wanted = !listed;
    if (listed) {
      for (const std::string& name : *listed) wanted = wanted || name == encoding->name();
    }
    if (encoding->bit() == kAnchored && !polled) wanted = false;  // it has no notice to act on
    if (wanted) enabled |= encoding->bit();
  }
  *mask = enabled;
  return RCC_SUCCESS;
}

Status SlotLink::write(uint64_t offset, size_t bytes, bool notify, uint32_t imm) {
  RCC_RETURN_IF_ERROR(transport.write(peer, staging + offset, bytes, staging_memory, remote + offset, *state.slots_key,
                                      notify, imm, 0));
  ++state.slots_sent;
  return RCC_SUCCESS;
}

}  // namespace rcc::p2p
