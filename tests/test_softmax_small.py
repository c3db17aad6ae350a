"""softmax.cu's rows-as-warps kernel on small problems (sim: up to 4096 elements a thread computes
what a warp computes, lane by lane) against the warp kernel itself: the same rows, once in a tensor
small enough for that path and once inside a larger one that runs the warp kernel, give the same
bits."""

import pytest
import torch

import torch_foo  # noqa: F401

A = torch.ops.aten


def bits(t):
    t = t.cpu()
    return t.view(torch.int16 if t.element_size() == 2 else torch.int32 if t.element_size() == 4 else torch.int64)


# 8 and 100 elements a row (a lane holds one / up to four of them); 600 and 50 rows are past the
# small path's 4096 elements (and below 65536), so the full tensor runs the warp-per-row kernel.
@pytest.mark.parametrize("rows,dim", [(600, 8), (50, 100)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("log", [False, True])
def test_small_rows_match_the_warp_kernel(rows, dim, dtype, log):
    torch.manual_seed(0)
    x = (torch.randn(rows, dim) * 4).to(dtype)
    x[1, 0] = float("-inf")
    x[2] = -0.0  # a row of signed zeros: which zero the max keeps depends on the combine order
    x[2, ::3] = 0.0
    fwd = A._log_softmax if log else A._softmax
    bwd = A._log_softmax_backward_data if log else A._softmax_backward_data
    big_x, small_x = x.to("foo"), x[:3].to("foo")
    big_y, small_y = fwd(big_x, 1, False), fwd(small_x, 1, False)
    assert small_y.device.type == "foo" and small_y.dtype == dtype
    assert torch.equal(bits(big_y[:3]), bits(small_y))
    torch.testing.assert_close(small_y.cpu().float(), fwd(x[:3].float(), 1, False), atol=2e-3, rtol=2e-3)
    g = torch.randn(rows, dim).to(dtype)
    big_g = bwd(g.to("foo"), big_y, 1, dtype)
    small_g = bwd(g[:3].to("foo"), small_y, 1, dtype)
    assert torch.equal(bits(big_g[:3]), bits(small_g))


def test_small_half_to_float():
    x = torch.randn(2, 8, dtype=torch.float16)
    y = A._softmax(x.to("foo"), 1, True)
    assert y.dtype == torch.float32 and y.device.type == "foo"
    torch.testing.assert_close(y.cpu(), torch.softmax(x.float(), 1))
