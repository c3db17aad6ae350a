"""Resampling (kernels/ops/upsample.cu, aten/ops/upsample.cpp): what the generated OpInfo tests do not say.

Every F.interpolate mode foo computes (nearest, nearest-exact in 1/2/3 dims, linear, bilinear,
bicubic, trilinear), forward and backward, on foo's own kernels against the CPU: contiguous,
channels-last and strided inputs, sizes and scale factors, both align_corners. The OpInfos
have no 3-d gradient samples, so the 3-d backward ops are reached here. 16-bit trilinear and
bicubic are checked against float64 instead: the CPU rounds their weights to 16 bits, foo (like
torch.cuda) keeps them in float, and foo must be at least as close to float64 as the CPU is.
"""

import pytest
import torch
import torch.nn.functional as F

import torch_foo  # noqa: F401 - registers the device
from conftest import foo_kernels_only

# mode -> spatial dims of its input
MODES = {
    "nearest-1d": ("nearest", 1),
    "nearest-2d": ("nearest", 2),
    "nearest-3d": ("nearest", 3),
    "nearest-exact-1d": ("nearest-exact", 1),
    "nearest-exact-2d": ("nearest-exact", 2),
    "nearest-exact-3d": ("nearest-exact", 3),
    "linear": ("linear", 1),
    "bilinear": ("bilinear", 2),
    "bicubic": ("bicubic", 2),
    "trilinear": ("trilinear", 3),
}
INTERPOLATING = {"linear", "bilinear", "bicubic", "trilinear"}

# How the output size is asked for: up, down, mixed, an explicit size, a recomputed scale.
SIZINGS = {
    "up": dict(scale_factor=1.7),
    "down": dict(scale_factor=0.6),
    "size": dict(size=(7, 3, 9)),
    "recompute": dict(scale_factor=1.3, recompute_scale_factor=True),
}

LAYOUTS = ["contiguous", "channels_last", "strided"]

SHAPE = (2, 3, 4, 5, 6)  # N, C, then as many of D, H, W as the mode has


def _input(dims, layout, dtype=torch.float32):
    torch.manual_seed(0)
    shape = SHAPE[: 2 + dims]
    if layout == "strided":  # every other column of a wider tensor
        return torch.randn(shape[:-1] + (2 * shape[-1],)).to(dtype)[..., ::2]
    x = torch.randn(shape).to(dtype)
    if layout == "channels_last" and dims == 2:
        x = x.contiguous(memory_format=torch.channels_last)
    elif layout == "channels_last" and dims == 3:
        x = x.contiguous(memory_format=torch.channels_last_3d)
    return x


def _kwargs(mode, dims, sizing, align_corners):
    kw = dict(SIZINGS[sizing])
    if "size" in kw:
        kw["size"] = kw["size"][:dims]
    if mode in INTERPOLATING:
        kw["align_corners"] = align_corners
    return kw


def _cases():
    for name, (mode, dims) in MODES.items():
        for sizing in SIZINGS:
            for layout in LAYOUTS:
                if layout == "channels_last" and dims == 1:
                    continue
                for align in [False, True] if mode in INTERPOLATING else [None]:
                    yield pytest.param(name, sizing, layout, align, id=f"{name}-{sizing}-{layout}-align{align}")


@pytest.mark.parametrize("name,sizing,layout,align_corners", list(_cases()))
def test_forward_and_backward_match_cpu(name, sizing, layout, align_corners):
    mode, dims = MODES[name]
    x = _input(dims, layout).requires_grad_()
    kw = _kwargs(mode, dims, sizing, align_corners)
    expected = F.interpolate(x, mode=mode, **kw)
    g = torch.randn_like(expected)
    (expected_grad,) = torch.autograd.grad(expected, x, g)

    fx = x.detach().to("foo").requires_grad_()
    with foo_kernels_only():
        actual = F.interpolate(fx, mode=mode, **kw)
        (actual_grad,) = torch.autograd.grad(actual, fx, g.to("foo"))

    assert actual.device.type == "foo" and actual.dtype == torch.float32
    assert actual.shape == expected.shape
    # Nearest modes copy: bit-equal. Interpolations may sum their taps in another order.
    tol = dict(rtol=0, atol=0) if mode not in INTERPOLATING else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(actual.cpu(), expected, **tol)
    torch.testing.assert_close(actual_grad.cpu(), expected_grad, rtol=1e-5, atol=1e-5)
    if layout == "channels_last":
        fmt = torch.channels_last if dims == 2 else torch.channels_last_3d
        assert actual.is_contiguous(memory_format=fmt) == expected.is_contiguous(memory_format=fmt)


@pytest.mark.parametrize("name", ["nearest-3d", "nearest-exact-3d", "trilinear", "bicubic"])
def test_float64_gradcheck(name):
    mode, dims = MODES[name]
    x = torch.randn((1, 2) + SHAPE[2 : 2 + dims][::-1], dtype=torch.float64).to("foo").requires_grad_()
    kw = _kwargs(mode, dims, "up", False)
    with foo_kernels_only():
        assert torch.autograd.gradcheck(lambda t: F.interpolate(t, mode=mode, **kw), (x,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ["trilinear", "bicubic", "bilinear"])
def test_16_bit_at_least_as_close_to_float64_as_the_cpu(name, dtype):
    mode, dims = MODES[name]
    x = _input(dims, "contiguous", dtype)
    kw = _kwargs(mode, dims, "up", False)
    reference = F.interpolate(x.double(), mode=mode, **kw)
    cpu = F.interpolate(x, mode=mode, **kw)
    with foo_kernels_only():
        foo = F.interpolate(x.to("foo"), mode=mode, **kw)
    assert foo.dtype == dtype
    foo_error = (foo.cpu().double() - reference).abs().max().item()
    cpu_error = (cpu.double() - reference).abs().max().item()
    # One rounding to 16 bits of a value below |x|max * (sum of |weights|) is the least error.
    assert foo_error <= cpu_error, (foo_error, cpu_error)


@pytest.mark.parametrize("name", ["nearest-2d", "nearest-3d", "nearest-exact-3d"])
def test_uint8_nearest(name):
    mode, dims = MODES[name]
    x = torch.randint(0, 256, SHAPE[: 2 + dims], dtype=torch.uint8)
    with foo_kernels_only():
        y = F.interpolate(x.to("foo"), scale_factor=1.5, mode=mode)
    assert y.dtype == torch.uint8
    assert torch.equal(y.cpu(), F.interpolate(x, scale_factor=1.5, mode=mode))


def test_unsupported_dtype_names_the_op():
    x = torch.ones(1, 1, 2, 2, 2, dtype=torch.int32, device="foo")
    with pytest.raises(RuntimeError, match=r"upsample_trilinear3d.*Int.*foo"):
        torch.ops.aten.upsample_trilinear3d(x, [4, 4, 4], False)
