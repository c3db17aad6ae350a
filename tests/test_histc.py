"""torch.histc on foo: integer dtypes (which CUDA's kernel takes and the CPU's does not: compared
with the CPU's histc of the input cast to float32), the data's own range without a host
synchronisation, and CUDA's errors. Floating dtypes are covered by the histc OpInfo
(tests/ops)."""

import pytest
import torch

import torch_foo
from runtime_helpers import held

INT_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _native(fn):
    torch_foo.reset_fallback_report()
    out = fn()
    assert torch_foo.fallback_report() == {}, torch_foo.fallback_report()
    return out


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("bins,lo,hi", [(8, 0, 7), (3, 0, 10), (5, 2, 6), (7, 0, 0), (4, 0.5, 5.5), (100, 0, 0)])
def test_integer_inputs_match_cpu_on_float(dtype, bins, lo, hi):
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 12, (4099,), generator=g).to(dtype)
    expected = torch.histc(x.float(), bins=bins, min=lo, max=hi)
    actual = _native(lambda: torch.histc(x.to("foo"), bins=bins, min=lo, max=hi))
    assert actual.device.type == "foo" and actual.dtype == dtype  # as CUDA: the input's dtype
    assert torch.equal(actual.cpu(), expected.to(dtype))


def test_expert_routing_counts():
    """transformers' MoE routing: histc of int32 expert ids, bins = experts, [0, experts - 1]."""
    experts = 8
    ids = torch.randint(0, experts, (64, 2), dtype=torch.int32, generator=torch.Generator().manual_seed(1))
    counts = _native(lambda: torch.histc(ids.to("foo"), bins=experts, min=0, max=experts - 1))
    assert torch.equal(counts.cpu(), torch.bincount(ids.flatten(), minlength=experts).to(torch.int32))


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64, torch.int32), ids=str)
def test_noncontiguous_and_out(dtype):
    x = (torch.randn(33, 17) * 5).to(dtype)
    expected = torch.histc(x.float().t(), bins=9, min=-4, max=4).to(dtype)
    xf = x.to("foo").t()
    assert torch.equal(_native(lambda: torch.histc(xf, bins=9, min=-4, max=4)).cpu(), expected)
    out = torch.empty(0, dtype=dtype, device="foo")
    result = _native(lambda: torch.histc(xf, bins=9, min=-4, max=4, out=out))
    assert result is out and torch.equal(out.cpu(), expected)


@pytest.mark.parametrize("kwargs", [dict(bins=10), dict(bins=10, min=-2, max=2)], ids=["data range", "given range"])
def test_no_host_synchronisation(kwargs):
    """Neither range needs the host to wait: with min == max (the default) the range is the data's,
    read on the device (CUDA copies it to the host). held() stops the stream; an op that waited for
    it would hang until the watchdog and fail."""
    x = torch.randn(1000)
    xf = x.to("foo")
    with held(timeout=20.0) as stream:
        h = torch.histc(xf, **kwargs)
        assert stream.query() is False
    assert torch.equal(h.cpu(), torch.histc(x, **kwargs))


def test_data_range_not_finite_gives_nan():
    """The CPU raises ('range of [-inf, inf] is not finite'); foo cannot without a synchronisation,
    and makes every bin NaN instead of a silently wrong histogram."""
    x = torch.tensor([1.0, float("inf"), 2.0])
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(x, bins=4)
    assert torch.isnan(_native(lambda: torch.histc(x.to("foo"), bins=4)).cpu()).all()


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(bins=0), "bins must be > 0"),
        (dict(bins=-3, min=0, max=1), "bins must be > 0"),
        (dict(bins=4, min=3, max=1), "max must be larger than min"),
        (dict(bins=4, min=0, max=float("inf")), "is not finite"),
        (dict(bins=4, min=float("nan"), max=1), "is not finite"),
    ],
)
@pytest.mark.parametrize("dtype", (torch.float32, torch.int32), ids=str)
def test_errors_as_cuda(kwargs, message, dtype):
    x = torch.arange(6).to(dtype).to("foo")
    torch_foo.reset_fallback_report()
    with pytest.raises(RuntimeError, match=message):
        torch.histc(x, **kwargs)
    assert torch_foo.fallback_report() == {}


def test_unsupported_dtype_raises_cleanly():
    with pytest.raises(NotImplementedError, match="Bool"):
        torch.histc(torch.ones(3, dtype=torch.bool, device="foo"))
