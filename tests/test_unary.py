"""Unary math and activations (unary.cu, activation.cu): what manifest-generated OpInfo tests do not
reach. Sizes past one grid (grid-stride loop) and the 64-bit indexing path, integer wraparound,
bit-exactness with the CPU's float16 rounding, threshold's scalar conversions, and that the
backward of nn.ReLU/GELU/SiLU, sigmoid and tanh never leaves the device."""

import pytest
import torch

import torch_foo
from conftest import run_python, foo_kernels_only

F = torch.nn.functional

UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "relu": torch.relu, "silu": F.silu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
}


def all_finite(dtype):
    """Every finite value of a 16-bit float dtype."""
    x = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(dtype)
    return x[torch.isfinite(x)]


@pytest.mark.parametrize("name", UNARY)
def test_many_blocks_strided(name):
    # 300k elements: more than the sim grid (256 blocks x 256 threads); transposed: strided path.
    x = torch.rand(600, 500, dtype=torch.float64).mul(4).add(0.01).float()
    torch.testing.assert_close(UNARY[name](x.to("foo").t()).cpu(), UNARY[name](x.t()))


def test_64bit_indexing_path():
    code = """
import torch, torch_foo
F = torch.nn.functional
x = torch.rand(300, 7, dtype=torch.float64).add(0.1)
for fn in (torch.exp, torch.rsqrt, torch.neg, F.silu, F.gelu):
    torch.testing.assert_close(fn(x.to("foo").t()).cpu(), fn(x.t()))
g = torch.randn(7, 300, dtype=torch.float64)
torch.testing.assert_close(torch.ops.aten.threshold_backward(g.to("foo"), x.to("foo").t(), 0.5).cpu(),
                           torch.ops.aten.threshold_backward(g, x.t(), 0.5))
print("ok")
"""
    r = run_python(code, env={"TORCH_FOO_FORCE_64BIT_INDEXING": "1"})
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_integer_extremes(dtype):
    info = torch.iinfo(dtype)
    values = [0, 1, 127, 128, 255] if dtype == torch.uint8 else [info.min, info.min + 1, -1, 0, 1, info.max]
    x = torch.tensor(values, dtype=dtype)
    for fn in (torch.neg, torch.abs, torch.relu):
        out = fn(x.to("foo"))
        assert out.dtype == dtype
        assert torch.equal(out.cpu(), fn(x))  # -MIN and |MIN| wrap to MIN, as on the CPU


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_backward_ops_bit_exact_16bit(dtype):
    # float16 sigmoid_backward rounds after every operation on the CPU; the others compute in
    # float and round once. Every 16-bit value as the second operand, exact equality.
    y = all_finite(dtype)
    g = torch.randn(y.shape, generator=torch.Generator().manual_seed(0)).to(dtype)
    for op in ("sigmoid_backward", "tanh_backward"):
        fn = getattr(torch.ops.aten, op)
        assert torch.equal(fn(g.to("foo"), y.to("foo")).cpu(), fn(g, y)), op


def test_threshold_scalar_conversion():
    # value rounds to the element type, threshold compares in the compute type (float for half)
    x = torch.tensor([1.0, 1.5, 2.0, -3.0], dtype=torch.float16)
    assert torch.equal(torch.threshold(x.to("foo"), 1.5, 7.3).cpu(), torch.threshold(x, 1.5, 7.3))
    i = torch.tensor([1, 2, 3, -4], dtype=torch.int32)  # 2.7 truncates to 2 for int32
    assert torch.equal(torch.threshold(i.to("foo"), 2.7, 9).cpu(), torch.threshold(i, 2.7, 9))
    with pytest.raises(RuntimeError, match="overflow"):
        torch.threshold(i.to(torch.int8).to("foo"), 1000, 0)


def test_relu_keeps_nan_and_negative_zero():
    x = torch.tensor([float("nan"), -0.0, -1.0, 2.0])
    out = torch.relu(x.to("foo")).cpu()
    assert out[0].isnan() and torch.equal(out.view(torch.int32), torch.relu(x).view(torch.int32))


def test_float_ops_promote_integers():
    x = torch.tensor([1, 2, 3], dtype=torch.int16)
    for fn in (torch.exp, torch.sqrt, torch.sigmoid, torch.sin):
        out = fn(x.to("foo"))
        assert out.dtype == torch.float32
        torch.testing.assert_close(out.cpu(), fn(x))
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.exp(x.to("foo"), out=torch.empty(3, dtype=torch.int16, device="foo"))


@pytest.mark.parametrize("module", [torch.nn.ReLU(), torch.nn.GELU(), torch.nn.GELU(approximate="tanh"),
                                    torch.nn.SiLU(), torch.nn.Sigmoid(), torch.nn.Tanh()], ids=repr)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_activation_backward_native(module, dtype):
    x = torch.randn(64, 33, dtype=torch.float64).mul(3).to(dtype)
    g = torch.randn(64, 33, dtype=torch.float64).to(dtype)
    xc, xf = x.clone().requires_grad_(), x.to("foo").requires_grad_()
    with foo_kernels_only():
        yf = module(xf)
        yf.backward(g.to("foo"))
    yc = module(xc)
    yc.backward(g)
    torch.testing.assert_close(yf.detach().cpu(), yc.detach())
    torch.testing.assert_close(xf.grad.cpu(), xc.grad)
