"""log_normal_, exponential_, cauchy_, geometric_, random_ (torch.randint), normal with tensor
mean/std and rrelu_with_noise on foo: native (nothing falls back), reproducible under
torch.foo.manual_seed, and bit for bit equal to the NumPy model of the kernels
(tests/philox_reference.py), so the same seed draws the same numbers on sim and cuda.
Distribution checks guard against a model that is wrong in the same way as the kernel."""

import math

import pytest
import torch
import torch.nn.functional as F

import philox_reference as ref
import torch_foo

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def assert_exact(actual, expected):
    assert actual.device.type == "foo"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    a, e = actual.cpu(), expected
    same = (a == e) | (a.isnan() & e.isnan()) if a.is_floating_point() else a == e
    assert bool(same.all()), f"{(~same).sum().item()} of {a.numel()} elements differ"


pytestmark = pytest.mark.usefixtures("no_fallback")  # every test: foo kernels only


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_continuous_distributions_match_reference(dtype):
    n = 301
    torch.foo.manual_seed(2024)
    x = torch.empty(n, dtype=dtype, device="foo")
    assert_exact(x.log_normal_(0.5, 0.75), ref.log_normal(n, 2024, 0, 0.5, 0.75, dtype))
    step = (n + 3) // 4 * 4  # each launch reserves ceil(n / 4) * 4 Philox offsets
    assert_exact(x.exponential_(2.5), ref.exponential(n, 2024, step, 2.5, dtype))
    assert_exact(x.cauchy_(-1.0, 0.5), ref.cauchy(n, 2024, 2 * step, -1.0, 0.5, dtype))
    assert_exact(x.geometric_(0.3), ref.geometric(n, 2024, 3 * step, 0.3, dtype))


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_geometric_integers(dtype):
    torch.foo.manual_seed(9)
    x = torch.empty(7, 9, dtype=dtype, device="foo").geometric_(0.01)  # int8 saturates at 127
    assert_exact(x, ref.geometric(63, 9, 0, 0.01, dtype).reshape(7, 9))
    assert x.min().item() >= 1


def test_strided_self_is_filled_in_logical_order():
    torch.foo.manual_seed(5)
    base = torch.zeros(6, 8, device="foo")
    view = base.t()[::2]  # 4 x 6, non-contiguous
    view.exponential_()
    assert_exact(view, ref.exponential(24, 5, 0, 1.0, torch.float32).reshape(4, 6))
    untouched = torch.ones(6, 8, dtype=torch.bool)
    untouched.t()[::2] = False
    assert bool((base.cpu()[untouched] == 0).all())


def test_distribution_statistics():
    torch.foo.manual_seed(0)
    n = 40000
    e = torch.empty(n, dtype=torch.float64, device="foo").exponential_(4.0).cpu()
    assert abs(e.mean().item() - 0.25) < 0.01 and e.min().item() > 0
    ln = torch.empty(n, dtype=torch.float64, device="foo").log_normal_(0.0, 0.5).cpu()
    assert abs(ln.log().mean().item()) < 0.01 and abs(ln.log().std().item() - 0.5) < 0.01
    c = torch.empty(n, dtype=torch.float64, device="foo").cauchy_(2.0, 3.0).cpu()
    assert abs(c.median().item() - 2.0) < 0.15  # the median is the location
    assert abs((c - 2.0).abs().median().item() - 3.0) < 0.15  # half the IQR is the scale
    g = torch.empty(n, dtype=torch.float64, device="foo").geometric_(0.25).cpu()
    assert abs(g.mean().item() - 4.0) < 0.1 and g.min().item() == 1 and bool((g == g.round()).all())


def test_exponential_never_zero_in_half():
    torch.foo.manual_seed(1)
    x = torch.empty(20000, dtype=torch.float16, device="foo").exponential_(1000.0)
    assert x.min().item() > 0  # log(1 - u) is capped at -eps/2 as on CUDA


def test_reproducible_and_generator_argument():
    torch.foo.manual_seed(77)
    a = torch.empty(50, device="foo").cauchy_()
    torch.foo.manual_seed(77)
    b = torch.empty(50, device="foo").cauchy_()
    assert torch.equal(a.cpu(), b.cpu())
    g = torch.Generator("foo").manual_seed(77)
    c = torch.empty(50, device="foo").cauchy_(generator=g)
    assert torch.equal(a.cpu(), c.cpu())
    assert g.get_offset() == 52


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
def test_random_overloads(dtype):
    torch.foo.manual_seed(3)
    x = torch.empty(41, dtype=dtype, device="foo")
    limit = {torch.float16: 2**11 + 1, torch.bfloat16: 2**8 + 1, torch.float32: 2**24 + 1, torch.float64: 2**53 + 1,
             torch.bool: 2}.get(dtype) or torch.iinfo(dtype).max + 1
    assert_exact(x.random_(), ref.random_ints(41, 3, 0, limit, 0, dtype))  # random_()
    step = 44
    hi = 2 if dtype == torch.bool else 100
    assert_exact(x.random_(hi), ref.random_ints(41, 3, step, hi, 0, dtype))  # random_.to
    lo = 0 if dtype in (torch.bool, torch.uint8) else -50
    assert_exact(x.random_(lo, hi), ref.random_ints(41, 3, 2 * step, hi - lo, lo, dtype))  # random_.from


def test_randint_and_wide_ranges():
    torch.foo.manual_seed(12)
    r = torch.randint(0, 10, (4,), device="foo")
    assert_exact(r, ref.random_ints(4, 12, 0, 10, 0, torch.int64))
    # a range of 2^32 or more draws 64 bits
    r = torch.randint(-(2**40), 2**40, (33,), device="foo")
    assert_exact(r, ref.random_ints(33, 12, 4, 2**41, -(2**40), torch.int64))
    # from = int64 min, to = None: the full 64-bit range
    x = torch.empty(9, dtype=torch.int64, device="foo").random_(-(2**63), None)
    assert_exact(x, ref.random_ints(9, 12, 40, 0, 0, torch.int64))
    # randint_like, and random_ into a strided view
    y = torch.randint_like(torch.empty(3, 5, device="foo"), 7)
    assert y.device.type == "foo" and y.dtype == torch.float32
    y = y.cpu()
    assert bool(((y >= 0) & (y < 7) & (y == y.round())).all())


def test_random_statistics_and_errors():
    torch.foo.manual_seed(0)
    r = torch.randint(0, 6, (60000,), device="foo").cpu()
    counts = torch.bincount(r, minlength=6).double() / 60000
    assert torch.allclose(counts, torch.full((6,), 1 / 6, dtype=torch.float64), atol=0.01)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        torch.empty(3, device="foo").random_(5, 5)
    with pytest.raises(RuntimeError, match="out of bounds for"):
        torch.empty(3, dtype=torch.int8, device="foo").random_(0, 1000)
    with pytest.raises(RuntimeError, match="full 64-bit range"):
        torch.empty(3, dtype=torch.int32, device="foo").random_(-(2**63), None)
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0"):
        torch.empty(3, device="foo").exponential_(0.0)
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\)"):
        torch.empty(3, device="foo").geometric_(1.0)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0"):
        torch.empty(3, device="foo").log_normal_(0.0, 0.0)
    with pytest.raises(RuntimeError, match="Cauchy distribution is a continuous"):
        torch.empty(3, dtype=torch.int64, device="foo").cauchy_()
    with pytest.raises(NotImplementedError, match="exponential_.*Long"):
        torch.empty(3, dtype=torch.int64, device="foo").exponential_()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_normal_with_tensor_mean_and_std(dtype):
    mean = torch.linspace(-3, 3, 12, dtype=dtype).reshape(3, 4)
    std = torch.linspace(0.5, 2, 4, dtype=dtype)
    z = ref.normal(12, 21, 0, 0.0, 1.0, dtype).reshape(3, 4)
    torch.foo.manual_seed(21)
    assert_exact(torch.normal(mean.to("foo"), std.to("foo")), z * std + mean)  # Tensor_Tensor
    torch.foo.manual_seed(21)
    ref_tf = ref.normal(12, 21, 0, 0.0, 2.0, dtype).reshape(3, 4) + mean
    assert_exact(torch.normal(mean.to("foo"), 2.0), ref_tf)  # Tensor_float
    torch.foo.manual_seed(21)
    assert_exact(torch.normal(1.5, std.expand(3, 4).to("foo")), z * std.expand(3, 4) + 1.5)  # float_Tensor
    out = torch.empty(0, dtype=dtype, device="foo")
    torch.foo.manual_seed(21)
    torch.normal(mean.to("foo"), std.to("foo"), out=out)
    assert_exact(out, z * std + mean)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        torch.normal(mean.to("foo"), -std.to("foo"))


def test_factory_normal_and_complex_normal():
    torch.foo.manual_seed(4)
    x = torch.normal(2.0, 3.0, (5, 7), device="foo")  # normal.float_float: empty + normal_
    assert_exact(x, ref.normal(35, 4, 0, 2.0, 3.0, torch.float32).reshape(5, 7))
    torch.foo.manual_seed(4)
    c = torch.randn(4, dtype=torch.complex64, device="foo")  # fills view_as_real with std 1/sqrt(2)
    expected = ref.normal(8, 4, 0, 0.0, 1 / math.sqrt(2), torch.float32).reshape(4, 2)
    assert c.dtype == torch.complex64
    assert torch.equal(torch.view_as_real(c.cpu()), expected)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_rrelu_training_matches_reference(dtype):
    x = torch.randn(5, 9).to(dtype)
    noise = torch.empty(5, 9, dtype=dtype, device="foo")
    torch.foo.manual_seed(31)
    out = torch.ops.aten.rrelu_with_noise(x.to("foo"), noise, 0.1, 0.4, True)
    exp_out, exp_noise = ref.rrelu(x, 31, 0, 0.1, 0.4)
    assert_exact(out, exp_out)
    assert_exact(noise, exp_noise)


def test_rrelu_module_eval_inplace_and_backward():
    x = torch.randn(64)
    xf = x.to("foo").requires_grad_()
    torch.foo.manual_seed(8)
    y = F.rrelu(xf, 0.2, 0.3, training=True)
    neg = x <= 0
    slopes = (y.detach().cpu()[neg] / x[neg])
    assert bool(((slopes >= 0.2 - 1e-6) & (slopes <= 0.3 + 1e-6)).all())
    assert torch.equal(y.detach().cpu()[~neg], x[~neg])
    y.sum().backward()  # the gradient is the noise
    grad = xf.grad.cpu()
    assert torch.allclose(grad[neg], slopes) and bool((grad[~neg] == 1).all())
    # eval: leaky relu with the mean slope, exactly the CPU's
    assert torch.equal(F.rrelu(x.to("foo"), 0.2, 0.3, training=False).cpu(), F.rrelu(x, 0.2, 0.3, training=False))
    z = x.to("foo")
    torch.foo.manual_seed(8)
    F.rrelu(z, 0.2, 0.3, training=True, inplace=True)
    assert torch.equal(z.cpu(), y.detach().cpu())
