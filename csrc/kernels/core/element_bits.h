#pragma once
// Kernels that only move elements (coordinate copies, cat, compaction, gathers) move them as
// unsigned words of the element's size, whatever the dtype. 16 bytes (complex128) is a pair of
// 64-bit words: 8-byte alignment is all it needs, so no access is ever misaligned on a GPU.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace foo::kernels {

struct Bits128 {
  uint64_t lo, hi;
};

template <int Bytes> struct BitsOf;
template <> struct BitsOf<1> { using type = uint8_t; };
template <> struct BitsOf<2> { using type = uint16_t; };
template <> struct BitsOf<4> { using type = uint32_t; };
template <> struct BitsOf<8> { using type = uint64_t; };
template <> struct BitsOf<16> { using type = Bits128; };

// Calls f(E{}) with E the word type of element_size bytes; other sizes throw, naming op.
template <typename F>
void dispatch_element_size(int64_t element_size, const char* op, F&& f) {
  switch (element_size) {
    case 1: return f(BitsOf<1>::type{});
    case 2: return f(BitsOf<2>::type{});
    case 4: return f(BitsOf<4>::type{});
    case 8: return f(BitsOf<8>::type{});
    case 16: return f(BitsOf<16>::type{});
  }
  throw std::invalid_argument(std::string(op) + ": unsupported element size " + std::to_string(element_size));
}

}  // namespace foo::kernels
