"""Fake (meta) implementations of the foo custom ops: shapes and dtypes without data, which
torch.compile and torch.library.opcheck need to trace them. A custom op runs without one; add
one here when it should be compiled."""

import torch


@torch.library.register_fake("foo::axpby")
def _axpby(x, y, a=1.0, b=1.0):
    torch._check(x.shape == y.shape, lambda: f"foo::axpby: shapes {x.shape} and {y.shape} differ")
    torch._check(x.dtype == y.dtype, lambda: f"foo::axpby: dtypes {x.dtype} and {y.dtype} differ")
    return torch.empty_like(x, memory_format=torch.contiguous_format)
