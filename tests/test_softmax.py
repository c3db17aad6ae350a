"""Softmax family and nll_loss on foo against the CPU: the thread layouts of softmax.cu (warp per
row, block per row up to 1024 threads, thread per row for inner dims), 16-bit accumulation,
half_to_float, and F.cross_entropy forward + backward with no CPU fallback."""

import pytest
import torch
import torch.nn.functional as F

import torch_foo
from conftest import cuda_paths

A = torch.ops.aten
OPS = ("_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
       "nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward")


def fallbacks_of(ops=OPS):
    return {k: v for k, v in torch_foo.fallback_report().items() if k.split("::")[-1].split(".")[0] in ops}


def assert_close_16bit(got, exact, dtype):
    """A 16-bit result against the float64 result on the same inputs: within a unit in the last place."""
    assert got.device.type == "foo" and got.dtype == dtype
    eps = 2.0 ** (-10 if dtype == torch.float16 else -7)
    torch.testing.assert_close(got.cpu().double(), exact, atol=1e-6, rtol=eps)


# dim 5000 and 20000: one block per row (512 and 1024 threads); 1025: the first block-per-row
# size; 1024 and 33: a warp per row; dim 0 of a 3-D tensor: a thread per row.
@pytest.mark.parametrize("shape,dim", [((3, 5000), 1), ((2, 20000), -1), ((4, 1025), 1), ((37, 1024), 1),
                                       ((129, 33), 1), ((300, 7, 5), 0), ((6, 700, 3), 1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_layouts_float32(shape, dim, log):
    torch.manual_seed(0)
    x = torch.randn(shape) * 4
    fwd = A._log_softmax if log else A._softmax
    bwd = A._log_softmax_backward_data if log else A._softmax_backward_data
    torch_foo.reset_fallback_report()
    y = fwd(x.to("foo"), dim, False)
    torch.testing.assert_close(y.cpu(), fwd(x, dim, False))
    g = torch.randn(shape)
    gi = bwd(g.to("foo"), y, dim, torch.float32)
    # The gradient subtracts a sum over the row, whose float rounding depends on the summation
    # order (the CPU's differs between AVX2 and AVX-512 machines: 2.8e-5 apart at 20000): foo is
    # compared with the exact result, within twice the CPU's own error.
    exact = bwd(g.double(), y.cpu().double(), dim, torch.float64)
    cpu_error = (bwd(g, y.cpu(), dim, torch.float32).double() - exact).abs().max().item()
    torch.testing.assert_close(gi.cpu().double(), exact, atol=max(1e-5, 2 * cpu_error), rtol=1.3e-6)
    assert fallbacks_of() == {}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("shape,dim", [((5, 3000), 1), ((9, 100), 1), ((50, 4, 3), 1)])
def test_softmax_dtypes(dtype, shape, dim):
    torch.manual_seed(1)
    x = (torch.randn(shape) * 4).to(dtype)
    g = torch.randn(shape).to(dtype)
    for fwd, bwd in ((A._softmax, A._softmax_backward_data), (A._log_softmax, A._log_softmax_backward_data)):
        y = fwd(x.to("foo"), dim, False)
        gi = bwd(g.to("foo"), y, dim, dtype)
        if dtype == torch.float64:
            torch.testing.assert_close(y.cpu(), fwd(x, dim, False))
            torch.testing.assert_close(gi.cpu(), bwd(g, y.cpu(), dim, dtype))
        else:  # accumulated in float, rounded once
            assert_close_16bit(y, fwd(x.double(), dim, False), dtype)
            assert_close_16bit(gi, bwd(g.double(), y.cpu().double(), dim, torch.float64), dtype)


def test_softmax_half_to_float_and_edges():
    x = torch.randn(4, 2000).half()
    for fwd in (A._softmax, A._log_softmax):
        y = fwd(x.to("foo"), 1, True)
        assert y.dtype == torch.float32
        torch.testing.assert_close(y.cpu(), fwd(x.float(), 1, False))
    g = torch.randn(4, 2000)
    y = A._softmax(x.float(), 1, False)
    gi = A._softmax_backward_data(g.to("foo"), y.to("foo"), 1, torch.float16)
    assert gi.dtype == torch.float16
    torch.testing.assert_close(gi.cpu(), A._softmax_backward_data(g, y, 1, torch.float32).half())
    # softmax of a scalar is 1, empty tensors stay empty
    assert A._softmax(torch.tensor(2.5, device="foo"), 0, False).cpu().item() == 1.0
    assert A._log_softmax(torch.tensor(2.5, device="foo"), -1, False).cpu().item() == 0.0
    assert A._softmax(torch.empty(0, 7, device="foo"), 1, False).shape == (0, 7)
    with pytest.raises(NotImplementedError):
        A._softmax(torch.ones(3, 4, dtype=torch.long, device="foo"), 1, False)


def cross_entropy_case(shape, dtype, weighted, reduction, ignore_index):
    torch.manual_seed(2)
    classes = shape[1]
    logits = torch.randn(shape).to(dtype)
    target = torch.randint(0, classes, (shape[0],) + shape[2:])
    target.view(-1)[::5] = ignore_index if ignore_index != -100 else -100
    weight = (torch.rand(classes) + 0.5).to(dtype) if weighted else None

    ref_in = logits.double().requires_grad_()
    ref = F.cross_entropy(ref_in, target, weight=None if weight is None else weight.double(),
                          reduction=reduction, ignore_index=ignore_index)
    grad = torch.randn(ref.shape)
    ref.backward(grad.double())

    torch_foo.reset_fallback_report()
    got_in = logits.to("foo").requires_grad_()
    got = F.cross_entropy(got_in, target.to("foo"), weight=None if weight is None else weight.to("foo"),
                          reduction=reduction, ignore_index=ignore_index)
    got.backward(grad.to(dtype).to("foo"))
    assert fallbacks_of() == {}
    assert got.dtype == dtype and got_in.grad.dtype == dtype
    tol = {torch.float32: dict(atol=1e-5, rtol=1.3e-6), torch.float16: dict(atol=2e-3, rtol=4e-3), torch.bfloat16: dict(atol=2e-2, rtol=3e-2)}
    torch.testing.assert_close(got.cpu().double(), ref.detach(), **tol[dtype])
    torch.testing.assert_close(got_in.grad.cpu().double(), ref_in.grad, **tol[dtype])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 3])
def test_cross_entropy(reduction, weighted, ignore_index):
    # 3000 samples: the one-block reduction loops; 1000 classes: a warp per row.
    cross_entropy_case((3000, 10), torch.float32, weighted, reduction, ignore_index)
    cross_entropy_case((8, 1000), torch.float32, weighted, reduction, ignore_index)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_cross_entropy_16bit(dtype):
    cross_entropy_case((64, 37), dtype, True, "mean", -100)


@pytest.mark.parametrize("shape", [(2, 5, 6, 7), (3, 4, 10), (2, 3, 2, 3, 2)])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_spatial(shape, reduction):
    # class dim 1 of a 3-D or more input: log_softmax over an inner dim, nll_loss2d
    cross_entropy_case(shape, torch.float32, True, reduction, -100)


def test_nll_loss_bad_target():
    x = torch.randn(4, 6, device="foo").log_softmax(1)
    for bad in (6, -1):
        target = torch.tensor([0, bad, 2, 3], device="foo")
        for reduction in (0, 1, 2):  # checked on the device: raised at the next synchronisation
            A.nll_loss_forward(x, target, None, reduction, -100)
            with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
                torch.foo.synchronize()
        A.nll_loss_backward(torch.tensor(1.0, device="foo"), x, target, None, 1, -100,
                            torch.tensor(4.0, device="foo"))
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
            torch.foo.synchronize()
    # the device is fine afterwards; an ignored target may be anything
    target = torch.tensor([0, 99, 2, 3], device="foo")
    loss, total = A.nll_loss_forward(x, target, None, 1, 99)
    assert total.cpu().item() == 3.0
    torch.testing.assert_close(loss.cpu(), A.nll_loss_forward(x.cpu(), target.cpu(), None, 1, 99)[0])


def test_nll_loss_empty_and_uint8_targets():
    x = torch.empty(0, 4, device="foo")
    t = torch.empty(0, dtype=torch.long, device="foo")
    loss, total = A.nll_loss_forward(x, t, None, 1, -100)
    assert loss.cpu().isnan().item() and total.cpu().item() == 0.0
    assert A.nll_loss_forward(x, t, None, 2, -100)[0].cpu().item() == 0.0
    xc = torch.randn(5, 3).log_softmax(1)
    tc = torch.tensor([0, 2, 1, 1, 0], dtype=torch.uint8)
    for reduction in (0, 1, 2):
        got = A.nll_loss_forward(xc.to("foo"), tc.to("foo"), None, reduction, -100)
        for g, r in zip(got, A.nll_loss_forward(xc, tc, None, reduction, -100)):
            torch.testing.assert_close(g.cpu(), r)


# Sim runs rows of <= 1024 with softmax_rows_as_warps (a thread computing a warp's row), a sim-only
# path, from 65536 elements on and up to 4096 elements in all; cuda runs the warp kernel, which sim
# runs with its sim-only paths off. Both must give the same bits, NaN, infinities and signed zeros
# included. (Before cuda_paths(), this compared chunks of 4 rows, which themselves took the tiny
# problems' rows-as-warps path.)
@pytest.mark.parametrize("dim,dtype", [(1024, torch.float32), (33, torch.float32), (1000, torch.float16)])
@pytest.mark.parametrize("size", ["large", "tiny"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_as_warps_match_warp_kernel(dim, dtype, size, log):
    torch.manual_seed(2)
    rows = 65536 // dim + 1 if size == "large" else 4096 // dim
    x = (torch.randn(rows, dim) * 4).to(dtype)
    x[1, 3], x[2, :], x[3, 5], x[0, 0] = float("nan"), float("-inf"), float("inf"), -0.0
    g = torch.randn(rows, dim).to(dtype).to("foo")
    fwd = A._log_softmax if log else A._softmax
    bwd = A._log_softmax_backward_data if log else A._softmax_backward_data
    xf = x.to("foo")
    y = fwd(xf, 1, False)
    gi = bwd(g, y, 1, dtype)
    with cuda_paths():
        y_warp = fwd(xf, 1, False)
        gi_warp = bwd(g, y, 1, dtype)
    for got, want in ((y, y_warp), (gi, gi_warp)):
        assert got.device.type == "foo" and got.dtype == dtype
        assert torch.equal(got.cpu().view(torch.int16 if dtype == torch.float16 else torch.int32),
                           want.cpu().view(torch.int16 if dtype == torch.float16 else torch.int32))
    torch.testing.assert_close(y.cpu()[4:].double(), fwd(x.double(), 1, False)[4:],
                               rtol=2e-3 if dtype == torch.float16 else 1e-5, atol=1e-5)
