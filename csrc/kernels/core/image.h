#pragma once
// 5-d [N, C, D, H, W] tensors as the pooling and resampling kernels see them: element
// (n, c, d, h, w) at data[n*sn + c*sc + d*sd + h*sh + w*sw] (any layout), and the order threads
// walk them in. 2-d images are D = 1 (sd = 0), so one kernel serves the 2-d and 3-d ops.
#include <cstdint>

#include "kernels/core/dtype.h"

namespace foo::kernels {

struct ImageRef {
  void* data;
  int64_t sn, sc, sd, sh, sw;  // in elements
};

// A thread's flat index i over n x c x d x h x w, split in memory order: (n, c, d, h, w) for a
// contiguous tensor, (n, d, h, w, c) for channels_last(_3d), so consecutive threads touch
// adjacent elements of the tensor they write.
struct ImageIndex {
  int64_t c, d, h, w;
  bool channels_last;
  FOO_HD int64_t count(int64_t n) const { return n * c * d * h * w; }
  FOO_HD void split(int64_t i, int64_t& n, int64_t& ch, int64_t& z, int64_t& y, int64_t& x) const {
    if (channels_last) {
      ch = i % c;
      i /= c;
    }
    x = i % w;
    i /= w;
    y = i % h;
    i /= h;
    z = i % d;
    i /= d;
    if (!channels_last) {
      ch = i % c;
      i /= c;
    }
    n = i;
  }
};

template <typename T>
struct Image {
  T* data;
  int64_t sn, sc, sd, sh, sw;
  FOO_HD T* plane(int64_t n, int64_t c) const { return data + n * sn + c * sc; }  // (n, c, 0, 0, 0)
  FOO_HD T& at(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return data[n * sn + c * sc + d * sd + h * sh + w * sw];
  }
};

template <typename T>
FOO_HD Image<T> image(const ImageRef& r) {
  return {static_cast<T*>(r.data), r.sn, r.sc, r.sd, r.sh, r.sw};
}

}  // namespace foo::kernels
