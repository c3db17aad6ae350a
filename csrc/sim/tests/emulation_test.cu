// Self-test of the CUDA execution-model emulation (csrc/sim), written as ordinary CUDA: only the
// launch API of kernels/core/kernel.h, CUDA syntax and FOO_DYNAMIC_SHARED, so the same kernels run
// on a GPU. Prints "N passed, M failed" and exits nonzero on failure. tests/test_emulation.py
// builds and runs it for sim. `--bench` prints timings instead of testing.
//
// sim (any machine; from the repository root):
//   g++ -std=c++17 -O2 -pthread -x c++ -Icsrc csrc/sim/tests/emulation_test.cu
//       -x none csrc/sim/*.cpp csrc/runtime/driver/*.cpp -o /tmp/emulation_test && /tmp/emulation_test
// GPU (nvcc; the cuda driver runs the kernels):
//   nvcc -std=c++17 -O2 -arch=sm_90 -DFOO_WITH_CUDA -Icsrc
//       csrc/sim/tests/emulation_test.cu csrc/runtime/driver/*.cpp csrc/sim/*.cpp -o /tmp/emulation_test_gpu &&
//   TORCH_FOO_DRIVER=cuda /tmp/emulation_test_gpu
// Tests of sim-only behaviour (deadlock reports, launch_independent misuse) are compiled out
// under nvcc: on a GPU those are hangs or undefined behaviour, not errors.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <time.h>

#include "kernels/core/kernel.h"
#include "runtime/driver/driver.h"
#include "runtime/driver/kernel_trace.h"

using foo::kernels::Stream;
using foo::kernels::FOO_TARGET::launch;
using foo::kernels::FOO_TARGET::launch_independent;
namespace rt = foo::runtime;

static int g_pass = 0, g_fail = 0;
#define CHECK(c)                                                                  \
  do {                                                                            \
    if (c) {                                                                      \
      ++g_pass;                                                                   \
    } else {                                                                      \
      ++g_fail;                                                                   \
      std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c);  \
    }                                                                             \
  } while (0)
// Checks that `expr` throws a std::exception whose message contains every one of `subs`.
#define CHECK_THROWS(expr, ...)                                                      \
  do {                                                                               \
    std::string msg_;                                                                \
    try {                                                                            \
      expr;                                                                          \
    } catch (const std::exception& e) {                                              \
      msg_ = e.what();                                                               \
      if (msg_.empty()) msg_ = "<empty>";                                            \
    }                                                                                \
    bool ok_ = !msg_.empty();                                                        \
    for (const char* s_ : {__VA_ARGS__}) ok_ = ok_ && msg_.find(s_) != std::string::npos; \
    CHECK(ok_ && #expr);                                                             \
    if (!ok_) std::fprintf(stderr, "  got: '%s'\n", msg_.c_str());                   \
  } while (0)

// ---------------------------------------------------------------------------------------------
// Host helpers: device memory through the driver, so the program runs on either driver.
static rt::Driver& drv() { return rt::driver(); }
static Stream stream() { return drv().default_stream(0); }
static void sync() { drv().synchronize_stream(stream()); }

template <class T>
struct Buffer {
  T* ptr = nullptr;
  size_t n = 0;
  explicit Buffer(size_t count) : n(count) {
    ptr = static_cast<T*>(drv().malloc(0, n * sizeof(T)));
    drv().memset_async(ptr, 0, n * sizeof(T), stream());
  }
  Buffer(const std::vector<T>& init) : Buffer(init.size()) {
    drv().memcpy_async(ptr, init.data(), n * sizeof(T), rt::CopyKind::HostToDevice, stream());
  }
  ~Buffer() { drv().free(0, ptr); }
  Buffer(const Buffer&) = delete;
  std::vector<T> read() const {
    std::vector<T> out(n);
    drv().memcpy_async(out.data(), ptr, n * sizeof(T), rt::CopyKind::DeviceToHost, stream());
    sync();
    return out;
  }
};

// ---------------------------------------------------------------------------------------------
// Kernels.

// Inclusive scan of one 1024-element segment per block (Hillis-Steele, double-buffered).
__global__ void block_scan(const int* in, int* out) {
  __shared__ int buf[2][1024];
  const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  int src = 0;
  buf[src][t] = in[base + t];
  __syncthreads();
  for (unsigned offset = 1; offset < blockDim.x; offset *= 2) {
    const int v = buf[src][t] + (t >= offset ? buf[src][t - offset] : 0);
    buf[1 - src][t] = v;
    src = 1 - src;
    __syncthreads();
  }
  out[base + t] = buf[src][t];
}

// Per warp: the sum by a shfl_down tree (lane 0 writes it) and by an xor butterfly (all lanes).
template <class T>
__global__ void warp_sums(const T* in, T* down_sums, T* xor_sums) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  T v = in[i];
  T d = v;
  for (int offset = 16; offset > 0; offset /= 2) d += __shfl_down_sync(0xffffffffu, d, offset);
  if (threadIdx.x % 32 == 0) down_sums[i / 32] = d;
  for (int mask = 1; mask < 32; mask *= 2) v += __shfl_xor_sync(0xffffffffu, v, mask);
  xor_sums[i] = v;
}

struct Pair16 {  // a 2-byte struct crosses a shuffle intact
  int8_t a, b;
};
__global__ void shuffle_variants(int* out, Pair16* pairs) {
  const int lane = threadIdx.x % 32;
  const int v = 100 + lane;
  int* o = out + threadIdx.x * 8;
  o[0] = __shfl_sync(0xffffffffu, v, 3, 8);        // lane 3 of each 8-lane segment
  o[1] = __shfl_sync(0xffffffffu, v, 35);          // srcLane wraps modulo width: lane 3
  o[2] = __shfl_sync(0xffffffffu, v, -1, 16);      // modulo 16: lane 15 of the segment
  o[3] = __shfl_up_sync(0xffffffffu, v, 2, 16);    // lanes 0,1 of each 16 keep their value
  o[4] = __shfl_down_sync(0xffffffffu, v, 5);      // lanes 27..31 keep their value
  o[5] = __shfl_xor_sync(0xffffffffu, v, 8, 16);   // within 16: lane ^ 8
  o[6] = __shfl_xor_sync(0xffffffffu, v, 16, 16);  // later segment: own value; earlier: allowed
  int s = lane + 1;                                // warp inclusive scan with shfl_up
  for (int d = 1; d < 32; d *= 2) {
    const int u = __shfl_up_sync(0xffffffffu, s, d);
    if (lane >= d) s += u;
  }
  o[7] = s;
  Pair16 p{static_cast<int8_t>(lane), static_cast<int8_t>(-lane)};
#if defined(__CUDACC__)  // CUDA shuffles only its own overload set of types
  unsigned short bits;
  memcpy(&bits, &p, 2);
  bits = static_cast<unsigned short>(__shfl_sync(0xffffffffu, static_cast<int>(bits), 31 - lane));
  memcpy(&p, &bits, 2);
#else  // the emulator moves any trivially copyable value of up to 8 bytes
  p = __shfl_sync(0xffffffffu, p, 31 - lane);
#endif
  pairs[threadIdx.x] = p;
}

__global__ void votes(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  unsigned* o = out + threadIdx.x * 6;
  o[0] = __ballot_sync(0xffffffffu, lane % 3 == 0);
  o[1] = __any_sync(0xffffffffu, lane == 5);
  o[2] = __any_sync(0xffffffffu, lane == 99);
  o[3] = __all_sync(0xffffffffu, lane < 32);
  o[4] = __all_sync(0xffffffffu, lane < 31);
  o[5] = __activemask();
}

// A block of 48 threads: its second warp has 16 lanes; collectives with a full mask still work.
__global__ void partial_warp(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  unsigned* o = out + threadIdx.x * 3;
  o[0] = __ballot_sync(0xffffffffu, 1);
  o[1] = __activemask();
  unsigned v = lane + 1;
  for (int m = 1; m < 16; m *= 2) v += __shfl_xor_sync(__activemask(), v, m, 16);
  o[2] = v;
  __syncwarp();
}

// Lanes that returned early are not active; a converged warp is.
__global__ void active_after_return(unsigned* out) {
  out[threadIdx.x] = 0;
  if (threadIdx.x % 32 >= 20) return;
  out[threadIdx.x] = __activemask();
}

__global__ void histogram(int n, int* hist_i, float* hist_f, unsigned long long* hist_u64, double* hist_d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int bin = (i * 7) % 16;
  atomicAdd(&hist_i[bin], 1);
  atomicAdd(&hist_f[bin], 0.5f);
  atomicAdd(&hist_u64[bin], (1ull << 33) + 1);
  atomicAdd(&hist_d[bin], 0.25);
}

// Every atomic overload, driven by n threads over the whole grid (several host threads on sim).
__global__ void atomics(int n, int* ints, unsigned* uints, long long* lls, unsigned long long* ulls, float* floats,
                        int* olds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = (i * 7919) % 1001 - 500;  // a permutation-ish spread over [-500, 500]
  atomicMax(&ints[0], v);
  atomicMin(&ints[1], v);
  if (atomicCAS(&ints[2], -1, i) == -1) atomicAdd(&ints[3], 1);  // exactly one winner
  olds[i] = atomicExch(&ints[4], i);
  atomicSub(&ints[5], 2);
  atomicMax(&uints[0], static_cast<unsigned>(i) * 3u);
  atomicMin(&uints[1], static_cast<unsigned>(i) + 10u);
  atomicAnd(&uints[2], ~(1u << (i % 32)));
  atomicOr(&uints[3], 1u << (i % 32));
  atomicXor(&uints[4], 1u << (i % 4));
  atomicInc(&uints[5], 9u);  // counts modulo 10
  atomicCAS(&uints[6], 0u, 7u);
  atomicExch(&uints[7], 5u);
  atomicMax(&lls[0], static_cast<long long>(v) * 10000000000LL);
  atomicMin(&lls[1], static_cast<long long>(v) * 10000000000LL);
  atomicMax(&ulls[0], static_cast<unsigned long long>(i) << 40);
  atomicMin(&ulls[1], (static_cast<unsigned long long>(i) << 40) + 1);
  atomicCAS(&ulls[2], 0ull, 1ull << 50);
  atomicExch(&ulls[3], 42ull);
  foo_atomic_max_float(&floats[0], static_cast<float>(v) * 0.5f);
  foo_atomic_min_float(&floats[1], static_cast<float>(v) * 0.5f);
  atomicExch(&floats[2], 1.5f);
}

// Wrong if barriers were no-ops or threads ran to completion one after another: each thread
// reads what other threads wrote before the barrier.
__global__ void reverse_and_rotate(const int* in, int* out) {
  __shared__ int sh[256];
  const unsigned t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  sh[t] = in[base + t];
  __syncthreads();
  int v = sh[n - 1 - t];  // reversed
  __syncthreads();
  sh[t] = v;
  for (int k = 0; k < 10; ++k) {  // rotate by one, ten times, one barrier pair per step
    __syncthreads();
    v = sh[(t + 1) % n] + 1;
    __syncthreads();
    sh[t] = v;
  }
  __syncthreads();
  out[base + t] = sh[t];
}

__global__ void dynamic_reverse(const float* in, float* out) {
  FOO_DYNAMIC_SHARED(float, buf);
  const unsigned t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  buf[t] = in[base + t];
  __syncthreads();
  out[base + t] = buf[n - 1 - t];
}

// Fills all 48 KiB of dynamic shared memory as doubles and reports the alignment.
__global__ void dynamic_full(int* ok) {
  FOO_DYNAMIC_SHARED(double, d);
  const unsigned t = threadIdx.x, count = 48 * 1024 / sizeof(double);
  for (unsigned k = t; k < count; k += blockDim.x) d[k] = k * 0.5;
  __syncthreads();
  bool good = reinterpret_cast<uintptr_t>(d) % 16 == 0;
  for (unsigned k = t; k < count; k += blockDim.x) good = good && d[count - 1 - k] == (count - 1 - k) * 0.5;
  if (!good) atomicAdd(ok, 1);
}

template <int N>
__global__ void template_shared(int* out) {
  __shared__ int s[N];
  s[threadIdx.x] = N * 1000 + static_cast<int>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * N + threadIdx.x] = s[N - 1 - threadIdx.x];
}

__global__ void multi_dim(int* out) {
  const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  const unsigned i = block * (blockDim.x * blockDim.y * blockDim.z) + thread;
  out[i] = static_cast<int>(blockIdx.x | blockIdx.y << 4 | blockIdx.z << 8 | threadIdx.x << 12 | threadIdx.y << 16 |
                            threadIdx.z << 20);
}

__global__ void barrier_votes(int* out) {
  const unsigned t = threadIdx.x;
  out[t * 4 + 0] = __syncthreads_count(t % 3 == 0);
  out[t * 4 + 1] = __syncthreads_and(t < 1000);
  out[t * 4 + 2] = __syncthreads_and(t != 7);
  out[t * 4 + 3] = __syncthreads_or(t == 200);
}

__global__ void intrinsics(float* f, int* i, double* d) {
  if (threadIdx.x != 0) return;
  f[0] = rsqrtf(4.0f);
  f[1] = __expf(0.0f) + expf(1.0f);
  f[2] = __logf(1.0f) + logf(2.0f);
  f[3] = __fdividef(1.0f, 4.0f);
  f[4] = fmaf(2.0f, 3.0f, 4.0f) + __fmaf_rn(1.0f, 1.0f, 1.0f);
  f[5] = fmaxf(1.0f, -2.0f) + fminf(1.0f, -2.0f) + fabsf(-3.0f);
  f[6] = floorf(1.5f) + ceilf(1.5f) + truncf(-1.5f) + roundf(2.5f) + nearbyintf(2.5f);
  f[7] = copysignf(2.0f, -1.0f) + fmodf(7.0f, 4.0f);
  f[8] = sqrtf(16.0f) + tanhf(0.0f) + erff(0.0f) + powf(2.0f, 10.0f);
  f[9] = sinf(0.0f) + cosf(0.0f) + log1pf(0.0f) + expm1f(0.0f);
  f[10] = __int_as_float(0x40000000) + __uint_as_float(0x3f800000u);
  i[0] = __float_as_int(1.0f);
  i[1] = static_cast<int>(__float_as_uint(-0.0f) >> 16);
  i[2] = __popc(0xf0f0u) * 100 + __ffs(0x10) * 10 + __ffs(0);
  i[3] = __clz(1) * 100 + __clz(0);
  i[4] = min(3, -4) + max(3, -4) * 10;
  i[5] = static_cast<int>(min(3u, 4u) + max(3u, 4u) * 10);
  i[6] = static_cast<int>(min(int64_t{1} << 40, int64_t{5}) + (max(int64_t{1} << 40, int64_t{5}) >> 40));
  i[7] = isnan(__int_as_float(0x7fc00000)) * 10 + isinf(1.0f / __int_as_float(0));
  i[8] = __ldg(&i[0]) == __float_as_int(1.0f);
  i[9] = static_cast<int>(__double_as_longlong(1.0) >> 52);
  d[0] = rsqrt(16.0);
  d[1] = exp(0.0) + log(1.0) + sqrt(4.0) + tanh(0.0) + erf(0.0) + fmax(1.0, 2.0) + fmin(1.0, 2.0) + fabs(-1.0);
  d[2] = pow(2.0, 3.0) + floor(1.5) + ceil(1.5) + trunc(-1.5) + round(2.5) + nearbyint(2.5) + copysign(1.0, -1.0) +
         fmod(7.0, 4.0) + log1p(0.0) + expm1(0.0) + sin(0.0) + cos(0.0) + fma(2.0, 3.0, 4.0);
  d[3] = __longlong_as_double(0x3ff0000000000000LL);
}

__global__ void spin_then_flag(long long ticks, int* flag) {
  const long long start = clock64();
  while (clock64() - start < ticks) {
  }
  *flag = 1;
}

__global__ void empty_kernel() {}

__global__ void fill_index(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * blockDim.x + threadIdx.x; }

__global__ void barrier_loop(int iterations, int* out) {
  int acc = 0;
  for (int k = 0; k < iterations; ++k) {
    acc += threadIdx.x;
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

__global__ void shuffle_loop(int iterations, int* out) {
  int v = threadIdx.x;
  for (int k = 0; k < iterations; ++k) v += __shfl_xor_sync(0xffffffffu, v, 1);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

#if !defined(__CUDACC__)
__global__ void divergent_barrier(int* out) {
  if (threadIdx.x < 32) __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
__global__ void divergent_shuffle(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x % 32 < 16) v = __shfl_sync(0xffffffffu, v, 0);
  out[threadIdx.x] = v;
}
__global__ void mismatched_collectives(int* out) {
  const unsigned lane = threadIdx.x % 32;
  out[threadIdx.x] = lane < 16 ? __ballot_sync(0xffffffffu, 1) : __any_sync(0xffffffffu, 1);
}
// Two call sites (the stores around the calls keep the compiler from merging them into one).
__global__ void divergent_activemask(unsigned* out) {
  const unsigned t = threadIdx.x;
  if (t % 32 < 8) {
    out[t + 64] = 1;
    out[t] = __activemask();
  } else {
    out[t + 128] = 2;
    out[t] = __activemask() ^ 0x5u;
  }
}
__global__ void mask_without_self(int* out) { out[threadIdx.x] = __ballot_sync(0x1u, 1); }
__global__ void syncs_but_independent(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
  __syncthreads();
}
__global__ void shuffles_but_independent(int* out) { out[threadIdx.x] = __shfl_sync(0xffffffffu, 1, 0); }
#endif

// ---------------------------------------------------------------------------------------------
// Tests.

static void test_block_scan() {
  const int blocks = 3, n = 1024 * blocks;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i % 7 + 1;
  Buffer<int> d_in(in), d_out(n);
  launch("emu::block_scan", block_scan, dim3(blocks), dim3(1024), 0, stream(), d_in.ptr, d_out.ptr);
  const auto out = d_out.read();
  bool ok = true;
  for (int b = 0; b < blocks; ++b) {
    int sum = 0;
    for (int t = 0; t < 1024; ++t) ok = ok && out[b * 1024 + t] == (sum += in[b * 1024 + t]);
  }
  CHECK(ok);
}

template <class T>
static void check_warp_sums(const char* name) {
  const int blocks = 4, threads = 256, n = blocks * threads;
  std::vector<T> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<T>(i * 3 + 1);
  Buffer<T> d_in(in), d_down(n / 32), d_xor(n);
  launch(name, warp_sums<T>, dim3(blocks), dim3(threads), 0, stream(), d_in.ptr, d_down.ptr, d_xor.ptr);
  const auto down = d_down.read();
  const auto x = d_xor.read();
  bool ok = true;
  for (int w = 0; w < n / 32; ++w) {
    T sum = 0;
    for (int l = 0; l < 32; ++l) sum += in[w * 32 + l];
    ok = ok && down[w] == sum;
    for (int l = 0; l < 32; ++l) ok = ok && x[w * 32 + l] == sum;
  }
  CHECK(ok);
}

static void test_warp_reductions() {
  check_warp_sums<int>("emu::warp_sums<int>");
  check_warp_sums<unsigned>("emu::warp_sums<unsigned>");
  check_warp_sums<float>("emu::warp_sums<float>");
  check_warp_sums<double>("emu::warp_sums<double>");
  check_warp_sums<long long>("emu::warp_sums<long long>");
  check_warp_sums<unsigned long long>("emu::warp_sums<unsigned long long>");
  check_warp_sums<int64_t>("emu::warp_sums<int64_t>");
}

static void test_shuffle_variants() {
  const int threads = 64;
  Buffer<int> d_out(threads * 8);
  Buffer<Pair16> d_pairs(threads);
  launch("emu::shuffle_variants", shuffle_variants, dim3(1), dim3(threads), 0, stream(), d_out.ptr, d_pairs.ptr);
  const auto out = d_out.read();
  const auto pairs = d_pairs.read();
  bool ok[9] = {true, true, true, true, true, true, true, true, true};
  for (int t = 0; t < threads; ++t) {
    const int lane = t % 32, v = 100 + lane;
    const int* o = &out[t * 8];
    ok[0] = ok[0] && o[0] == 100 + (lane / 8) * 8 + 3;
    ok[1] = ok[1] && o[1] == 103;
    ok[2] = ok[2] && o[2] == 100 + (lane / 16) * 16 + 15;
    ok[3] = ok[3] && o[3] == (lane % 16 < 2 ? v : v - 2);
    ok[4] = ok[4] && o[4] == (lane >= 27 ? v : v + 5);
    ok[5] = ok[5] && o[5] == 100 + (lane ^ 8);
    ok[6] = ok[6] && o[6] == (lane < 16 ? v : v - 16);
    ok[7] = ok[7] && o[7] == (lane + 1) * (lane + 2) / 2;
    ok[8] = ok[8] && pairs[t].a == 31 - lane && pairs[t].b == -(31 - lane);
  }
  for (bool b : ok) CHECK(b);
}

static void test_votes() {
  Buffer<unsigned> d_out(64 * 6);
  launch("emu::votes", votes, dim3(1), dim3(64), 0, stream(), d_out.ptr);
  const auto out = d_out.read();
  unsigned every_third = 0;
  for (int l = 0; l < 32; l += 3) every_third |= 1u << l;
  bool ok = true;
  for (int t = 0; t < 64; ++t) {
    const unsigned* o = &out[t * 6];
    ok = ok && o[0] == every_third && o[1] == 1 && o[2] == 0 && o[3] == 1 && o[4] == 0 && o[5] == 0xffffffffu;
  }
  CHECK(ok);

  Buffer<unsigned> d_partial(48 * 3);
  launch("emu::partial_warp", partial_warp, dim3(1), dim3(48), 0, stream(), d_partial.ptr);
  const auto p = d_partial.read();
  bool ok_full = true, ok_part = true;
  for (int t = 0; t < 48; ++t) {
    const unsigned* o = &p[t * 3];
    const unsigned lane = t % 32;
    if (t < 32) {
      ok_full = ok_full && o[0] == 0xffffffffu && o[1] == 0xffffffffu && o[2] == (lane < 16 ? 136u : 392u);
    } else {
      ok_part = ok_part && o[0] == 0xffffu && o[1] == 0xffffu && o[2] == 136u;
    }
  }
  CHECK(ok_full);
  CHECK(ok_part);

  Buffer<unsigned> d_active(64);
  launch("emu::active_after_return", active_after_return, dim3(1), dim3(64), 0, stream(), d_active.ptr);
  const auto a = d_active.read();
  bool ok_active = true;
  for (int t = 0; t < 64; ++t) ok_active = ok_active && a[t] == (t % 32 < 20 ? 0xfffffu : 0u);
  CHECK(ok_active);
}

static void test_histogram() {
  const int n = 64 * 256 + 17;  // a partial last block
  for (int independent = 0; independent < 2; ++independent) {
    Buffer<int> hi(16);
    Buffer<float> hf(16);
    Buffer<unsigned long long> hu(16);
    Buffer<double> hd(16);
    if (independent) {
      launch_independent("emu::histogram", histogram, foo::kernels::FOO_TARGET::blocks_for(n), dim3(256), stream(), n,
                         hi.ptr, hf.ptr, hu.ptr, hd.ptr);
    } else {
      launch("emu::histogram", histogram, foo::kernels::FOO_TARGET::blocks_for(n), dim3(256), 0, stream(), n, hi.ptr,
             hf.ptr, hu.ptr, hd.ptr);
    }
    std::vector<long long> expect(16, 0);
    for (int i = 0; i < n; ++i) ++expect[(i * 7) % 16];
    const auto ri = hi.read();
    const auto rf = hf.read();
    const auto ru = hu.read();
    const auto rd = hd.read();
    bool ok = true;
    for (int b = 0; b < 16; ++b) {
      ok = ok && ri[b] == expect[b] && rf[b] == 0.5f * expect[b] &&
           ru[b] == static_cast<unsigned long long>(expect[b]) * ((1ull << 33) + 1) && rd[b] == 0.25 * expect[b];
    }
    CHECK(ok);
  }
}

static void test_atomics() {
  const int n = 32 * 256;
  Buffer<int> ints(std::vector<int>{-1000, 1000, -1, 0, -7, 0});
  Buffer<unsigned> uints(std::vector<unsigned>{0, 0xffffffffu, 0xffffffffu, 0, 0, 0, 0, 0});
  Buffer<long long> lls(std::vector<long long>{LLONG_MIN, LLONG_MAX});
  Buffer<unsigned long long> ulls(std::vector<unsigned long long>{0, ~0ull, 0, 0});
  Buffer<float> floats(std::vector<float>{-1e30f, 1e30f, 0.0f});
  Buffer<int> olds(n);
  launch("emu::atomics", atomics, dim3(n / 256), dim3(256), 0, stream(), n, ints.ptr, uints.ptr, lls.ptr, ulls.ptr,
         floats.ptr, olds.ptr);
  const auto i = ints.read();
  const auto u = uints.read();
  const auto l = lls.read();
  const auto ull = ulls.read();
  const auto f = floats.read();
  auto o = olds.read();
  CHECK(i[0] == 500 && i[1] == -500);
  CHECK(i[2] >= 0 && i[2] < n && i[3] == 1);
  o.push_back(i[4]);  // the olds plus the final value are the initial value plus every id
  std::sort(o.begin(), o.end());
  std::vector<int> expect(n + 1);
  expect[0] = -7;
  std::iota(expect.begin() + 1, expect.end(), 0);
  CHECK(o == expect);
  CHECK(i[5] == -2 * n);
  CHECK(u[0] == 3u * (n - 1) && u[1] == 10u && u[2] == 0u && u[3] == 0xffffffffu);
  CHECK(u[4] == 0u);  // each of the 4 bits flipped n/4 times, an even number
  CHECK(u[5] == static_cast<unsigned>(n % 10) && u[6] == 7u && u[7] == 5u);
  CHECK(l[0] == 500 * 10000000000LL && l[1] == -500 * 10000000000LL);
  CHECK(ull[0] == static_cast<unsigned long long>(n - 1) << 40 && ull[1] == 1ull && ull[2] == 1ull << 50 &&
        ull[3] == 42ull);
  CHECK(f[0] == 250.0f && f[1] == -250.0f && f[2] == 1.5f);
}

static void test_barriers_matter() {
  const int blocks = 12, threads = 256, n = blocks * threads;
  std::vector<int> in(n);
  for (int k = 0; k < n; ++k) in[k] = k * 3 + 11;
  Buffer<int> d_in(in), d_out(n);
  launch("emu::reverse_and_rotate", reverse_and_rotate, dim3(blocks), dim3(threads), 0, stream(), d_in.ptr, d_out.ptr);
  const auto out = d_out.read();
  bool ok = true;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      const int reversed_at = (threads - 1 - (t + 10) % threads);
      ok = ok && out[b * threads + t] == in[b * threads + reversed_at] + 10;
    }
  CHECK(ok);
}

static void test_dynamic_shared() {
  const int blocks = 5, threads = 128, n = blocks * threads;
  std::vector<float> in(n);
  for (int k = 0; k < n; ++k) in[k] = k * 0.25f;
  Buffer<float> d_in(in), d_out(n);
  launch("emu::dynamic_reverse", dynamic_reverse, dim3(blocks), dim3(threads), threads * sizeof(float), stream(),
         d_in.ptr, d_out.ptr);
  const auto out = d_out.read();
  bool ok = true;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) ok = ok && out[b * threads + t] == in[b * threads + threads - 1 - t];
  CHECK(ok);
  Buffer<int> bad(1);
  launch("emu::dynamic_full", dynamic_full, dim3(3), dim3(256), 48 * 1024, stream(), bad.ptr);
  CHECK(bad.read()[0] == 0);
}

static void test_template_shared() {
  Buffer<int> a(2 * 64), b(2 * 128);
  launch("emu::template_shared<64>", template_shared<64>, dim3(2), dim3(64), 0, stream(), a.ptr);
  launch("emu::template_shared<128>", template_shared<128>, dim3(2), dim3(128), 0, stream(), b.ptr);
  const auto ra = a.read();
  const auto rb = b.read();
  bool ok = true;
  for (int t = 0; t < 2 * 64; ++t) ok = ok && ra[t] == 64000 + 63 - t % 64;
  for (int t = 0; t < 2 * 128; ++t) ok = ok && rb[t] == 128000 + 127 - t % 128;
  CHECK(ok);
}

static void test_multi_dim() {
  const dim3 grid(3, 2, 2), block(8, 4, 2);
  const int n = 3 * 2 * 2 * 8 * 4 * 2;
  for (int independent = 0; independent < 2; ++independent) {
    Buffer<int> out(n);
    if (independent) {
      launch_independent("emu::multi_dim", multi_dim, grid, block, stream(), out.ptr);
    } else {
      launch("emu::multi_dim", multi_dim, grid, block, 0, stream(), out.ptr);
    }
    const auto r = out.read();
    bool ok = true;
    int i = 0;
    for (int bz = 0; bz < 2; ++bz)
      for (int by = 0; by < 2; ++by)
        for (int bx = 0; bx < 3; ++bx)
          for (int tz = 0; tz < 2; ++tz)
            for (int ty = 0; ty < 4; ++ty)
              for (int tx = 0; tx < 8; ++tx)
                ok = ok && r[i++] == (bx | by << 4 | bz << 8 | tx << 12 | ty << 16 | tz << 20);
    CHECK(ok);
  }
}

static void test_barrier_votes() {
  Buffer<int> out(256 * 4);
  launch("emu::barrier_votes", barrier_votes, dim3(1), dim3(256), 0, stream(), out.ptr);
  const auto r = out.read();
  bool ok = true;
  for (int t = 0; t < 256; ++t) ok = ok && r[t * 4] == 86 && r[t * 4 + 1] == 1 && r[t * 4 + 2] == 0 && r[t * 4 + 3] == 1;
  CHECK(ok);
}

static bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

static void test_intrinsics() {
  Buffer<float> f(11);
  Buffer<int> i(10);
  Buffer<double> d(4);
  launch("emu::intrinsics", intrinsics, dim3(1), dim3(32), 0, stream(), f.ptr, i.ptr, d.ptr);
  const auto rf = f.read();
  const auto ri = i.read();
  const auto rd = d.read();
  CHECK(near(rf[0], 0.5) && near(rf[1], 1.0 + std::exp(1.0)) && near(rf[2], std::log(2.0)) && rf[3] == 0.25f);
  CHECK(rf[4] == 12.0f && rf[5] == 2.0f && rf[6] == 1.0f + 2.0f - 1.0f + 3.0f + 2.0f && rf[7] == 1.0f);
  CHECK(near(rf[8], 1028.0) && near(rf[9], 1.0) && rf[10] == 3.0f);
  CHECK(ri[0] == 0x3f800000 && ri[1] == 0x8000 && ri[2] == 850 && ri[3] == 3132 && ri[4] == 26 && ri[5] == 43);
  CHECK(ri[6] == 6 && ri[7] == 11 && ri[8] == 1 && ri[9] == 0x3ff);
  CHECK(near(rd[0], 0.25) && rd[1] == 1.0 + 2.0 + 2.0 + 1.0 + 1.0);
  CHECK(rd[2] == 8.0 + 1.0 + 2.0 - 1.0 + 3.0 + 2.0 - 1.0 + 3.0 + 1.0 + 10.0 && rd[3] == 1.0);
}

static void test_launch_validation() {
  Buffer<int> out(2048);
  CHECK_THROWS(launch("emu::too_many_threads", fill_index, dim3(1), dim3(1025), 0, stream(), out.ptr),
               "emu::too_many_threads", "1025 threads", "1024");
  CHECK_THROWS(launch_independent("emu::too_many_threads", fill_index, dim3(1), dim3(33, 32), stream(), out.ptr),
               "emu::too_many_threads", "1024");
  CHECK_THROWS(launch("emu::deep_block", fill_index, dim3(1), dim3(1, 1, 65), 0, stream(), out.ptr), "emu::deep_block",
               "64");
  CHECK_THROWS(launch("emu::tall_grid", fill_index, dim3(1, 65536), dim3(32), 0, stream(), out.ptr), "emu::tall_grid",
               "65535");
  CHECK_THROWS(launch("emu::too_much_shared", dynamic_reverse, dim3(1), dim3(32), 48 * 1024 + 1, stream(),
                      static_cast<const float*>(nullptr), static_cast<float*>(nullptr)),
               "emu::too_much_shared", "49152");
  CHECK_THROWS(launch("emu::empty", fill_index, dim3(0), dim3(32), 0, stream(), out.ptr), "emu::empty");
  sync();  // nothing was queued by the failed launches
  CHECK(true);
}

static void test_asynchrony() {
#if defined(__CUDACC__)
  const long long ticks = 400LL * 1000 * 1000;  // cycles: ~0.2 s at 2 GHz
#else
  const long long ticks = 200LL * 1000 * 1000;  // ns
#endif
  Buffer<int> flag(1);
  sync();
  const auto t0 = std::chrono::steady_clock::now();
  launch("emu::spin", spin_then_flag, dim3(1), dim3(1), 0, stream(), ticks, flag.ptr);
  const double launch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(launch_ms < 100.0);
  CHECK(!drv().query_stream(stream()));
  sync();
  const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(total_ms >= 150.0);
  CHECK(flag.read()[0] == 1);
}

// The profiler's device timing of launches (runtime/driver/kernel_trace.h, through the launch
// API's hook kernels/core/launch_trace.h): only while a session
// runs, only launches that queued work, each with its op's correlation id and device times on the
// host's system clock.
static void test_kernel_trace() {
  namespace kt = foo::runtime::kernel_trace;
#if defined(__CUDACC__)
  const long long ticks = 40LL * 1000 * 1000;  // cycles: ~20 ms at 2 GHz
#else
  const long long ticks = 20LL * 1000 * 1000;  // ns
#endif
  Buffer<int> flag(1), out(256);
  sync();
  CHECK(!foo::kernels::launch_trace::enabled());
  launch("emu::untraced", fill_index, dim3(1), dim3(32), 0, stream(), out.ptr);
  kt::start();
  CHECK(foo::kernels::launch_trace::enabled());
  kt::push_correlation(7);
  launch("emu::traced_spin", spin_then_flag, dim3(1), dim3(1), 0, stream(), ticks, flag.ptr);
  kt::push_correlation(8);  // a nested op
  launch_independent("emu::traced_fill", fill_index, dim3(2), dim3(128), stream(), out.ptr);
  kt::pop_correlation();
  CHECK_THROWS(launch("emu::traced_bad", fill_index, dim3(1), dim3(1025), 0, stream(), out.ptr), "1025");
  kt::pop_correlation();
  kt::stop();
  launch("emu::after_stop", fill_index, dim3(1), dim3(32), 0, stream(), out.ptr);
  std::vector<std::string> errors;
  const auto records = kt::collect(&errors);
  CHECK(errors.empty());
  CHECK(records.size() == 2);
  if (records.size() == 2) {
    const auto& spin = records[0];
    const auto& fill = records[1];
    CHECK(spin.name == "emu::traced_spin" && fill.name == "emu::traced_fill");
    CHECK(spin.correlation == 7 && fill.correlation == 8);
    CHECK(spin.device == 0 && spin.stream == fill.stream);
    CHECK(fill.grid[0] == 2 && fill.block[0] == 128 && fill.block[1] == 1);
    const double spin_ms = (spin.end_ns - spin.start_ns) / 1e6;
    CHECK(spin_ms >= 15.0 && spin_ms < 5000.0);  // the kernel's own time, measured on the device
    CHECK(spin.end_ns <= fill.start_ns + 1000);  // in stream order (1 us of rounding)
    CHECK(fill.start_ns <= fill.end_ns);
    CHECK(spin.launch_begin_ns <= spin.launch_end_ns);
    // Device times are on the host's clock: the kernel started after its launch began (give or
    // take the anchor's error, far below the 5 ms allowed) and ended before collect() returned.
    CHECK(spin.start_ns >= spin.launch_begin_ns - 5000000);
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    CHECK(fill.end_ns <= now);
  }
  CHECK(kt::collect(&errors).empty());  // once
  CHECK(flag.read()[0] == 1);
}

#if !defined(__CUDACC__)
static void test_sim_errors() {
  Buffer<int> out(256);
  launch("emu::divergent_barrier", divergent_barrier, dim3(4), dim3(64), 0, stream(), out.ptr);
  CHECK_THROWS(sync(), "emu::divergent_barrier", "__syncthreads reached by 32 of 64 threads of block (",
               "32 exited");
  launch("emu::divergent_shuffle", divergent_shuffle, dim3(1), dim3(64), 0, stream(), out.ptr);
  CHECK_THROWS(sync(), "emu::divergent_shuffle", "__shfl_sync", "0xffffffff", "waits for lanes 0xffff0000",
               "exited");
  launch("emu::mismatched_collectives", mismatched_collectives, dim3(1), dim3(32), 0, stream(), out.ptr);
  CHECK_THROWS(sync(), "emu::mismatched_collectives", "__any_sync", "__ballot_sync", "same collective");
  launch("emu::mask_without_self", mask_without_self, dim3(1), dim3(32), 0, stream(), out.ptr);
  CHECK_THROWS(sync(), "emu::mask_without_self", "does not include the calling lane");
  launch_independent("emu::syncs_but_independent", syncs_but_independent, dim3(2), dim3(64), stream(), out.ptr);
  CHECK_THROWS(sync(),
               "kernel emu::syncs_but_independent was launched with launch_independent but calls __syncthreads");
  launch_independent("emu::shuffles_but_independent", shuffles_but_independent, dim3(1), dim3(32), stream(), out.ptr);
  CHECK_THROWS(sync(), "launch_independent but calls __shfl_sync");
  Buffer<unsigned> active(64 * 3);
  launch("emu::divergent_activemask", divergent_activemask, dim3(1), dim3(64), 0, stream(), active.ptr);
  const auto a = active.read();
  bool ok_active = true;
  for (int t = 0; t < 64; ++t) ok_active = ok_active && a[t] == (t % 32 < 8 ? 0xffu : 0xffffff05u);
  CHECK(ok_active);
  // The stream recovers: the error was reported once, later work runs.
  launch("emu::fill_index", fill_index, dim3(2), dim3(128), 0, stream(), out.ptr);
  const auto r = out.read();
  bool ok = true;
  for (int k = 0; k < 256; ++k) ok = ok && r[k] == k;
  CHECK(ok);
}
#endif

// ---------------------------------------------------------------------------------------------
// Benchmarks (--bench): numbers for docs/emulation.md, not checks.

// CPU time of the whole process next to wall time: on a loaded machine wall time mostly
// measures the wait for a core. Run with TORCH_FOO_SIM_THREADS=1 for per-core costs.
struct Cost {
  double cpu, wall;
};
static double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
template <class F>
static Cost measure(F&& f) {
  const double c0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return {process_cpu_seconds() - c0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}
static void report(const char* what, Cost c, double count, double scale, const char* unit) {
  std::printf("%-64s %8.2f %s CPU (%8.2f wall)\n", what, c.cpu * scale / count, unit, c.wall * scale / count);
}

static void bench() {
  Buffer<int> out(1 << 20);
  char label[128];
  for (unsigned threads : {32u, 256u, 1024u}) {
    const int iters = 2000000 / threads;
    launch("bench::barrier", barrier_loop, dim3(1), dim3(threads), 0, stream(), 1, out.ptr);
    sync();
    const Cost base = measure([&] {
      launch("bench::barrier", barrier_loop, dim3(1), dim3(threads), 0, stream(), 0, out.ptr);
      sync();
    });
    Cost c = measure([&] {
      launch("bench::barrier", barrier_loop, dim3(1), dim3(threads), 0, stream(), iters, out.ptr);
      sync();
    });
    c.cpu -= base.cpu;
    c.wall -= base.wall;
    std::snprintf(label, sizeof label, "__syncthreads, %u threads, per thread per barrier (a switch)", threads);
    report(label, c, double(iters) * threads, 1e9, "ns");
  }
  {
    const int iters = 20000;
    const Cost c = measure([&] {
      launch("bench::shuffle", shuffle_loop, dim3(1), dim3(256), 0, stream(), iters, out.ptr);
      sync();
    });
    report("__shfl_xor_sync, 256 threads, per thread per shuffle", c, double(iters) * 256, 1e9, "ns");
  }
  for (int warm = 0; warm < 200; ++warm) launch("bench::empty", empty_kernel, dim3(1), dim3(1), 0, stream());
  sync();
  {
    const int n = 5000;
    report("empty kernel <<<1, 1>>>: launch + synchronize", measure([&] {
             for (int k = 0; k < n; ++k) {
               launch("bench::empty", empty_kernel, dim3(1), dim3(1), 0, stream());
               sync();
             }
           }),
           n, 1e6, "us");
    report("empty kernel <<<1, 1>>>: back-to-back launches, each", measure([&] {
             for (int k = 0; k < n; ++k) launch("bench::empty", empty_kernel, dim3(1), dim3(1), 0, stream());
             sync();
           }),
           n, 1e6, "us");
    report("empty kernel <<<1, 256>>> launch: back-to-back, each", measure([&] {
             for (int k = 0; k < n; ++k) launch("bench::empty", empty_kernel, dim3(1), dim3(256), 0, stream());
             sync();
           }),
           n, 1e6, "us");
    report("empty kernel <<<1, 256>>> launch_independent: back-to-back, each", measure([&] {
             for (int k = 0; k < n; ++k) launch_independent("bench::empty", empty_kernel, dim3(1), dim3(256), stream());
             sync();
           }),
           n, 1e6, "us");
  }
  {
    const unsigned blocks = (1 << 20) / 256;
    launch_independent("bench::fill", fill_index, dim3(blocks), dim3(256), stream(), out.ptr);
    sync();
    report("out[i] = i, 2^20 threads, launch_independent, per thread", measure([&] {
             for (int k = 0; k < 10; ++k) {
               launch_independent("bench::fill", fill_index, dim3(blocks), dim3(256), stream(), out.ptr);
             }
             sync();
           }),
           10.0 * (1 << 20), 1e9, "ns");
    report("out[i] = i, 2^20 threads, launch (fibers), per thread", measure([&] {
             for (int k = 0; k < 10; ++k) launch("bench::fill", fill_index, dim3(blocks), dim3(256), 0, stream(), out.ptr);
             sync();
           }),
           10.0 * (1 << 20), 1e9, "ns");
  }
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) {
    bench();
    return 0;
  }
  test_block_scan();
  test_warp_reductions();
  test_shuffle_variants();
  test_votes();
  test_histogram();
  test_atomics();
  test_barriers_matter();
  test_dynamic_shared();
  test_template_shared();
  test_multi_dim();
  test_barrier_votes();
  test_intrinsics();
  test_launch_validation();
  test_asynchrony();
  test_kernel_trace();
#if !defined(__CUDACC__)
  test_sim_errors();
#endif
  std::printf("emulation_test (%s driver): %d passed, %d failed\n", drv().name(), g_pass, g_fail);
  return g_fail == 0 ? 0 : 1;
}
