#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
// Counter-based: a value depends only on (seed, offset, counter), so a kernel draws the same
// numbers on every target and for any grid shape.
#include "kernels/core/kernel.h"

namespace foo::kernels {

struct Philox4 {
  uint32_t v[4];
};

__host__ __device__ inline Philox4 philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                                  uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;  // Weyl key schedule
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// A double in [0, 1) from 53 random bits.
__host__ __device__ inline double unit_double(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

// The draw of Philox counter g under the generator state (seed, offset): the stream every random
// kernel takes its numbers from (random.cu, attention.cu's dropout).
__host__ __device__ inline Philox4 philox_draw(int64_t g, uint64_t seed, uint64_t offset) {
  return philox4x32_10(static_cast<uint32_t>(g), static_cast<uint32_t>(static_cast<uint64_t>(g) >> 32),
                       static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32),
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// The uniform of logical element i: u0 (even i) or u1 (odd i) of counter i / 2, as random.h
// numbers elements; so a kernel drawing one element alone agrees with a fill of the whole tensor
// (dropout's keep test u < 1 - p is bernoulli_(1 - p)'s).
__host__ __device__ inline double philox_uniform(int64_t i, uint64_t seed, uint64_t offset) {
  const Philox4 r = philox_draw(i / 2, seed, offset);
  return (i & 1) ? unit_double(r.v[2], r.v[3]) : unit_double(r.v[0], r.v[1]);
}

}  // namespace foo::kernels
