// rcc.hpp's element types: which C++ types rcc moves and reduces, and their rcc_datatype_t.
// Included by rcc/rcc.hpp; not meant to be included on its own.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <type_traits>
#include <utility>

#include "rcc/rcc.h"

namespace rcc {

// 16-bit floating-point values as their bits (IEEE 754 binary16, bfloat16): rcc reduces them,
// C++20 has no such arithmetic types. Aggregates: rcc::float16_t{0x3c00} is 1.0.
struct float16_t {
  std::uint16_t bits;
};
struct bfloat16_t {
  std::uint16_t bits;
};

// datatype_of<T>::value is T's rcc_datatype_t; types without one have no value and are rejected
// at compile time. Mapped: the signed and unsigned integer types of 1, 2, 4 and 8 bytes (so both
// int64_t and long long; not bool or the character types char, wchar_t, char8_t, char16_t,
// char32_t), float, double, rcc::float16_t and rcc::bfloat16_t. Users may specialise it for a
// trivially copyable type of their own of the datatype's size, e.g. a half type:
//   template <> struct rcc::datatype_of<my_half> : std::integral_constant<rcc_datatype_t, RCC_FLOAT16> {};
template <class T>
struct datatype_of {};

namespace detail {

template <class T, class... U>
inline constexpr bool is_one_of = (std::is_same_v<T, U> || ...);

template <class T>
concept standard_integer = std::integral<T> && !is_one_of<T, bool, char, wchar_t, char8_t, char16_t, char32_t> &&
                           (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

constexpr rcc_datatype_t integer_datatype(std::size_t bytes, bool is_signed) {
  switch (bytes) {
    case 1: return is_signed ? RCC_INT8 : RCC_UINT8;
    case 2: return is_signed ? RCC_INT16 : RCC_UINT16;
    case 4: return is_signed ? RCC_INT32 : RCC_UINT32;
    default: return is_signed ? RCC_INT64 : RCC_UINT64;
  }
}

// Bytes of one element of a datatype (rcc_datatype_size, at compile time); 0 for none.
constexpr std::size_t datatype_bytes(rcc_datatype_t datatype) {
  switch (datatype) {
    case RCC_INT8:
    case RCC_UINT8: return 1;
    case RCC_INT16:
    case RCC_UINT16:
    case RCC_FLOAT16:
    case RCC_BFLOAT16: return 2;
    case RCC_INT32:
    case RCC_UINT32:
    case RCC_FLOAT32: return 4;
    case RCC_INT64:
    case RCC_UINT64:
    case RCC_FLOAT64: return 8;
    case RCC_NUM_DATATYPES: break;
  }
  return 0;
}

}  // namespace detail

template <detail::standard_integer T>
struct datatype_of<T>
    : std::integral_constant<rcc_datatype_t, detail::integer_datatype(sizeof(T), std::is_signed_v<T>)> {};
template <>
struct datatype_of<float> : std::integral_constant<rcc_datatype_t, RCC_FLOAT32> {};
template <>
struct datatype_of<double> : std::integral_constant<rcc_datatype_t, RCC_FLOAT64> {};
template <>
struct datatype_of<float16_t> : std::integral_constant<rcc_datatype_t, RCC_FLOAT16> {};
template <>
struct datatype_of<bfloat16_t> : std::integral_constant<rcc_datatype_t, RCC_BFLOAT16> {};

namespace detail {
template <class T>
concept has_datatype = requires {
  { datatype_of<T>::value } -> std::convertible_to<rcc_datatype_t>;
};
}  // namespace detail

// A type rcc can send and reduce: trivially copyable, with a datatype_of of its own size.
template <class T>
concept element =
    std::is_object_v<T> && !std::is_const_v<T> && !std::is_volatile_v<T> && std::is_trivially_copyable_v<T> &&
    detail::has_datatype<T> && (sizeof(T) == detail::datatype_bytes(datatype_of<T>::value));

template <element T>
inline constexpr rcc_datatype_t datatype_v = datatype_of<T>::value;

// What the typed calls take as buffers: a contiguous sized range of elements (std::span,
// std::vector, std::array, a C array). An output buffer's elements are writable.
template <class R>
concept input_buffer =
    std::ranges::contiguous_range<R> && std::ranges::sized_range<R> && element<std::ranges::range_value_t<R>>;
template <class R>
concept output_buffer = input_buffer<R> && !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;
// The buffers of a nonblocking call must outlive it: a span, or a container that is not a temporary.
template <class R>
concept borrowed_input_buffer = input_buffer<R> && std::ranges::borrowed_range<R>;
template <class R>
concept borrowed_output_buffer = output_buffer<R> && std::ranges::borrowed_range<R>;

// An output buffer of the input buffer In's element type (one datatype per call).
template <class R, class In>
concept output_buffer_for =
    output_buffer<R> && std::same_as<std::ranges::range_value_t<R>, std::ranges::range_value_t<In>>;
template <class R, class In>
concept borrowed_output_buffer_for = output_buffer_for<R, In> && std::ranges::borrowed_range<R>;

// The counts or displacements of a nonblocking vector collective: rcc reads them until the
// request completes, so a temporary container (which a std::span parameter would take) is refused.
template <class R>
concept borrowed_counts = std::ranges::borrowed_range<R> && std::convertible_to<R, std::span<const std::size_t>>;
class BorrowedCounts {
 public:
  template <borrowed_counts R>
  BorrowedCounts(R&& counts) noexcept : counts_(std::forward<R>(counts)) {}  // implicit, as std::span's
  operator std::span<const std::size_t>() const noexcept { return counts_; }
  const std::size_t* data() const noexcept { return counts_.data(); }

 private:
  std::span<const std::size_t> counts_;
};

namespace detail {

template <class R>
constexpr rcc_datatype_t datatype_of_range = datatype_v<std::ranges::range_value_t<R>>;

}  // namespace detail

}  // namespace rcc
