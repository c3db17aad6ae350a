#pragma once
// 4-d [N, C, H, W] tensors as the pooling and resampling kernels see them: element (n, c, h, w)
// at data[n*sn + c*sc + h*sh + w*sw] (any layout), and the order threads walk them in.
#include <cstdint>

#include "kernels/dtype.h"

namespace foo::kernels {

struct ImageRef {
  void* data;
  int64_t sn, sc, sh, sw;  // in elements
};

// A thread's flat index i over n x c x h x w, split in memory order: (n, c, h, w) for a
// contiguous tensor, (n, h, w, c) for channels_last, so consecutive threads touch adjacent
// elements of the tensor they write.
struct ImageIndex {
  int64_t c, h, w;
  bool channels_last;
  FOO_HD void split(int64_t i, int64_t& n, int64_t& ch, int64_t& y, int64_t& x) const {
    if (channels_last) {
      ch = i % c;
      i /= c;
      x = i % w;
      i /= w;
      y = i % h;
      n = i / h;
    } else {
      x = i % w;
      i /= w;
      y = i % h;
      i /= h;
      ch = i % c;
      n = i / c;
    }
  }
};

template <typename T>
struct Image {
  T* data;
  int64_t sn, sc, sh, sw;
  FOO_HD T* plane(int64_t n, int64_t c) const { return data + n * sn + c * sc; }  // (n, c, 0, 0)
  FOO_HD T& at(int64_t n, int64_t c, int64_t h, int64_t w) const { return data[n * sn + c * sc + h * sh + w * sw]; }
};

template <typename T>
FOO_HD Image<T> image(const ImageRef& r) {
  return {static_cast<T*>(r.data), r.sn, r.sc, r.sh, r.sw};
}

}  // namespace foo::kernels
