// libFuzzer target: the rendezvous store's frame parser (src/bootstrap/frame.cc) on arbitrary
// bytes, as a stream of frames. A parsed frame must re-encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "bootstrap/frame.h"

using rcc::bootstrap::Frame;
using rcc::bootstrap::ParseResult;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte picks the value limit, so both small and large limits are explored.
  if (size == 0) return 0;
  const size_t max_value = size_t{1} << (data[0] % 24);
  ++data;
  --size;
  size_t offset = 0;
  while (offset < size) {
    Frame frame;
    size_t consumed = 0;
    std::string error;
    ParseResult result =
        rcc::bootstrap::parse_frame(data + offset, size - offset, max_value, &frame, &consumed, &error);
    if (result == ParseResult::kMalformed) {
      if (error.empty()) std::abort();  // a malformed frame must say why
      return 0;
    }
    if (result == ParseResult::kNeedMore) return 0;
    if (consumed == 0 || consumed > size - offset) std::abort();
    if (frame.value.size() > max_value) std::abort();
    std::vector<uint8_t> again;
    rcc::bootstrap::append_frame(frame.type, frame.id, frame.key, frame.value.data(), frame.value.size(), &again);
    if (again.size() != consumed || !std::equal(again.begin(), again.end(), data + offset)) std::abort();
    offset += consumed;
  }
  return 0;
}
