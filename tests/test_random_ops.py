"""Native random fills (normal_, uniform_): reproducible under torch.foo.manual_seed, never
sent to the CPU fallback, and equal to an independent Philox4x32-10 reference, so the sim and
cuda drivers (which run the same kernel source) produce the same numbers for a seed."""

import math

import pytest
import torch

import torch_foo

M32 = 0xFFFFFFFF


def philox(counter, key):
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def unit(hi, lo):
    return (((hi << 21) ^ (lo >> 11)) & ((1 << 53) - 1)) / 2.0**53


def reference(n, seed, offset, normal, a, b):
    out = []
    for g in range((n + 1) // 2):
        r = philox((g & M32, g >> 32, offset & M32, offset >> 32), (seed & M32, seed >> 32))
        u0, u1 = unit(r[0], r[1]), unit(r[2], r[3])
        if normal:
            radius, theta = math.sqrt(-2.0 * math.log(1.0 - u0)), 2 * math.pi * u1
            out += [a + b * radius * math.cos(theta), a + b * radius * math.sin(theta)]
        else:
            out += [a + (b - a) * u0, a + (b - a) * u1]
    return torch.tensor(out[:n], dtype=torch.float64)


@pytest.mark.parametrize("normal", [True, False], ids=["normal_", "uniform_"])
def test_matches_philox_reference(normal):
    torch.foo.manual_seed(1234)
    x = torch.empty(37, dtype=torch.float64, device="foo")
    (x.normal_(0.5, 2.0) if normal else x.uniform_(-1.0, 3.0))
    expected = reference(37, 1234, 0, normal, *((0.5, 2.0) if normal else (-1.0, 3.0)))
    assert x.device.type == "foo" and x.dtype == torch.float64
    torch.testing.assert_close(x.cpu(), expected, rtol=1e-12, atol=1e-12)


def test_randn_reproducible_and_native():
    torch_foo.reset_fallback_report()
    torch.foo.manual_seed(7)
    a = torch.randn(4, 4, device="foo")
    torch.foo.manual_seed(7)
    b = torch.randn(4, 4, device="foo")
    c = torch.randn(4, 4, device="foo")  # the generator advanced: different numbers
    assert a.device == torch.device("foo:0") and a.dtype == torch.float32 and a.shape == (4, 4)
    assert torch.equal(a.cpu(), b.cpu())
    assert not torch.equal(b.cpu(), c.cpu())
    assert not any("normal" in op or "uniform" in op for op in torch_foo.fallback_report())


def test_statistics_and_bounds():
    torch.foo.manual_seed(0)
    x = torch.randn(20000, device="foo").cpu()
    assert abs(x.mean().item()) < 0.05 and abs(x.std().item() - 1) < 0.05
    u = torch.rand(20000, device="foo").cpu()
    assert u.min().item() >= 0.0 and u.max().item() < 1.0 and abs(u.mean().item() - 0.5) < 0.02
    v = torch.empty(1000, device="foo").uniform_(2.0, 3.0).cpu()
    assert v.min().item() >= 2.0 and v.max().item() < 3.0


def test_non_contiguous_and_explicit_generator():
    base = torch.zeros(6, 4, device="foo")
    view = base.t()
    view.normal_()
    assert torch.isfinite(base.cpu()).all() and (base.cpu() != 0).all()
    g1 = torch.Generator(device="foo").manual_seed(3)
    g2 = torch.Generator(device="foo").manual_seed(3)
    x = torch.empty(10, device="foo").normal_(generator=g1)
    y = torch.empty(10, device="foo").normal_(generator=g2)
    assert torch.equal(x.cpu(), y.cpu())


def test_unsupported_dtype_and_bad_arguments_raise():
    with pytest.raises(RuntimeError, match="normal_.*Half"):
        torch.empty(3, dtype=torch.float16, device="foo").normal_()
    with pytest.raises(RuntimeError, match="std >= 0"):
        torch.empty(3, device="foo").normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="from <= to"):
        torch.empty(3, device="foo").uniform_(2.0, 1.0)
