"""Discrete Fourier transforms on foo (csrc/kernels/ops/fft.cu, csrc/aten/ops/fft.cpp): _fft_c2c, _fft_r2c
and _fft_c2r, so every torch.fft function, stft and istft, against the CPU (pocketfft) and float64
references: every length 1..130, primes (Bluestein), powers of two, mixed 2/3/5/7 lengths and a few
large ones; dims combinations, the three norms, rfft/irfft/hfft/ihfft and their n-D forms, stft/istft,
non-contiguous inputs, out= and gradients. Every foo call runs with the CPU fallback forbidden
(foo_kernels_only).

Tolerance: a transform of length n is compared with the complex128 CPU result of the same input
(for complex64, the input rounded to complex64 first) as max |got - ref| / max |ref| <= 8 * eps *
(log2(n) + 2), eps of the dtype: the error of an FFT grows as eps * log2(n) (a Stockham stage adds
a few eps, there are about log2(n) of them); Bluestein lengths go through transforms of length
< 4n and three twiddled products, inside the same bound. Measured worst of max |error| / max |ref|
/ (eps (log2 n + 2)) over every length 1..1024, every 37th to 4096, 10007, 2^16 and 65537: 0.30
for complex64, 0.49 for complex128, so the bound has a margin of 16x or more."""

import math

import pytest
import torch
import torch_foo

from conftest import foo_kernels_only

COMPLEX = [torch.complex64, torch.complex128]
REAL = [torch.float32, torch.float64]
EPS = {torch.complex64: torch.finfo(torch.float32).eps, torch.complex128: torch.finfo(torch.float64).eps,
       torch.float32: torch.finfo(torch.float32).eps, torch.float64: torch.finfo(torch.float64).eps}
NORMS = [None, "ortho", "forward", "backward"]

PRIMES = [131, 137, 251, 257, 509, 1021, 2039, 4093]
POW2 = [2 ** k for k in range(13)]
MIXED = [6 * 7, 2 * 3 * 5 * 7, 360, 343, 625, 729, 1000, 2100, 2401, 3125, 3 * 1024, 4096 - 0 + 0]
SMALL = list(range(1, 131))


def tol(dtype, n):
    return 8 * EPS[dtype] * (math.log2(max(n, 1)) + 2)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def rel_err(got, ref):
    got = got.cpu().to(ref.dtype)
    scale = ref.abs().max().item()
    return (got - ref).abs().max().item() / (scale if scale > 0 else 1.0)


def check(got, ref, dtype, n):
    assert got.device.type == "foo"
    err = rel_err(got, ref)
    # A 64-bit result's reference is the CPU's transform in the same precision, with a rounding
    # error of the same bound: two transforms within tol of the exact one differ by up to 2 tol
    # (measured: complex128 n=106 differs by 2.09e-14 from the CPU on one machine, tol 1.55e-14).
    bound = tol(dtype, n) * (2 if EPS[dtype] == torch.finfo(torch.float64).eps else 1)
    assert err <= bound, f"n={n}: relative error {err:.3g} > {bound:.3g}"


def ref_dtype(dtype):
    return torch.complex128 if dtype.is_complex else torch.float64


def random(shape, dtype, seed):
    x = torch.randn(*shape, dtype=ref_dtype(dtype), generator=_gen(seed))
    return x.to(dtype)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("sizes", [SMALL, PRIMES, POW2, MIXED], ids=["1..130", "primes", "pow2", "mixed"])
def test_c2c_lengths(sizes, dtype):
    for n in sizes:
        x = random((3, n), dtype, n)
        xd = x.to("foo")
        for fn in (torch.fft.fft, torch.fft.ifft):
            for norm in ("backward", "ortho", "forward"):
                ref = fn(x.to(torch.complex128), norm=norm)
                with foo_kernels_only():
                    got = fn(xd, norm=norm)
                assert got.dtype == dtype and got.shape == ref.shape
                check(got, ref, dtype, n)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("n", [2 ** 16, 10007, 3 * 2 ** 14, 5 ** 6, 65537])
def test_c2c_large(n, dtype):
    x = random((n,), dtype, 7)
    ref = torch.fft.fft(x.to(torch.complex128))
    with foo_kernels_only():
        got = torch.fft.fft(x.to("foo"))
        back = torch.fft.ifft(got)
    check(got, ref, dtype, n)
    check(back, x.to(torch.complex128), dtype, n)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("dim", [(0,), (1,), (2,), (-1,), (0, 2), (2, 0), (1, 2), (0, 1, 2), (2, 1, 0)], ids=str)
def test_fftn_dims_and_norms(dim, dtype):
    x = random((5, 6, 7), dtype, 1)
    for norm in NORMS:
        for fn in (torch.fft.fftn, torch.fft.ifftn):
            ref = fn(x.to(torch.complex128), dim=dim, norm=norm)
            with foo_kernels_only():
                got = fn(x.to("foo"), dim=dim, norm=norm)
            check(got, ref, dtype, 5 * 6 * 7)


@pytest.mark.parametrize("dtype", REAL, ids=str)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 30, 31, 64, 97, 100, 128, 257, 1000, 1024])
def test_real_transforms_1d(n, dtype):
    """rfft/ihfft (r2c) and irfft/hfft (c2r), with n equal to, smaller and larger than the input."""
    x = random((2, n), dtype, n)
    x64 = x.double()
    with foo_kernels_only():
        xd = x.to("foo")
        got = {norm: (torch.fft.rfft(xd, norm=norm), torch.fft.ihfft(xd, norm=norm)) for norm in NORMS}
    for norm in NORMS:
        check(got[norm][0], torch.fft.rfft(x64, norm=norm), dtype, n)
        check(got[norm][1], torch.fft.ihfft(x64, norm=norm), dtype, n)
    spec = torch.fft.rfft(x64).to(torch.complex64 if dtype == torch.float32 else torch.complex128)
    for m in {n, max(1, n - 1), n + 1, 2 * n}:
        for norm in NORMS:
            with foo_kernels_only():
                a = torch.fft.irfft(spec.to("foo"), n=m, norm=norm)
                b = torch.fft.hfft(spec.to("foo"), n=m, norm=norm)
            assert a.dtype == dtype and a.shape == (2, m)
            check(a, torch.fft.irfft(spec.to(torch.complex128), n=m, norm=norm), dtype, m)
            check(b, torch.fft.hfft(spec.to(torch.complex128), n=m, norm=norm), dtype, m)


def test_irfft_ignores_dc_and_nyquist_imaginary_parts_as_cpu():
    spec = torch.randn(3, 9, dtype=torch.complex128, generator=_gen(3))
    for m in (16, 17):
        with foo_kernels_only():
            got = torch.fft.irfft(spec.to("foo"), n=m)
        torch.testing.assert_close(got.cpu(), torch.fft.irfft(spec, n=m), rtol=0, atol=1e-14)


@pytest.mark.parametrize("dtype", REAL, ids=str)
@pytest.mark.parametrize("shape, dim", [((6, 8), (0, 1)), ((5, 7), (1, 0)), ((4, 5, 6), (0, 1, 2)),
                                        ((4, 5, 6), (0, 2)), ((3, 11, 13), (1, 2)), ((2, 3, 4, 5), (1, 3))], ids=str)
def test_real_transforms_nd(shape, dim, dtype):
    x = random(shape, dtype, 5)
    x64 = x.double()
    cdt = torch.complex64 if dtype == torch.float32 else torch.complex128
    n = math.prod(shape[d] for d in dim)
    s = [shape[d] for d in dim]
    for norm in NORMS:
        with foo_kernels_only():
            xd = x.to("foo")
            r = torch.fft.rfftn(xd, dim=dim, norm=norm)
            ih = torch.fft.ihfftn(xd, dim=dim, norm=norm)
            f = torch.fft.fftn(xd, dim=dim, norm=norm)  # r2c two-sided, then c2c
            back = torch.fft.irfftn(r, s=s, dim=dim, norm=norm)
            h = torch.fft.hfftn(ih, s=s, dim=dim, norm=norm)
        check(r, torch.fft.rfftn(x64, dim=dim, norm=norm), dtype, n)
        check(ih, torch.fft.ihfftn(x64, dim=dim, norm=norm), dtype, n)
        check(f, torch.fft.fftn(x64, dim=dim, norm=norm), dtype, n)
        check(back, x64, dtype, n)
        check(h, torch.fft.hfftn(torch.fft.ihfftn(x64, dim=dim, norm=norm), s=s, dim=dim, norm=norm), dtype, n)
        spec = torch.fft.rfftn(x64, dim=dim).to(cdt)
        with foo_kernels_only():
            got = torch.fft.irfftn(spec.to("foo"), dim=dim, norm=norm)
        check(got, torch.fft.irfftn(spec.to(torch.complex128), dim=dim, norm=norm), dtype, n)
    with foo_kernels_only():
        got2 = torch.fft.fft2(x.to(cdt).to("foo"))
        got_r2 = torch.fft.rfft2(x.to("foo"))
        got_i2 = torch.fft.irfft2(got_r2, s=shape[-2:])
    check(got2, torch.fft.fft2(x64.to(torch.complex128)), dtype, shape[-1] * shape[-2])
    check(got_r2, torch.fft.rfft2(x64), dtype, shape[-1] * shape[-2])
    check(got_i2, x64, dtype, shape[-1] * shape[-2])


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_noncontiguous_inputs(dtype):
    base = random((12, 10, 14), dtype, 9)
    views = [lambda t: t.transpose(0, 2), lambda t: t[::2, 1:, ::3], lambda t: t[..., 3], lambda t: t.permute(1, 2, 0)[:, 2:9],
             lambda t: t[:1].expand(4, 10, 14)]
    for view in views:
        x = view(base)
        xd = view(base.to("foo"))
        for dim in [(-1,), (0,), (0, 1)] if x.dim() >= 2 else [(-1,)]:
            with foo_kernels_only():
                got = torch.fft.fftn(xd, dim=dim)
                gr = torch.fft.rfftn(xd.real, dim=dim)
            check(got, torch.fft.fftn(x.to(torch.complex128), dim=dim), dtype, 200)
            check(gr, torch.fft.rfftn(x.real.double(), dim=dim), dtype, 200)
    # a conjugate view and a real view of complex data
    with foo_kernels_only():
        got = torch.fft.fft(base.to("foo").conj())
    check(got, torch.fft.fft(base.conj().to(torch.complex128)), dtype, 14)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_out_variants(dtype):
    x = random((4, 9), dtype, 2)
    rdt = torch.float32 if dtype == torch.complex64 else torch.float64
    with foo_kernels_only():
        xd = x.to("foo")
        out = torch.empty(0, dtype=dtype, device="foo")  # resized
        r = torch.fft.fft(xd, out=out)
        assert r is out and out.shape == (4, 9)
        out2 = torch.empty(9, 4, dtype=dtype, device="foo").t()  # strided, right shape
        torch.fft.ifft(xd, norm="ortho", out=out2)
        outr = torch.empty(0, dtype=dtype, device="foo")
        torch.fft.rfft(xd.real, out=outr)
        outc = torch.empty(0, dtype=rdt, device="foo")
        torch.fft.irfft(xd, n=11, out=outc)
        outs = torch.empty(0, dtype=dtype, device="foo")
        torch._fft_r2c(xd.real, [1], 0, False, out=outs)
        outcc = torch.empty(0, dtype=dtype, device="foo")
        torch._fft_c2c(xd, [0, 1], 2, True, out=outcc)
    x128 = x.to(torch.complex128)
    check(out, torch.fft.fft(x128), dtype, 9)
    check(out2, torch.fft.ifft(x128, norm="ortho"), dtype, 9)
    check(outr, torch.fft.rfft(x128.real), dtype, 9)
    check(outc, torch.fft.irfft(x128, n=11), dtype, 11)
    check(outs, torch.fft.fft(x128.real), dtype, 9)
    check(outcc, torch.fft.fftn(x128, norm="forward"), dtype, 36)


def test_empty_and_dtype_errors():
    with foo_kernels_only():
        e = torch.fft.fft(torch.empty(0, 8, dtype=torch.complex64, device="foo"))
        assert e.shape == (0, 8) and e.device.type == "foo"
        r = torch.fft.rfft(torch.empty(3, 0, 8, device="foo"))
        assert r.shape == (3, 0, 5)
        # _fft_c2c over no dims is a copy
        x = torch.randn(3, 4, dtype=torch.complex64)
        c = torch._fft_c2c(x.to("foo"), [], 0, True)
        assert torch.equal(c.cpu(), x)
    with pytest.raises((RuntimeError, NotImplementedError)):
        torch.fft.fft(torch.randn(8, device="foo").half())
    with pytest.raises(RuntimeError):
        torch.fft.fft(torch.randn(8, device="foo"), n=0)


def test_stft_istft_round_trip():
    x = torch.randn(2, 1000, dtype=torch.float64, generator=_gen(11))
    window = torch.hann_window(64, dtype=torch.float64)
    ref = torch.stft(x, 64, hop_length=16, window=window, return_complex=True)
    with foo_kernels_only():
        xd, wd = x.to("foo"), window.to("foo")
        spec = torch.stft(xd, 64, hop_length=16, window=wd, return_complex=True)
        spec_1s = torch.stft(xd.float(), 100, hop_length=25, window=torch.ones(100, device="foo"), return_complex=True,
                             onesided=False)
    # istft's window-envelope check calls aten::equal, which has no foo kernel yet: that one op
    # falls back; its transforms (_fft_c2r) run on foo.
    torch_foo.reset_fallback_report()
    back = torch.istft(spec, 64, hop_length=16, window=wd, length=1000)
    assert set(torch_foo.fallback_report()) <= {"aten::equal"}, torch_foo.fallback_report()
    check(spec, ref, torch.float64, 64)
    check(back, x, torch.float64, 64)
    check(spec_1s, torch.stft(x, 100, hop_length=25, window=torch.ones(100, dtype=torch.float64), return_complex=True,
                              onesided=False), torch.float32, 100)


@pytest.mark.parametrize("fn, real_in", [(lambda t: torch.fft.fftn(t, dim=(0, 1), norm="ortho"), False),
                                         (lambda t: torch.fft.rfft(t, n=10), True),
                                         (lambda t: torch.fft.irfftn(t, s=(3, 12)), False),
                                         (lambda t: torch.fft.hfft(t, n=13), False),
                                         (lambda t: torch.fft.ihfft2(t), True),
                                         (lambda t: torch.fft.ifft(t, n=17), False)],
                         ids=["fftn", "rfft", "irfftn", "hfft", "ihfft2", "ifft_bluestein"])
def test_gradients_match_cpu(fn, real_in):
    x = torch.randn(3, 7, dtype=torch.float64 if real_in else torch.complex128, generator=_gen(4))
    xc = x.clone().requires_grad_()
    yc = fn(xc)
    g = torch.randn(yc.shape, dtype=yc.dtype, generator=_gen(5))
    (yc * g.conj() if yc.is_complex() else yc * g).real.sum().backward()
    xd = x.to("foo").requires_grad_()
    with foo_kernels_only():
        yd = fn(xd)
        gd = g.to("foo")
        (yd * gd.conj() if yd.is_complex() else yd * gd).real.sum().backward()
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [lambda t: torch.fft.fftn(t, dim=(0, 2)), lambda t: torch.fft.fft(t, dim=1),
                                lambda t: torch.fft.rfftn(t.real, dim=(2, 0)), lambda t: torch.fft.fft(t.real, dim=0),
                                lambda t: torch.fft.irfftn(t, dim=(0, 1)), lambda t: torch.fft.hfft(t, dim=0)],
                         ids=["fftn", "fft", "rfftn", "fft_real", "irfftn", "hfft"])
def test_output_strides_match_meta(fn):
    """Results have the strides ATen's meta functions predict for foo (MKL's layout: batch dims
    in the input's stride order, transformed dims innermost), which torch.compile's fake tensors
    rely on; permuted inputs make them non-contiguous."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    x = torch.randn(4, 5, 6, dtype=torch.complex64).to("foo").permute(2, 0, 1)
    with foo_kernels_only():
        real = fn(x)
    with FakeTensorMode() as mode:
        fake = fn(mode.from_tensor(x))
    assert real.shape == fake.shape and real.dtype == fake.dtype
    significant = [s for s, n in zip(real.stride(), real.shape) if n > 1]
    assert significant == [s for s, n in zip(fake.stride(), fake.shape) if n > 1], (real.stride(), fake.stride())


@pytest.mark.parametrize("shape, dtype", [((5000, 3), torch.complex64), ((5000, 11), torch.complex128),
                                          ((40, 2 ** 16), torch.complex128)], ids=str)
def test_more_lines_than_blocks(shape, dtype):
    """More lines than the grid has blocks (4096, or fewer where 2 x the length per block would pass
    64 MiB of scratch: 32 for 2^16 complex128): each block loops over lines, reusing its scratch."""
    x = random(shape, dtype, 13)
    with foo_kernels_only():
        got = torch.fft.fft(x.to("foo"))
    check(got, torch.fft.fft(x.to(torch.complex128)), dtype, shape[-1])
