#pragma once
// torch.cat's batched copy (cat.cu): up to kCatBatch dense inputs of one dtype land in a dense
// output in one launch. In memory order (the output's memory format) every tensor is
// [outer, dim, inner]; input k, `dim_size` long along the cat dim, starts at `offset` there.
#include <cstdint>

#include "kernels/core/dispatch.h"
#include "kernels/core/dtype.h"

namespace foo::kernels {

constexpr int kCatBatch = 64;

struct CatInput {
  const void* data = nullptr;
  int64_t dim_size = 0;
  int64_t offset = 0;
  int64_t numel = 0;
};

struct CatBatch {
  void* out = nullptr;
  int64_t out_dim_size = 0;
  int64_t inner = 1;
  int32_t count = 0;
  int32_t element_size = 0;
  CatInput inputs[kCatBatch];
};

}  // namespace foo::kernels

FOO_DECLARE_KERNEL(void, cat_batch, (Stream stream, const CatBatch& batch))
