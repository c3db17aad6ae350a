#pragma once
// Element types kernels compute on, for both targets, without ATen or cuda_fp16.h: 16-bit floats
// are stored as bits and computed in float (their "opmath" type), as PyTorch's own CUDA kernels do.
// Conversions round to nearest even, bit-identical to c10::Half and c10::BFloat16, so sim, cuda and
// the CPU reference agree exactly on casts.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__CUDACC__)
#define FOO_HD __host__ __device__ __forceinline__
#else
#define FOO_HD inline
#endif

namespace foo::kernels {

FOO_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

FOO_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// IEEE binary16, converted in software so both targets round identically.
struct half_t {
  uint16_t bits;
  half_t() = default;
  FOO_HD half_t(float f) : bits(from_float(f)) {}
  FOO_HD operator float() const { return to_float(bits); }

  static FOO_HD uint16_t from_float(float f) {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
    if (abs < 0x38800000u) {                                                 // subnormal or zero
      // Adding 0.5f aligns the subnormal's bits to the low mantissa and rounds to nearest even.
      const float shifted = bits_float(abs) + 0.5f;
      return static_cast<uint16_t>(sign | (float_bits(shifted) - 0x3f000000u));
    }
    const uint32_t odd = (abs >> 13) & 1u;
    return static_cast<uint16_t>(sign | ((abs + 0xc8000fffu + odd) >> 13));
  }
  static FOO_HD float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) return (sign ? -1.0f : 1.0f) * static_cast<float>(mant) * 5.9604644775390625e-08f;  // 2^-24
    return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  }
};

// bfloat16: the upper half of a float.
struct bfloat16_t {
  uint16_t bits;
  bfloat16_t() = default;
  FOO_HD bfloat16_t(float f) : bits(from_float(f)) {}
  FOO_HD operator float() const { return bits_float(static_cast<uint32_t>(bits) << 16); }

  static FOO_HD uint16_t from_float(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
};

// A complex number of float or double parts, laid out as c10::complex<T> (and std::complex<T>):
// the real part, then the imaginary part, aligned to its size, so a kernel reads the bytes of a
// complex64/complex128 tensor as complex_t<float>/complex_t<double>. Arithmetic follows
// c10::complex: the textbook product, and the division numpy and c10 use (Smith's scaling).
template <typename T>
struct alignas(2 * sizeof(T)) complex_t {
  T re, im;
  complex_t() = default;
  FOO_HD constexpr complex_t(T r, T i = T(0)) : re(r), im(i) {}  // M(1): a real constant, as c10::complex
  FOO_HD constexpr T real() const { return re; }
  FOO_HD constexpr T imag() const { return im; }

  FOO_HD complex_t operator-() const { return {-re, -im}; }
  friend FOO_HD complex_t operator+(complex_t a, complex_t b) { return {a.re + b.re, a.im + b.im}; }
  friend FOO_HD complex_t operator-(complex_t a, complex_t b) { return {a.re - b.re, a.im - b.im}; }
  friend FOO_HD complex_t operator*(complex_t a, complex_t b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  friend FOO_HD complex_t operator/(complex_t a, complex_t b) {
    const T c = b.re, d = b.im;
    const T abs_c = c < T(0) ? -c : c, abs_d = d < T(0) ? -d : d;
    if (abs_c >= abs_d) {
      if (abs_c == T(0) && abs_d == T(0)) return {a.re / abs_c, a.im / abs_d};  // a complex inf or NaN
      const T rat = d / c, scl = T(1) / (c + d * rat);
      return {(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
    }
    const T rat = c / d, scl = T(1) / (d + c * rat);
    return {(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
  }
  // With a real operand (a formula's M(2) stays a complex_t; these serve helpers), as c10::complex.
  friend FOO_HD complex_t operator*(complex_t a, T b) { return {a.re * b, a.im * b}; }
  friend FOO_HD complex_t operator/(complex_t a, T b) { return {a.re / b, a.im / b}; }
  friend FOO_HD bool operator==(complex_t a, complex_t b) { return a.re == b.re && a.im == b.im; }
  friend FOO_HD bool operator!=(complex_t a, complex_t b) { return !(a == b); }
  FOO_HD explicit operator bool() const { return re != T(0) || im != T(0); }
};
static_assert(sizeof(complex_t<float>) == 8 && alignof(complex_t<float>) == 8, "complex64 layout");
static_assert(sizeof(complex_t<double>) == 16 && alignof(complex_t<double>) == 16, "complex128 layout");

template <typename T> struct IsComplex : std::false_type {};
template <typename T> struct IsComplex<complex_t<T>> : std::true_type { using part = T; };
template <typename T> inline constexpr bool is_complex_v = IsComplex<T>::value;
// A complex type's part (float for complex_t<float>); a real type itself.
template <typename T> struct RealOfImpl { using type = T; };
template <typename T> struct RealOfImpl<complex_t<T>> { using type = T; };
template <typename T> using real_of_t = typename RealOfImpl<T>::type;
// The complex type of a real one (complex_t<float> for float and the 16-bit floats); a complex type itself.
template <typename T> struct ComplexOfImpl { using type = complex_t<T>; };
template <> struct ComplexOfImpl<half_t> { using type = complex_t<float>; };
template <> struct ComplexOfImpl<bfloat16_t> { using type = complex_t<float>; };
template <typename T> struct ComplexOfImpl<complex_t<T>> { using type = complex_t<T>; };
template <typename T> using complex_of_t = typename ComplexOfImpl<T>::type;

// The type a kernel computes in: 16-bit floats widen to float; everything else stays itself.
template <typename T> struct OpMathImpl { using type = T; };
template <> struct OpMathImpl<half_t> { using type = float; };
template <> struct OpMathImpl<bfloat16_t> { using type = float; };
template <typename T> using opmath_t = typename OpMathImpl<T>::type;

// Conversion between any two element types, as PyTorch casts: through float for 16-bit floats,
// nonzero-is-true for bool; complex to real takes the real part, real to complex has imaginary 0,
// complex to bool is true unless both parts are 0.
template <typename To, typename From>
FOO_HD To cast(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To>) {
    using P = real_of_t<To>;
    if constexpr (is_complex_v<From>) {
      return To(static_cast<P>(v.re), static_cast<P>(v.im));
    } else {
      return To(static_cast<P>(static_cast<opmath_t<From>>(v)), P(0));
    }
  } else if constexpr (is_complex_v<From>) {
    if constexpr (std::is_same_v<To, bool>) {
      return static_cast<bool>(v);
    } else {
      return cast<To>(v.re);
    }
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<opmath_t<From>>(v) != opmath_t<From>(0);
  } else if constexpr (std::is_same_v<To, half_t> || std::is_same_v<To, bfloat16_t>) {
    return To(static_cast<float>(static_cast<opmath_t<From>>(v)));
  } else {
    return static_cast<To>(static_cast<opmath_t<From>>(v));
  }
}

// Element types, numbered as c10::ScalarType so the host converts with a static_cast
// (csrc/aten checks the numbering at compile time).
enum class DType : int8_t {
  UInt8 = 0, Int8 = 1, Int16 = 2, Int32 = 3, Int64 = 4, Float16 = 5, Float32 = 6, Float64 = 7,
  Complex64 = 9, Complex128 = 10, Bool = 11, BFloat16 = 15,
};

// Every DType, for code that enumerates what the device computes (torch.accelerator's device
// capability).
inline constexpr DType kAllDTypes[] = {DType::UInt8,   DType::Int8,    DType::Int16,  DType::Int32,
                                       DType::Int64,   DType::Float16, DType::Float32, DType::Float64,
                                       DType::Bool,    DType::BFloat16};

inline const char* dtype_name(DType d) {
  switch (d) {
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::Bool: return "bool";
    case DType::BFloat16: return "bfloat16";
  }
  // Dtypes no kernel computes, by their c10::ScalarType number, so an error can name them.
  static const char* const kOthers[] = {
      "complex32", "complex64", "complex128", nullptr, "qint8", "quint8", "qint32", nullptr, "quint4x2",
      "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16", "float8_e5m2", "float8_e4m3fn",
      "float8_e5m2fnuz", "float8_e4m3fnuz", "uint16", "uint32", "uint64", "uint1", "uint2", "uint3", "uint4",
      "uint5", "uint6", "uint7", "int1", "int2", "int3", "int4", "int5", "int6", "int7", "float8_e8m0fnu",
      "float4_e2m1fn_x2"};
  const int index = static_cast<int>(d) - 8;
  if (index >= 0 && index < static_cast<int>(sizeof(kOthers) / sizeof(kOthers[0])) && kOthers[index]) return kOthers[index];
  return "unknown";
}

// Type sets for dispatch, as bit masks over DType.
constexpr uint32_t dtype_bit(DType d) { return 1u << static_cast<int>(d); }
constexpr uint32_t kFloatingTypes = dtype_bit(DType::Float32) | dtype_bit(DType::Float64) |
                                    dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16);
constexpr uint32_t kIntegralTypes = dtype_bit(DType::UInt8) | dtype_bit(DType::Int8) | dtype_bit(DType::Int16) |
                                    dtype_bit(DType::Int32) | dtype_bit(DType::Int64);
constexpr uint32_t kNumericTypes = kFloatingTypes | kIntegralTypes;
constexpr uint32_t kAllTypes = kNumericTypes | dtype_bit(DType::Bool);
// Complex dtypes are outside kAllTypes: a kernel claims them explicitly (kAllTypes | kComplexTypes).
constexpr uint32_t kComplexTypes = dtype_bit(DType::Complex64) | dtype_bit(DType::Complex128);

template <typename T> struct TypeTag { using type = T; };

[[noreturn]] inline void unsupported_dtype(const char* op, DType d) {
  throw std::invalid_argument(std::string(op) + ": foo has no kernel for dtype " + dtype_name(d));
}

// Calls f(TypeTag<T>{}) for the element type d names, if d is in Types; otherwise throws an error
// naming the op and the dtype. Host code only (the launchers).
template <uint32_t Types, typename F>
void dispatch(DType d, const char* op, F&& f) {
  if (!(Types & dtype_bit(d))) unsupported_dtype(op, d);
  switch (d) {
    case DType::UInt8: if constexpr ((Types & dtype_bit(DType::UInt8)) != 0) return f(TypeTag<uint8_t>{}); break;
    case DType::Int8: if constexpr ((Types & dtype_bit(DType::Int8)) != 0) return f(TypeTag<int8_t>{}); break;
    case DType::Int16: if constexpr ((Types & dtype_bit(DType::Int16)) != 0) return f(TypeTag<int16_t>{}); break;
    case DType::Int32: if constexpr ((Types & dtype_bit(DType::Int32)) != 0) return f(TypeTag<int32_t>{}); break;
    case DType::Int64: if constexpr ((Types & dtype_bit(DType::Int64)) != 0) return f(TypeTag<int64_t>{}); break;
    case DType::Float16: if constexpr ((Types & dtype_bit(DType::Float16)) != 0) return f(TypeTag<half_t>{}); break;
    case DType::Float32: if constexpr ((Types & dtype_bit(DType::Float32)) != 0) return f(TypeTag<float>{}); break;
    case DType::Float64: if constexpr ((Types & dtype_bit(DType::Float64)) != 0) return f(TypeTag<double>{}); break;
    case DType::Complex64: if constexpr ((Types & dtype_bit(DType::Complex64)) != 0) return f(TypeTag<complex_t<float>>{}); break;
    case DType::Complex128: if constexpr ((Types & dtype_bit(DType::Complex128)) != 0) return f(TypeTag<complex_t<double>>{}); break;
    case DType::Bool: if constexpr ((Types & dtype_bit(DType::Bool)) != 0) return f(TypeTag<bool>{}); break;
    case DType::BFloat16: if constexpr ((Types & dtype_bit(DType::BFloat16)) != 0) return f(TypeTag<bfloat16_t>{}); break;
  }
  unsupported_dtype(op, d);
}

}  // namespace foo::kernels
