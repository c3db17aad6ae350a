"""Copies between the CPU and foo devices (aten::_copy_from and friends): values must be exact."""

import pytest
import torch

from conftest import assert_foo_equal


def _sample(dtype, shape=(6, 7)):
    g = torch.Generator().manual_seed(1)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 10).to(dtype)
    return torch.randint(-100, 100, shape, generator=g).to(dtype)


def test_acceptance_strided_slice_roundtrip(two_devices):
    torch.manual_seed(0)
    x = torch.randn(64, 33)
    y = x.to("foo:1")[:, ::2]
    assert y.device == torch.device("foo:1") and y.stride() == (33, 2)
    out = y.cpu()
    assert out.device == torch.device("cpu") and out.dtype == torch.float32
    assert torch.equal(out, x[:, ::2])


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16,
          torch.int64, torch.int32, torch.uint8, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_roundtrip_same_dtype(dtype):
    x = _sample(dtype)
    y = x.to("foo")
    assert_foo_equal(y, x)
    back = y.cpu()
    assert back.dtype == dtype and back.device.type == "cpu"
    assert torch.equal(back, x)


CASTS = [
    (torch.float32, torch.float64), (torch.float64, torch.float32),
    (torch.int64, torch.float32), (torch.float32, torch.int64),
    (torch.bool, torch.float32), (torch.float32, torch.bool),
    (torch.float32, torch.float16), (torch.float16, torch.float32),
    (torch.float32, torch.bfloat16), (torch.bfloat16, torch.float32),
    (torch.uint8, torch.int64), (torch.int64, torch.int32),
]


@pytest.mark.parametrize("src,dst", CASTS, ids=str)
def test_dtype_changing_copies(src, dst):
    x = _sample(src)
    expected = x.to(dst)
    assert_foo_equal(x.to("foo", dst), expected)  # cpu -> foo
    on_foo = x.to("foo")
    back = on_foo.to("cpu", dst)  # foo -> cpu
    assert back.dtype == dst and torch.equal(back, expected)
    assert_foo_equal(on_foo.to(dst), expected)  # foo -> foo, same device


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.t(),
        lambda x: x[1:, 2:5],
        lambda x: x[::2, ::3],
        lambda x: x[:, 1].unsqueeze(1).expand(8, 5),
        lambda x: x.unsqueeze(0).expand(3, 8, 9).transpose(0, 2),
    ],
    ids=["transposed", "sliced", "stepped", "expanded", "expanded-transposed"],
)
def test_strided_copies(make, two_devices):
    torch.manual_seed(0)
    x = torch.randn(8, 9)
    view = make(x)
    expected = view.contiguous()
    assert_foo_equal(view.to("foo"), expected)  # strided cpu source
    foo_view = make(x.to("foo"))  # strided foo source
    assert foo_view.stride() == view.stride()
    assert torch.equal(foo_view.cpu(), expected)
    assert_foo_equal(foo_view.contiguous(), expected)  # foo -> foo strided
    assert_foo_equal(foo_view.to("foo:1"), expected, device="foo:1")  # across devices


def test_cross_device_copies(two_devices):
    x = _sample(torch.float32)
    a = x.to("foo:0")
    b = a.to("foo:1")
    assert_foo_equal(b, x, device="foo:1")
    assert_foo_equal(b.to("foo:0", torch.float64), x.double())
    dst = torch.empty(6, 7, device="foo:1")
    dst.copy_(a)
    assert_foo_equal(dst, x, device="foo:1")


def test_non_blocking_copies():
    x = _sample(torch.float32, (256, 256))
    y = x.to("foo:0", non_blocking=True)
    torch.foo.synchronize()
    assert_foo_equal(y, x)
    z = y.to("cpu", non_blocking=True)
    torch.foo.synchronize(0)
    assert z.device.type == "cpu" and torch.equal(z, x)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (4, 0, 2)], ids=str)
def test_empty_tensors(shape):
    x = torch.empty(shape)
    y = x.to("foo")
    assert y.device == torch.device("foo:0") and y.shape == shape and y.numel() == 0
    back = y.cpu()
    assert back.shape == shape and back.dtype == torch.float32


@pytest.mark.parametrize(
    "value,dtype", [(3.5, torch.float32), (-7, torch.int64), (True, torch.bool), (0.25, torch.float64)]
)
def test_zero_dim_and_item(value, dtype):
    x = torch.tensor(value, dtype=dtype)
    y = x.to("foo")
    assert y.dim() == 0 and y.shape == ()
    assert_foo_equal(y, x)
    item = y.item()
    assert item == value and type(item) is type(value)


def test_item_of_indexed_element():
    m = torch.arange(12, dtype=torch.float32).reshape(3, 4).to("foo")
    assert m[1, 2].item() == 6.0  # a 0-dim view at storage offset 6
    assert m[2, 3].item() == 11.0
    assert m.t()[3, 2].item() == 11.0


def _same_bits_or_both_nan(got, want, bits_dtype):
    nan = want.isnan()
    assert torch.equal(got.isnan(), nan)
    assert torch.equal(got[~nan].view(bits_dtype), want[~nan].view(bits_dtype))  # signed zeros too


def test_float16_conversions_match_the_cpu_bit_for_bit():
    """The device converts float16 in software (kernels/core/dtype.h, half_t): every one of the
    65536 halves to float, and to half every float that lies on or next to a rounding boundary
    (the midpoints between neighbouring halves, normal and subnormal, and one ulp either side:
    round to nearest even decides them), the overflow threshold, infinities, NaNs and a spread
    of random bit patterns, all as the CPU converts them."""
    every_half = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.float16)
    _same_bits_or_both_nan(every_half.to("foo").float().cpu(), every_half.float(), torch.int32)

    finite = every_half[every_half.isfinite()].float()
    ordered = finite.unique()  # sorted, one zero
    midpoints = ((ordered[1:].double() + ordered[:-1].double()) / 2).float()  # exact in float
    steps = torch.tensor([-1, 0, 1], dtype=torch.int32)
    near = (midpoints.view(torch.int32)[:, None] + steps).flatten().view(torch.float32)
    special = torch.tensor([65504.0, 65519.99, 65520.0, 1e10, float("inf"), -float("inf"), float("nan"), 0.0, -0.0,
                            2.0**-24, 2.0**-25, 2.0**-26, 1e-30])
    random_bits = torch.randint(-2**31, 2**31 - 1, (1 << 20,), generator=torch.Generator().manual_seed(0),
                                dtype=torch.int64).to(torch.int32).view(torch.float32)
    floats = torch.cat([near, -near, special, -special, random_bits])
    _same_bits_or_both_nan(floats.to("foo").half().cpu(), floats.half(), torch.int16)
