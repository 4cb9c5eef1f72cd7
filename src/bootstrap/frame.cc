#include "bootstrap/frame.h"

#include "bootstrap/store.h"

namespace rcc::bootstrap {
namespace {

uint64_t load_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void store_le(uint64_t v, int bytes, std::vector<uint8_t>* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

bool known_type(uint8_t type) {
  switch (static_cast<FrameType>(type)) {
    case FrameType::kHello:
    case FrameType::kSet:
    case FrameType::kGet:
    case FrameType::kTryGet:
    case FrameType::kDeletePrefix:
    case FrameType::kSetConsumable:
    case FrameType::kOk:
    case FrameType::kValue:
    case FrameType::kNotFound: return true;
  }
  return false;
}

}  // namespace

ParseResult parse_frame(const uint8_t* data, size_t size, size_t max_value_bytes, Frame* frame, size_t* consumed,
                        std::string* error) {
  if (size < 4) return ParseResult::kNeedMore;
  const uint64_t length = load_le(data, 4);
  const uint64_t min_length = kFrameHeaderBytes - 4;
  // Checked before waiting for the body, so a bogus length never makes the reader buffer it.
  if (length < min_length || length > min_length + kMaxKeyBytes + max_value_bytes) {
    *error = "frame length " + std::to_string(length) + " out of range";
    return ParseResult::kMalformed;
  }
  if (size >= 5 && !known_type(data[4])) {
    *error = "unknown frame type " + std::to_string(data[4]);
    return ParseResult::kMalformed;
  }
  if (size >= kFrameHeaderBytes) {
    const uint64_t key_length = load_le(data + 13, 4);
    if (key_length > kMaxKeyBytes || key_length > length - min_length) {
      *error = "key length " + std::to_string(key_length) + " out of range";
      return ParseResult::kMalformed;
    }
    if (length - min_length - key_length > max_value_bytes) {
      *error = "value longer than " + std::to_string(max_value_bytes) + " bytes";
      return ParseResult::kMalformed;
    }
  }
  if (size < 4 + length) return ParseResult::kNeedMore;
  const size_t key_length = load_le(data + 13, 4);
  const uint8_t* key = data + kFrameHeaderBytes;
  const uint8_t* value = key + key_length;
  const uint8_t* end = data + 4 + length;
  frame->type = static_cast<FrameType>(data[4]);
  frame->id = load_le(data + 5, 8);
  frame->key.assign(reinterpret_cast<const char*>(key), key_length);
  frame->value.assign(value, end);
  *consumed = 4 + length;
  return ParseResult::kFrame;
}

void append_frame(FrameType type, uint64_t id, const std::string& key, const uint8_t* value, size_t value_size,
                  std::vector<uint8_t>* out) {
  store_le(kFrameHeaderBytes - 4 + key.size() + value_size, 4, out);
  out->push_back(static_cast<uint8_t>(type));
  store_le(id, 8, out);
  store_le(key.size(), 4, out);
  out->insert(out->end(), key.begin(), key.end());
  if (value_size > 0) out->insert(out->end(), value, value + value_size);
}

}  // namespace rcc::bootstrap
