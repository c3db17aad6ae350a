"""Native random fills (normal_, uniform_, bernoulli_, bernoulli, native_dropout): reproducible
under torch.foo.manual_seed, never sent to the CPU fallback, and equal bit for bit to an
independent NumPy model of Philox4x32-10 and the kernels' arithmetic (tests/philox_reference.py).
Run with TORCH_FOO_DRIVER=cuda, the same assertions prove the GPU draws the same numbers."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import philox_reference as ref
import torch_foo

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
ALL = FLOATS + [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]


def assert_exact(actual, expected):
    assert actual.device.type == "foo"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert torch.equal(actual.cpu(), expected), f"{(actual.cpu() != expected).sum().item()} elements differ"



@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("normal", [True, False], ids=["normal_", "uniform_"])
def test_matches_philox_reference(normal, dtype, no_fallback):
    torch.foo.manual_seed(1234)
    x = torch.empty(37, dtype=dtype, device="foo")
    if normal:
        x.normal_(0.5, 2.0)
        expected = ref.normal(37, 1234, 0, 0.5, 2.0, dtype)
    else:
        x.uniform_(-1.0, 3.0)
        expected = ref.uniform(37, 1234, 0, -1.0, 3.0, dtype)
    assert_exact(x, expected)


def test_more_elements_than_one_grid():
    # The kernels cap the grid at 1024 blocks of 256 threads (2 elements each) and loop: values
    # must depend on the element index only, also past the first grid-stride.
    n = 2 * 1024 * 256 * 2 + 3
    torch.foo.manual_seed(5)
    x = torch.empty(n, device="foo").normal_()
    assert_exact(x, ref.normal(n, 5, 0, 0.0, 1.0, torch.float32))
    # the generator advanced by ceil(n / 4) * 4: the next fill starts at that Philox offset
    y = torch.empty(n, device="foo").bernoulli_(0.25)
    assert_exact(y, ref.bernoulli(n, 5, (n + 3) // 4 * 4, 0.25, torch.float32))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_bernoulli_float(dtype, no_fallback):
    torch.foo.manual_seed(11)
    x = torch.empty(3, 41, dtype=dtype, device="foo").bernoulli_(0.3)
    assert_exact(x, ref.bernoulli(123, 11, 0, 0.3, dtype).reshape(3, 41))
    assert_exact(x.bernoulli_(0.0), torch.zeros(3, 41, dtype=dtype))
    assert_exact(x.bernoulli_(1.0), torch.ones(3, 41, dtype=dtype))
    assert_exact(x.bernoulli_(), ref.bernoulli(123, 11, 3 * 124, 0.5, dtype).reshape(3, 41))  # p=0.5 default


@pytest.mark.parametrize("p_dtype", FLOATS, ids=str)
def test_bernoulli_tensor_broadcast(p_dtype, no_fallback):
    p = torch.rand(1, 7, dtype=torch.float64).to(p_dtype)
    torch.foo.manual_seed(3)
    x = torch.empty(5, 7, device="foo").bernoulli_(p.to("foo"))
    expected = ref.bernoulli(35, 3, 0, p.double().expand(5, 7).reshape(-1).numpy(), torch.float32)
    assert_exact(x, expected.reshape(5, 7))


def test_bernoulli_functional_and_out(no_fallback):
    p = torch.rand(4, 6, dtype=torch.float64)
    torch.foo.manual_seed(8)
    y = torch.bernoulli(p.to("foo"))  # CompositeExplicitAutograd bernoulli -> foo's bernoulli.out
    assert_exact(y, ref.bernoulli(24, 8, 0, p.reshape(-1).numpy(), torch.float64).reshape(4, 6))
    torch.foo.manual_seed(8)
    out = torch.empty(2, dtype=torch.int32, device="foo")
    torch.bernoulli(p.to("foo"), out=out)
    assert_exact(out, y.cpu().to(torch.int32))
    torch.foo.manual_seed(8)
    assert_exact(torch.bernoulli(p.to("foo"), 0.9), ref.bernoulli(24, 8, 0, 0.9, torch.float64).reshape(4, 6))


def test_non_contiguous_self_is_filled_in_place(no_fallback):
    # Element i in row-major order of the view takes draw i, whatever the strides.
    torch.foo.manual_seed(21)
    base = torch.zeros(6, 4, device="foo")
    view = base.t()
    view.normal_()
    expected = ref.normal(24, 21, 0, 0.0, 1.0, torch.float32).reshape(4, 6)
    assert_exact(view, expected)
    assert_exact(base, expected.t())
    torch.foo.manual_seed(21)
    gaps = torch.zeros(5, 8, dtype=torch.float16, device="foo")
    gaps[1:4, ::3].uniform_(2.0, 3.0)
    expected = torch.zeros(5, 8, dtype=torch.float16)
    expected[1:4, ::3] = ref.uniform(9, 21, 0, 2.0, 3.0, torch.float16).reshape(3, 3)
    assert_exact(gaps, expected)
    torch.foo.manual_seed(21)
    bools = torch.zeros(4, 6, dtype=torch.bool, device="foo")
    bools.t().bernoulli_(torch.full((4,), 0.5, device="foo"))
    assert_exact(bools.t(), ref.bernoulli(24, 21, 0, 0.5, torch.bool).reshape(6, 4))


def test_randn_reproducible_and_native(no_fallback):
    torch.foo.manual_seed(7)
    a = torch.randn(4, 4, device="foo")
    torch.foo.manual_seed(7)
    b = torch.randn(4, 4, device="foo")
    c = torch.randn(4, 4, device="foo")  # the generator advanced: different numbers
    assert a.device == torch.device("foo:0") and a.dtype == torch.float32 and a.shape == (4, 4)
    assert torch.equal(a.cpu(), b.cpu())
    assert not torch.equal(b.cpu(), c.cpu())
    g1 = torch.Generator(device="foo").manual_seed(3)
    g2 = torch.Generator(device="foo").manual_seed(3)
    x = torch.empty(10, dtype=torch.bfloat16, device="foo").normal_(generator=g1)
    y = torch.empty(10, dtype=torch.bfloat16, device="foo").normal_(generator=g2)
    assert torch.equal(x.cpu(), y.cpu())


def test_statistics_and_bounds():
    torch.foo.manual_seed(0)
    x = torch.randn(20000, device="foo").cpu()
    assert abs(x.mean().item()) < 0.05 and abs(x.std().item() - 1) < 0.05
    u = torch.rand(20000, device="foo").cpu()
    assert u.min().item() >= 0.0 and u.max().item() < 1.0 and abs(u.mean().item() - 0.5) < 0.02
    for dtype in (torch.float16, torch.bfloat16):
        v = torch.empty(5000, dtype=dtype, device="foo").uniform_(2.0, 3.0).cpu()
        assert v.min().item() >= 2.0 and v.max().item() < 3.0
    b = torch.empty(20000, device="foo").bernoulli_(0.2).cpu()
    assert abs(b.mean().item() - 0.2) < 0.02


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_dropout_is_native_and_uses_the_bernoulli_draws(dtype, no_fallback):
    x = torch.randn(9, 13, dtype=dtype)
    torch.foo.manual_seed(4)
    out = F.dropout(x.to("foo"), 0.4, training=True)  # -> aten::native_dropout on foo
    torch.foo.manual_seed(4)
    out2, mask = torch.native_dropout(x.to("foo").t(), 0.4, True)  # draws follow the view's element order
    keep = ref.bernoulli(117, 4, 0, 0.6, torch.bool)
    assert_exact(out, (x * keep.reshape(9, 13)).mul_(1 / 0.6))  # the CPU's input.mul(mask).mul_(scale)
    assert_exact(mask, keep.reshape(13, 9))
    assert mask.stride() == out2.stride() == x.t().stride()  # as the CPU: x's strides
    assert_exact(out2, (x.t() * keep.reshape(13, 9)).mul_(1 / 0.6))


def test_dropout_edges():
    x = torch.tensor([float("inf"), float("nan"), 1.0] * 8)
    out, mask = torch.native_dropout(x.to("foo"), 0.5, True)
    # a dropped inf becomes nan (inf * 0), as in the CPU's input.mul(mask).mul_(scale)
    torch.testing.assert_close(out.cpu(), (x * mask.cpu()).mul_(2.0), rtol=0, atol=0, equal_nan=True)
    ones = torch.ones(5, 3, device="foo")
    assert_exact(F.dropout(ones, 1.0, training=True), torch.zeros(5, 3))
    assert_exact(F.dropout(ones, 0.0, training=True), torch.ones(5, 3))
    out, mask = torch.native_dropout(x.to("foo"), 0.3, False)
    torch.testing.assert_close(out.cpu(), x, rtol=0, atol=0, equal_nan=True)
    assert_exact(mask, torch.ones(24, dtype=torch.bool))
    assert torch.native_dropout(torch.empty(0, 3, device="foo"), 0.5, True)[0].shape == (0, 3)


def test_unsupported_dtype_and_bad_arguments_raise():
    with pytest.raises(NotImplementedError, match="normal_.*Long"):
        torch.empty(3, dtype=torch.int64, device="foo").normal_()
    with pytest.raises(NotImplementedError, match="uniform_.*Bool"):
        torch.empty(3, dtype=torch.bool, device="foo").uniform_()
    with pytest.raises(RuntimeError, match="std >= 0"):
        torch.empty(3, device="foo").normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="from=2 > to=1"):  # the CPU's message (ATen's uniform_impl_)
        torch.empty(3, device="foo").uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        torch.empty(3, device="foo").bernoulli_(1.5)
    torch.empty(3, device="foo").bernoulli_(torch.tensor([0.5, 2.0, 0.1], device="foo"))
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):  # checked on the device: at the next wait
        torch.foo.synchronize()
    with pytest.raises(NotImplementedError, match="bernoulli_.*Long"):
        torch.empty(3, device="foo").bernoulli_(torch.tensor([0, 1, 1], device="foo"))
    with pytest.raises(RuntimeError, match="expand"):
        torch.empty(3, device="foo").bernoulli_(torch.rand(2, 3, device="foo"))
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.empty(3, device="foo").expand(2, 3).normal_()
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        torch.native_dropout(torch.ones(3, device="foo"), 1.5, True)
