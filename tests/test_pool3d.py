"""3-d pooling (kernels/ops/pool.cu, aten/ops/pooling.cpp): what the generated OpInfo tests do not say.
float32 forward and backward bit-equal to the CPU on contiguous, channels_last_3d and unbatched
inputs (so the window, divisor, index and summation order arithmetic is the CPU's), every op
native forward and backward, 16-bit adaptive averages against float64 (the CPU sums them in
16 bits), and unsupported dtypes refused by name.
"""

import pytest
import torch
import torch.nn.functional as F

import torch_foo  # noqa: F401 - registers the device
from conftest import foo_kernels_only

# (name, op): the four 3-d poolings, with windows that exercise padding, dilation, ceil_mode,
# count_include_pad and divisor_override; max poolings return their indices too.
OPS = [
    ("max_pool3d", lambda t: F.max_pool3d(t, 3, 2, 1, return_indices=True)),
    ("max_pool3d_dilated", lambda t: F.max_pool3d(t, 2, (1, 2, 1), 1, dilation=(2, 1, 2), ceil_mode=True, return_indices=True)),
    ("avg_pool3d", lambda t: F.avg_pool3d(t, 3, 2, 1)),
    ("avg_pool3d_no_pad", lambda t: F.avg_pool3d(t, (2, 3, 3), (1, 2, 2), (1, 1, 0), ceil_mode=True, count_include_pad=False)),
    ("avg_pool3d_divisor", lambda t: F.avg_pool3d(t, 3, 2, 1, divisor_override=5)),
    ("adaptive_avg_pool3d", lambda t: F.adaptive_avg_pool3d(t, (2, 4, 3))),
    ("adaptive_max_pool3d", lambda t: F.adaptive_max_pool3d(t, (3, 4, 5), return_indices=True)),
]

LAYOUTS = {
    "contiguous": lambda t: t,
    "channels_last_3d": lambda t: t.contiguous(memory_format=torch.channels_last_3d),
    "unbatched": lambda t: t[0],
}


def _outputs(y):
    return y if isinstance(y, tuple) else (y,)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name,op", OPS, ids=[n for n, _ in OPS])
def test_matches_cpu_bitwise(name, op, layout):
    torch.manual_seed(0)
    x = LAYOUTS[layout](torch.randn(2, 3, 5, 6, 7)).requires_grad_()
    expected = _outputs(op(x))
    g = torch.randn_like(expected[0])
    (expected_grad,) = torch.autograd.grad(expected[0], x, g)

    fx = x.detach().to("foo").requires_grad_()
    with foo_kernels_only():
        actual = _outputs(op(fx))
        (actual_grad,) = torch.autograd.grad(actual[0], fx, g.to("foo"))

    for a, e in zip(actual, expected):  # values and max indices
        assert torch.equal(a.cpu(), e), name
        assert a.is_contiguous(memory_format=torch.channels_last_3d) == e.is_contiguous(memory_format=torch.channels_last_3d)
    assert torch.equal(actual_grad.cpu(), expected_grad)
    assert actual_grad.stride() == expected_grad.stride()


def test_max_pool3d_ties_and_nan_as_cpu():
    """The first maximum wins, a NaN beats everything: the CPU's indices."""
    x = torch.zeros(1, 2, 4, 4, 4)
    x[0, 1, 1, 2, 3] = float("nan")
    expected = F.max_pool3d(x, 2, return_indices=True)
    with foo_kernels_only():
        actual = F.max_pool3d(x.to("foo"), 2, return_indices=True)
    torch.testing.assert_close(actual[0].cpu(), expected[0], equal_nan=True, rtol=0, atol=0)
    assert torch.equal(actual[1].cpu(), expected[1])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_adaptive_avg_pool3d_16bit_against_float64(dtype):
    """The CPU sums 16-bit windows in 16 bits; foo sums in float32 and rounds once, so its results
    are the float64 ones correctly rounded (gradients likewise)."""
    torch.manual_seed(1)
    x = torch.randn(2, 4, 9, 10, 11).to(dtype)
    g = torch.randn(2, 4, 3, 4, 5).to(dtype)
    x64 = x.double().requires_grad_()
    y64 = F.adaptive_avg_pool3d(x64, (3, 4, 5))
    (gx64,) = torch.autograd.grad(y64, x64, g.double())
    fx = x.to("foo").requires_grad_()
    with foo_kernels_only():
        y = F.adaptive_avg_pool3d(fx, (3, 4, 5))
        (gx,) = torch.autograd.grad(y, fx, g.to("foo"))
    rtol = 2**-8 if dtype == torch.bfloat16 else 2**-11
    torch.testing.assert_close(y.cpu().double(), y64.detach(), rtol=rtol, atol=1e-5)
    torch.testing.assert_close(gx.cpu().double(), gx64, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize(
    "op,dtype,name",
    [
        (lambda t: F.avg_pool3d(t, 2), torch.int64, "avg_pool3d"),
        (lambda t: F.adaptive_avg_pool3d(t, 3), torch.int64, "_adaptive_avg_pool3d"),
        (lambda t: F.adaptive_max_pool3d(t, 3), torch.int32, "adaptive_max_pool3d"),
    ],
)
def test_unsupported_dtype_names_the_op(op, dtype, name):
    x = torch.arange(2 * 4 * 4 * 4).reshape(1, 2, 4, 4, 4).to(dtype).to("foo")
    with foo_kernels_only(), pytest.raises(NotImplementedError, match=f'"{name}" not implemented for'):
        op(x)
