// The store's wire format, kept apart from the sockets so it can be fuzzed. A frame is
//   u32 length (little endian, bytes after this field) | u8 type | u64 request id |
//   u32 key length | key | value (the rest)
// The hello carries the job secret as its value; replies echo the request id they answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rcc::bootstrap {

enum class FrameType : uint8_t {
  kHello = 1,          // value: the job secret
  kSet = 2,            // key, value
  kGet = 3,            // key; answered when the key exists
  kTryGet = 4,         // key; answered now (kValue or kNotFound)
  kDeletePrefix = 5,   // key: a prefix; every key that starts with it is removed; answered kOk
  kSetConsumable = 6,  // key, value = u32 reads (little endian) | the value: removed after that many kGets
  kOk = 16,            // hello accepted, set done
  kValue = 17,         // key, value
  kNotFound = 18,
};

struct Frame {
  FrameType type = FrameType::kOk;
  uint64_t id = 0;
  std::string key;
  std::vector<uint8_t> value;
};

constexpr size_t kFrameHeaderBytes = 4 + 1 + 8 + 4;  // length, type, id, key length

enum class ParseResult { kFrame, kNeedMore, kMalformed };

// Parses one frame from the front of data[0, size). kFrame: *frame is filled and *consumed is its
// length on the wire. kNeedMore: the buffer holds a valid prefix of a frame. kMalformed: unknown
// type, key over kMaxKeyBytes, value over max_value_bytes, or inconsistent lengths (*error says
// which). Pure: no I/O, no allocation beyond the frame's fields.
ParseResult parse_frame(const uint8_t* data, size_t size, size_t max_value_bytes, Frame* frame, size_t* consumed,
                        std::string* error);

// Appends the wire form of a frame to out.
void append_frame(FrameType type, uint64_t id, const std::string& key, const uint8_t* value, size_t value_size,
                  std::vector<uint8_t>* out);

}  // namespace rcc::bootstrap
