"""Dense linear algebra on foo (csrc/kernels/ops/linalg.cu, csrc/aten/ops/linalg.cpp): linalg_qr,
linalg_cholesky_ex, linalg_solve_triangular / triangular_solve and cholesky_solve, LU and its
compositions, the Jacobi eigh and SVD (and pinv, matrix_rank, matrix_norm, cond on them), against float64
CPU references, for what the OpInfo samples miss: batches (several batch dims, broadcasting), sizes
1..130, ill-conditioned inputs, non-positive-definite Cholesky `info` and its error, layouts and
out=, gradients, and nn.init.orthogonal_ staying on the device. Every foo call runs with the CPU
fallback forbidden (foo_kernels_only).

Test matrices have known condition numbers: `conditioned(m, n, cond)` is U diag(s) V^T with U, V
random orthogonal (float64 CPU QR of a Gaussian) and s log-spaced from 1 down to 1/cond, so
cond_2 = cond exactly (up to float64 rounding). Tolerances are stated per test as multiples of
cond * eps of the dtype; the forward errors of QR (of Q and R), Cholesky and triangular solves are
bounded by about cond * eps * (a small multiple of n)."""

import pytest
import torch

from conftest import foo_kernels_only

DTYPES = [torch.float32, torch.float64]
EPS = {torch.float32: torch.finfo(torch.float32).eps, torch.float64: torch.finfo(torch.float64).eps}


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def random_orthogonal(n, g):
    q, r = torch.linalg.qr(torch.randn(n, n, dtype=torch.float64, generator=g))
    return q * torch.sign(torch.diagonal(r))


def conditioned(m, n, cond, batch=(), seed=0):
    """float64 CPU matrices [*batch, m, n] with 2-norm condition number `cond`."""
    g = _gen(seed)
    k = min(m, n)
    out = torch.empty(*batch, m, n, dtype=torch.float64)
    flat = out.view(-1, m, n)
    for b in range(flat.shape[0]):
        s = torch.logspace(0, -torch.log10(torch.tensor(float(cond))).item(), k, dtype=torch.float64) if k > 1 else \
            torch.ones(k, dtype=torch.float64)
        flat[b] = random_orthogonal(m, g)[:, :k] @ torch.diag(s) @ random_orthogonal(n, g)[:, :k].T
    return out


def spd(n, cond, batch=(), seed=0):
    """Symmetric positive-definite [*batch, n, n], eigenvalues log-spaced in [1/cond, 1]."""
    g = _gen(seed)
    out = torch.empty(*batch, n, n, dtype=torch.float64)
    flat = out.view(-1, n, n)
    for b in range(flat.shape[0]):
        u = random_orthogonal(n, g)
        s = torch.logspace(0, -torch.log10(torch.tensor(float(cond))).item(), n, dtype=torch.float64)
        a = u @ torch.diag(s) @ u.T
        flat[b] = (a + a.T) / 2
    return out


def triangular(n, upper, cond_diag=10.0, batch=(), seed=0, unit=False):
    """A well-conditioned triangular matrix: diagonal in [1, cond_diag] with random signs,
    off-diagonal entries N(0, 1/n) (cond_2 stays within a small multiple of cond_diag)."""
    g = _gen(seed)
    a = torch.randn(*batch, n, n, dtype=torch.float64, generator=g) / max(n, 1) ** 0.5
    d = torch.exp(torch.rand(*batch, n, dtype=torch.float64, generator=g) * torch.log(torch.tensor(cond_diag)))
    d = d * torch.where(torch.rand(*batch, n, generator=g) < 0.5, -1.0, 1.0).double()
    a = a.triu(1) if upper else a.tril(-1)
    return a + torch.diag_embed(torch.ones_like(d) if unit else d)


def on_foo(t, dtype):
    return t.to(dtype).to("foo")


# ---- QR ----------------------------------------------------------------------------------------

QR_SHAPES = [(1, 1), (2, 1), (1, 3), (5, 3), (3, 5), (17, 17), (33, 9), (9, 33), (64, 64), (100, 37), (37, 100),
             (130, 130), (130, 7)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", QR_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_qr_matches_float64_reference(shape, mode, dtype):
    """cond(A) = 100. Q and R equal LAPACK's (same reflector signs) within 20 * cond * eps *
    sqrt(n) of the float64 result; Q is orthogonal and Q R = A to a few eps (backward stable)."""
    m, n = shape
    cond = 100.0
    a64 = conditioned(m, n, cond, seed=m * 1000 + n)
    a = a64.to(dtype)
    q_ref, r_ref = torch.linalg.qr(a.double(), mode=mode)
    with foo_kernels_only():
        q, r = torch.linalg.qr(a.to("foo"), mode=mode)
    assert q.device.type == "foo" and r.device.type == "foo"
    assert q.shape == q_ref.shape and r.shape == r_ref.shape and q.dtype == dtype
    tol = 20 * cond * EPS[dtype] * max(m, n) ** 0.5
    torch.testing.assert_close(r.cpu().double(), r_ref, rtol=0, atol=tol)
    assert torch.equal(r.cpu(), r.cpu().triu())
    if mode != "r":
        torch.testing.assert_close(q.cpu().double(), q_ref, rtol=0, atol=tol)
        qd = q.cpu().double()
        eye = torch.eye(qd.shape[-1], dtype=torch.float64)
        assert (qd.mT @ qd - eye).abs().max() < 10 * EPS[dtype] * max(m, 4)
        if mode == "reduced" or m <= n:
            back = qd @ r.cpu().double()
            assert (back - a.double()).abs().max() < 10 * EPS[dtype] * max(m, n)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_qr_batched_and_strided(dtype):
    """Two batch dims; a transposed (column-major) and a sliced input; out= tensors with odd strides.
    cond(A) = 10."""
    a64 = conditioned(12, 7, 10.0, batch=(2, 3), seed=5)
    q_ref, r_ref = torch.linalg.qr(a64)
    tol = 200 * EPS[dtype]
    wide = torch.zeros(2, 3, 12, 14, dtype=torch.float64)
    wide[..., ::2] = a64
    for variant in (a64, a64.mT.contiguous().mT, wide[..., ::2]):
        x = variant.to(dtype).to("foo")
        with foo_kernels_only():
            q, r = torch.linalg.qr(x)
        torch.testing.assert_close(q.cpu().double(), q_ref, rtol=0, atol=tol)
        torch.testing.assert_close(r.cpu().double(), r_ref, rtol=0, atol=tol)
    # out= with a batch layout that does not collapse (permuted batch dims)
    q_out = torch.empty(3, 2, 12, 7, dtype=dtype, device="foo").transpose(0, 1)
    r_out = torch.empty(0, dtype=dtype, device="foo")
    with foo_kernels_only():
        torch.linalg.qr(a64.to(dtype).to("foo"), out=(q_out, r_out))
    torch.testing.assert_close(q_out.cpu().double(), q_ref, rtol=0, atol=tol)
    torch.testing.assert_close(r_out.cpu().double(), r_ref, rtol=0, atol=tol)


def test_qr_rank_deficient_and_ill_conditioned():
    """float64, cond(A) = 1e12: Q stays orthogonal and QR = A to ~n eps (backward stability does not
    depend on cond); a zero column and an all-zero matrix (tau = 0: H = I) match LAPACK exactly."""
    a = conditioned(40, 30, 1e12, seed=3)
    with foo_kernels_only():
        q, r = torch.linalg.qr(a.to("foo"))
    q, r = q.cpu(), r.cpu()
    assert (q.mT @ q - torch.eye(30, dtype=torch.float64)).abs().max() < 1e-13
    assert (q @ r - a).abs().max() < 1e-13
    z = torch.randn(6, 4, dtype=torch.float64)
    z[:, 1] = 0
    for x in (z, torch.zeros(5, 3, dtype=torch.float64)):
        q_ref, r_ref = torch.linalg.qr(x, mode="complete")
        with foo_kernels_only():
            q, r = torch.linalg.qr(x.to("foo"), mode="complete")
        torch.testing.assert_close(q.cpu(), q_ref)
        torch.testing.assert_close(r.cpu(), r_ref)


def test_qr_empty_and_dtype_errors():
    for shape, mode in [((0, 0), "reduced"), ((3, 0), "complete"), ((0, 3), "reduced"), ((2, 0, 4), "r"), ((4, 0), "reduced")]:
        x = torch.randn(shape)
        q_ref, r_ref = torch.linalg.qr(x, mode=mode)
        with foo_kernels_only():
            q, r = torch.linalg.qr(x.to("foo"), mode=mode)
        assert q.shape == q_ref.shape and r.shape == r_ref.shape
        torch.testing.assert_close(q.cpu(), q_ref)
        torch.testing.assert_close(r.cpu(), r_ref)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        torch.linalg.qr(torch.ones(3, 3, dtype=torch.long, device="foo"))
    with foo_kernels_only(), pytest.raises(NotImplementedError, match="ComplexFloat"):
        torch.linalg.qr(torch.ones(3, 3, dtype=torch.complex64, device="foo"))


@pytest.mark.parametrize("shape", [(64, 32), (32, 64), (16, 3, 3, 3)])
def test_orthogonal_init_stays_on_device(shape):
    w = torch.empty(shape, device="foo")
    with foo_kernels_only():
        torch.nn.init.orthogonal_(w, gain=2.0)
    assert w.device.type == "foo"
    flat = w.cpu().reshape(shape[0], -1).double() / 2.0
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat
    assert (gram - torch.eye(min(rows, cols), dtype=torch.float64)).abs().max() < 1e-5


# ---- Cholesky ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n", [1, 2, 7, 32, 33, 64, 100, 130])
def test_cholesky_matches_float64_reference(n, upper, dtype):
    """cond(A) = 1e3 (eigenvalues in [1e-3, 1]); L within 10 * cond * eps * sqrt(n) of float64's
    (|L| <= 1 here). Only one triangle is read: garbage in the other does not matter."""
    cond = 1e3
    a64 = spd(n, cond, batch=(2,), seed=n)
    a = a64.to(dtype)
    l_ref = torch.linalg.cholesky(a.double(), upper=upper)
    junk = torch.full((n, n), 7.0, dtype=dtype).tril(-1) if upper else torch.full((n, n), 7.0, dtype=dtype).triu(1)
    with foo_kernels_only():
        l, info = torch.linalg.cholesky_ex((a + junk).to("foo"), upper=upper)
    assert info.dtype == torch.int32 and info.device.type == "foo" and info.shape == (2,)
    assert torch.equal(info.cpu(), torch.zeros(2, dtype=torch.int32))
    torch.testing.assert_close(l.cpu().double(), l_ref, rtol=0, atol=10 * cond * EPS[dtype] * n ** 0.5)
    assert torch.equal(l.cpu(), l.cpu().triu() if upper else l.cpu().tril())


def test_cholesky_ill_conditioned_float64():
    """cond(A) = 1e12, n = 80: the factor reproduces A to ~eps * ||A|| (backward stable)."""
    a = spd(80, 1e12, seed=9)
    with foo_kernels_only():
        l = torch.linalg.cholesky(a.to("foo")).cpu()
    assert ((l @ l.T) - a).abs().max() < 1e-14


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_info_and_error_as_cpu(upper):
    """A batch with non-positive-definite matrices: `info` is the order of the first bad leading
    minor, as the CPU's LAPACK; cholesky_ex never syncs nor raises; cholesky raises the CPU's error."""
    a = spd(9, 10.0, batch=(2, 3), seed=1)
    a[0, 1, 4, 4] = -1.0       # leading minor of order 5 fails
    a[1, 2, 0, 0] = 0.0        # order 1
    a[1, 0, 8, 8] = float("nan")  # order 9
    _, info_ref = torch.linalg.cholesky_ex(a, upper=upper)
    with foo_kernels_only():
        _, info = torch.linalg.cholesky_ex(a.to("foo"), upper=upper)
    assert torch.equal(info.cpu(), info_ref)
    assert info_ref.flatten().tolist() == [0, 5, 0, 0, 0, 1] or info_ref[1, 0] == 9
    with pytest.raises(torch.linalg.LinAlgError) as cpu_err:
        torch.linalg.cholesky(a, upper=upper)
    with foo_kernels_only(), pytest.raises(torch.linalg.LinAlgError) as foo_err:
        torch.linalg.cholesky(a.to("foo"), upper=upper)
    assert str(foo_err.value) == str(cpu_err.value)
    single = spd(4, 10.0, seed=2)
    single[2, 2] = -5.0
    with pytest.raises(torch.linalg.LinAlgError) as cpu_err:
        torch.linalg.cholesky(single)
    with foo_kernels_only(), pytest.raises(torch.linalg.LinAlgError) as foo_err:
        torch.linalg.cholesky(single.to("foo"))
    assert str(foo_err.value) == str(cpu_err.value)
    assert "the leading minor of order 3 is not positive-definite" in str(foo_err.value)
    with foo_kernels_only(), pytest.raises(torch.linalg.LinAlgError, match="order 3"):
        torch.linalg.cholesky_ex(single.to("foo"), check_errors=True)


# ---- triangular solves -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("n,k", [(1, 1), (5, 3), (33, 1), (64, 70), (130, 9)])
def test_solve_triangular_matches_float64_reference(n, k, unit, left, upper, dtype):
    """A triangular with diagonal magnitudes in [1, 10] (unit: ones), off-diagonal N(0, 1/n);
    tolerance 50 * n * eps relative to max|X|."""
    a64 = triangular(n, upper, batch=(2,), seed=n + k, unit=False)
    b64 = torch.randn(2, n, k, dtype=torch.float64, generator=_gen(k)) if left else \
        torch.randn(2, k, n, dtype=torch.float64, generator=_gen(k))
    a, b = a64.to(dtype), b64.to(dtype)
    # junk in the unread triangle (and on the diagonal when unit) must not matter
    junk = torch.full_like(a, 3.0).tril(-1) if upper else torch.full_like(a, 3.0).triu(1)
    x_ref = torch.linalg.solve_triangular(a.double(), b.double(), upper=upper, left=left, unitriangular=unit)
    with foo_kernels_only():
        x = torch.linalg.solve_triangular((a + junk).to("foo"), b.to("foo"), upper=upper, left=left,
                                          unitriangular=unit)
    assert x.shape == x_ref.shape and x.dtype == dtype
    scale = x_ref.abs().max().item()
    torch.testing.assert_close(x.cpu().double(), x_ref, rtol=0, atol=50 * n * EPS[dtype] * scale)


def test_solve_triangular_broadcast_out_and_aliasing():
    a = triangular(6, upper=True, batch=(2, 1), seed=4)
    b = torch.randn(1, 3, 6, 2, dtype=torch.float64)
    x_ref = torch.linalg.solve_triangular(a, b, upper=True)
    with foo_kernels_only():
        x = torch.linalg.solve_triangular(a.to("foo"), b.to("foo"), upper=True)
        out = torch.empty(0, dtype=torch.float64, device="foo")
        torch.linalg.solve_triangular(a.to("foo"), b.to("foo"), upper=True, out=out)
        # B aliasing out: solved in place
        bb = b.expand(2, 3, 6, 2).contiguous().to("foo")
        torch.linalg.solve_triangular(a.to("foo"), bb, upper=True, out=bb)
        # a transposed (row-major as the CPU sees it) A
        at = a.mT.contiguous().mT.to("foo")
        y = torch.linalg.solve_triangular(at, b.to("foo"), upper=True)
    for r in (x, out, bb, y):
        torch.testing.assert_close(r.cpu(), x_ref)
    assert x.shape == (2, 3, 6, 2)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("upper", [False, True])
def test_triangular_solve_as_cpu(upper, transpose):
    a = triangular(20, upper, batch=(3,), seed=7)
    b = torch.randn(3, 20, 4, dtype=torch.float64)
    x_ref, m_ref = torch.triangular_solve(b, a, upper=upper, transpose=transpose)
    with foo_kernels_only():
        x, m = torch.triangular_solve(b.to("foo"), a.to("foo"), upper=upper, transpose=transpose)
    torch.testing.assert_close(x.cpu(), x_ref)
    torch.testing.assert_close(m.cpu(), m_ref)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_matches_reference(upper, dtype):
    """cond(A) = 100; X within 50 * cond * n * eps of the float64 solution (relative to max|X|)."""
    n, cond = 40, 100.0
    a64 = spd(n, cond, batch=(2,), seed=11)
    b64 = torch.randn(2, n, 3, dtype=torch.float64)
    f = torch.linalg.cholesky(a64.to(dtype), upper=upper)
    x_ref = torch.linalg.solve(a64, b64)
    with foo_kernels_only():
        x = torch.cholesky_solve(b64.to(dtype).to("foo"), f.to("foo"), upper=upper)
    tol = 50 * cond * n * EPS[dtype] * x_ref.abs().max().item()
    torch.testing.assert_close(x.cpu().double(), x_ref, rtol=0, atol=tol)


# ---- gradients ---------------------------------------------------------------------------------

def _grads_match(fn, inputs, rtol=1e-9, atol=1e-9):
    cpu_in = [t.detach().clone().requires_grad_() for t in inputs]
    out = fn(*cpu_in)
    outs = out if isinstance(out, tuple) else (out,)
    gouts = [torch.randn_like(o) for o in outs]
    ref = torch.autograd.grad(outs, cpu_in, gouts)
    foo_in = [t.detach().to("foo").requires_grad_() for t in inputs]
    with foo_kernels_only():
        out = fn(*foo_in)
        outs = out if isinstance(out, tuple) else (out,)
        got = torch.autograd.grad(outs, foo_in, [g.to("foo") for g in gouts])
    for g, r in zip(got, ref):
        torch.testing.assert_close(g.cpu(), r, rtol=rtol, atol=atol)


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_gradient_native(mode):
    torch.manual_seed(0)
    shape = (2, 6, 4) if mode == "reduced" else (2, 5, 5)
    _grads_match(lambda a: torch.linalg.qr(a, mode=mode), [conditioned(*shape[1:], 10.0, batch=(2,), seed=1)])


def test_cholesky_and_solve_gradients_native():
    torch.manual_seed(0)
    a = spd(7, 10.0, batch=(2,), seed=3)
    _grads_match(lambda x: torch.linalg.cholesky(x), [a])
    _grads_match(lambda x: torch.linalg.cholesky(x, upper=True), [a])
    t = triangular(7, upper=False, batch=(2,), seed=4)
    b = torch.randn(2, 7, 3, dtype=torch.float64)
    _grads_match(lambda x, y: torch.linalg.solve_triangular(x, y, upper=False), [t, b])
    _grads_match(lambda x, y: torch.linalg.solve_triangular(x.mT, y.mT, upper=True, left=False), [t, b])
    f = torch.linalg.cholesky(a)
    _grads_match(lambda x, y: torch.cholesky_solve(x, y), [b, f])


# ---- LU and what builds on it ------------------------------------------------------------------

LU_SHAPES = [(1, 1), (4, 4), (7, 5), (5, 7), (33, 33), (64, 64), (100, 37), (130, 130)]


@pytest.mark.parametrize("shape", LU_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lu_factor_float64_matches_cpu(shape):
    """Gaussian matrices (cond ~ 10..1e3): the same pivots as LAPACK (first largest magnitude) and
    LU within 1e-12."""
    a = torch.randn(2, *shape, dtype=torch.float64, generator=_gen(shape[0] * 7 + shape[1]))
    lu_ref, piv_ref, info_ref = torch.linalg.lu_factor_ex(a)
    with foo_kernels_only():
        lu, piv, info = torch.linalg.lu_factor_ex(a.to("foo"))
    assert torch.equal(piv.cpu(), piv_ref) and torch.equal(info.cpu(), info_ref)
    torch.testing.assert_close(lu.cpu(), lu_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", LU_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lu_factor_float32_reconstructs(shape):
    """float32: pivots may differ from LAPACK's on near-ties (other rounding in the updates), so
    check what partial pivoting guarantees: P L U = A to ~n eps ||A|| and |L| <= 1."""
    a = torch.randn(3, *shape, generator=_gen(shape[0] * 7 + shape[1]))
    with foo_kernels_only():
        lu, piv = torch.linalg.lu_factor(a.to("foo"))
        p, l, u = torch.lu_unpack(lu, piv)
    p, l, u = p.cpu().double(), l.cpu().double(), u.cpu().double()
    assert l.abs().max() <= 1.0
    err = (p @ l @ u - a.double()).abs().max()
    assert err < 4 * max(shape) * EPS[torch.float32] * a.abs().max()


def test_lu_singular_info_and_errors_as_cpu():
    """A zero column makes U(j, j) = 0: info = j + 1 as LAPACK's; inv and solve raise the CPU's
    error; det is 0."""
    a = torch.randn(2, 3, 6, 6, dtype=torch.float64, generator=_gen(3))
    a[0, 1, :, 2] = 0
    a[1, 2, :, 5] = 0
    _, _, info_ref = torch.linalg.lu_factor_ex(a)
    with foo_kernels_only():
        _, _, info = torch.linalg.lu_factor_ex(a.to("foo"))
        det = torch.linalg.det(a.to("foo"))
    assert torch.equal(info.cpu(), info_ref) and info_ref[0, 1] == 3 and info_ref[1, 2] == 6
    assert det.cpu()[0, 1] == 0 and det.cpu()[1, 2] == 0
    for fn in (torch.linalg.inv, lambda x: torch.linalg.solve(x, torch.ones(x.shape[:-1], dtype=x.dtype, device=x.device))):
        with pytest.raises(torch.linalg.LinAlgError) as cpu_err:
            fn(a)
        with foo_kernels_only(), pytest.raises(torch.linalg.LinAlgError) as foo_err:
            fn(a.to("foo"))
        assert str(foo_err.value) == str(cpu_err.value)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [1, 3, 32, 65, 130])
def test_solve_inv_det_match_float64_reference(n, dtype):
    """cond(A) = 1e3 (singular values log-spaced in [1e-3, 1], scaled by sqrt(cond) so that
    |det A| = 1 and float32 neither under- nor overflows). solve and inv within cond * n * eps * 10
    of the float64 answers (relative to their largest entry); det and slogdet within the same
    relative bound."""
    cond = 1e3
    a64 = conditioned(n, n, cond, batch=(2,), seed=n) * cond ** 0.5
    b64 = torch.randn(2, n, 3, dtype=torch.float64, generator=_gen(n))
    a, b = a64.to(dtype), b64.to(dtype)
    tol = 10 * cond * n * EPS[dtype]
    refs = {
        "solve": torch.linalg.solve(a.double(), b.double()),
        "solve_right": torch.linalg.solve(a.double(), b.double().mT, left=False),
        "solve_vector": torch.linalg.solve(a.double(), b.double()[..., 0]),
        "inv": torch.linalg.inv(a.double()),
        "det": torch.linalg.det(a.double()),
        "logabsdet": torch.linalg.slogdet(a.double())[1],
        "sign": torch.linalg.slogdet(a.double())[0],
    }
    fa, fb = a.to("foo"), b.to("foo")
    with foo_kernels_only():
        got = {
            "solve": torch.linalg.solve(fa, fb),
            "solve_right": torch.linalg.solve(fa, fb.mT, left=False),
            "solve_vector": torch.linalg.solve(fa, fb[..., 0]),
            "inv": torch.linalg.inv(fa),
            "det": torch.linalg.det(fa),
            "logabsdet": torch.linalg.slogdet(fa)[1],
            "sign": torch.linalg.slogdet(fa)[0],
        }
    for name, ref in refs.items():
        g = got[name].cpu().double()
        assert g.shape == ref.shape, name
        if name == "sign":
            assert torch.equal(g, ref)
        elif name == "det":
            torch.testing.assert_close(g, ref, rtol=tol, atol=0, msg=name)
        elif name == "logabsdet":
            torch.testing.assert_close(g, ref, rtol=0, atol=tol, msg=name)
        else:
            torch.testing.assert_close(g, ref, rtol=0, atol=tol * ref.abs().max().item(), msg=name)


def test_lu_solve_layouts_and_broadcast():
    a = torch.randn(3, 1, 5, 5, dtype=torch.float64)
    b = torch.randn(4, 5, 2, dtype=torch.float64)
    lu, piv = torch.linalg.lu_factor(a)
    with foo_kernels_only():
        flu, fpiv = torch.linalg.lu_factor(a.to("foo"))
        for left in (True, False):
            for adjoint in (False, True):
                rhs = b if left else b.mT
                ref = torch.linalg.lu_solve(lu, piv, rhs, left=left, adjoint=adjoint)
                got = torch.linalg.lu_solve(flu, fpiv, rhs.to("foo"), left=left, adjoint=adjoint)
                torch.testing.assert_close(got.cpu(), ref)


def test_solve_inv_det_gradients_native():
    a = conditioned(5, 5, 10.0, batch=(2,), seed=2)
    b = torch.randn(2, 5, 3, dtype=torch.float64)
    _grads_match(lambda x, y: torch.linalg.solve(x, y), [a, b])
    _grads_match(lambda x, y: torch.linalg.solve(x.mT, y), [a, b])
    _grads_match(lambda x: torch.linalg.inv(x), [a])
    _grads_match(lambda x: torch.linalg.det(x), [a])
    _grads_match(lambda x: torch.linalg.slogdet(x)[1], [a])
    lu, piv = torch.linalg.lu_factor(a)
    _grads_match(lambda x: torch.linalg.lu_factor(x)[0], [a])


def test_size_512_float32():
    """The largest size the kernels promise (a block per matrix, any n): n = 512, float32, Gaussian
    A (cond ~ 1e3) and an SPD matrix (cond <= 2); backward errors within 10 * n * eps."""
    n = 512
    g = _gen(512)
    a = torch.randn(n, n, generator=g)
    s = (a @ a.T / n + torch.eye(n)).double()
    b = torch.randn(n, 4, generator=g)
    eps = EPS[torch.float32]
    with foo_kernels_only():
        q, r = torch.linalg.qr(a.to("foo"))
        l = torch.linalg.cholesky(s.float().to("foo"))
        x = torch.linalg.solve(a.to("foo"), b.to("foo"))
        y = torch.linalg.solve_triangular(l, b.to("foo"), upper=False)
    q, r, l, x, y = (t.cpu().double() for t in (q, r, l, x, y))
    a64, b64 = a.double(), b.double()
    scale = a64.abs().max()
    assert (q @ r - a64).abs().max() < 10 * n * eps * scale
    assert (q.T @ q - torch.eye(n, dtype=torch.float64)).abs().max() < 10 * n * eps
    assert (l @ l.T - s.float().double()).abs().max() < 10 * n * eps * s.abs().max()
    assert (a64 @ x - b64).abs().max() < 10 * n * eps * scale * x.abs().max() * 4
    assert (l @ y - b64).abs().max() < 10 * n * eps * l.abs().max() * y.abs().max()


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("upper", [False, True])
def test_deprecated_torch_cholesky_as_cpu(upper):
    """torch.cholesky (aten::cholesky, deprecated): the factor, out=, and the CPU's error for a
    batch with a non-positive-definite matrix. cond(A) = 100."""
    a = spd(6, 100.0, batch=(3,), seed=6)
    with foo_kernels_only():
        l = torch.cholesky(a.to("foo"), upper=upper)
        out = torch.empty(0, dtype=torch.float64, device="foo")
        torch.cholesky(a.to("foo"), upper=upper, out=out)
    torch.testing.assert_close(l.cpu(), torch.cholesky(a, upper=upper))
    torch.testing.assert_close(out.cpu(), l.cpu())
    a[2, 3, 3] = -1.0
    with pytest.raises(torch.linalg.LinAlgError) as cpu_err:
        torch.cholesky(a, upper=upper)
    with foo_kernels_only(), pytest.raises(torch.linalg.LinAlgError) as foo_err:
        torch.cholesky(a.to("foo"), upper=upper)
    assert str(foo_err.value) == str(cpu_err.value)


# ---- Jacobi eigh and SVD ---------------------------------------------------------------------------
# Eigenvectors and singular vectors are defined up to sign (and, for repeated values, up to a
# rotation of their subspace): the checks are gauge-invariant, as the OpInfo tests' are. Values are
# compared with the float64 CPU result; vectors through the reconstruction A = V diag(w) V^T
# (U diag(s) V^T), orthogonality, and the residual A v = w v per vector.

def symmetric(n, eigenvalues, batch=(), seed=0):
    """float64 symmetric [*batch, n, n] with the given eigenvalues (a tensor of n)."""
    g = _gen(seed)
    out = torch.empty(*batch, n, n, dtype=torch.float64)
    flat = out.view(-1, n, n)
    for b in range(flat.shape[0]):
        u = random_orthogonal(n, g)
        a = u @ torch.diag(eigenvalues) @ u.T
        flat[b] = (a + a.T) / 2
    return out


EIGH_SIZES = [1, 2, 3, 7, 16, 33, 64, 128]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("n", EIGH_SIZES)
def test_eigh_matches_float64_reference(n, uplo, dtype):
    """Eigenvalues spread over [-1, 1] (random signs, so cond_2 = 1e3 from 1e-3 to 1 in magnitude),
    batch of 2. Eigenvalues within 10 n eps (||A||_2 = 1) of float64 LAPACK's; ||A - V W V^T|| and
    ||V^T V - I|| within 10 n eps. Only the `uplo` triangle is read (junk in the other)."""
    mags = torch.logspace(0, -3, n, dtype=torch.float64)
    signs = torch.where(torch.rand(n, generator=_gen(n)) < 0.5, -1.0, 1.0).double()
    a64 = symmetric(n, mags * signs, batch=(2,), seed=n)
    a = a64.to(dtype)
    w_ref = torch.linalg.eigvalsh(a.double(), UPLO=uplo)
    junk = torch.full((n, n), 7.0, dtype=dtype)
    junk = junk.triu(1) if uplo == "L" else junk.tril(-1)
    with foo_kernels_only():
        w, v = torch.linalg.eigh((a + junk).to("foo"), UPLO=uplo)
        w2 = torch.linalg.eigvalsh((a + junk).to("foo"), UPLO=uplo)
    assert w.device.type == "foo" and v.device.type == "foo" and w.dtype == dtype and v.shape == (2, n, n)
    tol = 10 * n * EPS[dtype]
    w, v = w.cpu().double(), v.cpu().double()
    assert torch.equal(w, w.sort(-1).values)
    torch.testing.assert_close(w, w_ref, rtol=0, atol=tol)
    torch.testing.assert_close(w2.cpu().double(), w, rtol=0, atol=0)
    assert (v.mT @ v - torch.eye(n, dtype=torch.float64)).abs().max() < tol
    assert (v @ torch.diag_embed(w) @ v.mT - a.double()).abs().max() < tol


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_eigh_repeated_and_clustered(dtype):
    """n = 40: eigenvalues 1 (x10), -2 (x10), a cluster 0.5 + k 1e-9 (x10) and 0 (x10), cond
    undefined (singular): eigenvalues within 10 n eps * ||A||, reconstruction and orthogonality
    within 10 n eps; the residuals ||A v - w v|| are small for every vector (eigenvectors within
    a repeated eigenvalue's subspace are any orthonormal basis of it). Also the identity, zero and
    a diagonal matrix (no rotation at all)."""
    n = 40
    ev = torch.cat([torch.ones(10), -2 * torch.ones(10), 0.5 + 1e-9 * torch.arange(10), torch.zeros(10)]).double()
    a = symmetric(n, ev, seed=4).to(dtype)
    tol = 10 * n * EPS[dtype] * 2
    with foo_kernels_only():
        w, v = torch.linalg.eigh(a.to("foo"))
    w, v, a64 = w.cpu().double(), v.cpu().double(), a.double()
    torch.testing.assert_close(w, torch.linalg.eigvalsh(a64), rtol=0, atol=tol)
    assert (v.mT @ v - torch.eye(n, dtype=torch.float64)).abs().max() < tol
    assert (a64 @ v - v * w).abs().max() < tol
    for m in (torch.eye(5), torch.zeros(5, 5), torch.diag(torch.tensor([3.0, -1.0, 2.0, 2.0, 0.0]))):
        with foo_kernels_only():
            w, v = torch.linalg.eigh(m.to(dtype).to("foo"))
        w_ref, v_ref = torch.linalg.eigh(m.to(dtype))
        torch.testing.assert_close(w.cpu(), w_ref)
        torch.testing.assert_close(v.cpu().abs(), v_ref.abs())


def test_eigh_batched_layouts_and_out():
    """Two batch dims, a transposed and a sliced input, out= with permuted batch dims; cond 10."""
    a = symmetric(6, torch.linspace(-1, 1, 6, dtype=torch.float64) + 0.05, batch=(2, 3), seed=8)
    w_ref = torch.linalg.eigvalsh(a)
    wide = torch.zeros(2, 3, 6, 12, dtype=torch.float64)
    wide[..., ::2] = a
    for x in (a, a.mT.contiguous().mT, wide[..., ::2]):
        with foo_kernels_only():
            w, v = torch.linalg.eigh(x.to("foo"))
        torch.testing.assert_close(w.cpu(), w_ref)
        torch.testing.assert_close(v.cpu() @ torch.diag_embed(w.cpu()) @ v.cpu().mT, a)
    w_out = torch.empty(3, 2, 6, dtype=torch.float64, device="foo").transpose(0, 1)
    v_out = torch.empty(3, 2, 6, 6, dtype=torch.float64, device="foo").transpose(0, 1)
    with foo_kernels_only():
        torch.linalg.eigh(a.to("foo"), out=(w_out, v_out))
    torch.testing.assert_close(w_out.cpu(), w_ref)
    torch.testing.assert_close(v_out.cpu() @ torch.diag_embed(w_ref) @ v_out.cpu().mT, a)
    for shape in [(0, 0), (2, 0, 0), (0, 3, 3)]:
        with foo_kernels_only():
            w, v = torch.linalg.eigh(torch.empty(shape, device="foo"))
        assert w.shape == shape[:-1] and v.shape == shape
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        torch.linalg.eigh(torch.ones(3, 4, device="foo"))
    with foo_kernels_only(), pytest.raises(NotImplementedError, match="ComplexFloat"):
        torch.linalg.eigh(torch.eye(3, dtype=torch.complex64, device="foo"))


def test_eigh_gradients_native():
    """Gauge-invariant outputs (w, and V * V: a column's sign cancels); distinct eigenvalues, cond 10."""
    a = symmetric(5, torch.tensor([-1.0, -0.3, 0.1, 0.5, 1.0], dtype=torch.float64), batch=(2,), seed=3)
    _grads_match(lambda x: torch.linalg.eigvalsh(x), [a])

    def f(x):
        w, v = torch.linalg.eigh(x)
        return w, v * v

    _grads_match(f, [a])


SVD_SHAPES = [(1, 1), (3, 1), (1, 4), (5, 3), (3, 5), (17, 17), (33, 9), (9, 33), (64, 64), (100, 37), (37, 100),
              (128, 128), (130, 7)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_svd_matches_float64_reference(shape, full_matrices, dtype):
    """cond(A) = 1e3, ||A||_2 = 1: singular values within 10 max(m, n) eps of float64 LAPACK's,
    descending; ||A - U S V^T||, ||U^T U - I||, ||V V^T - I|| within 10 max(m, n) eps."""
    m, n = shape
    k = min(m, n)
    a = conditioned(m, n, 1e3, seed=m * 1000 + n).to(dtype)
    s_ref = torch.linalg.svdvals(a.double())
    with foo_kernels_only():
        u, s, vh = torch.linalg.svd(a.to("foo"), full_matrices=full_matrices)
        s2 = torch.linalg.svdvals(a.to("foo"))
    assert u.device.type == "foo" and s.dtype == dtype
    assert u.shape == ((m, m) if full_matrices else (m, k)) and vh.shape == ((n, n) if full_matrices else (k, n))
    tol = 10 * max(m, n) * EPS[dtype]
    u, s, vh = u.cpu().double(), s.cpu().double(), vh.cpu().double()
    torch.testing.assert_close(s, s_ref, rtol=0, atol=tol)
    torch.testing.assert_close(s2.cpu().double(), s, rtol=0, atol=0)
    assert torch.equal(s, s.sort(descending=True).values)
    assert (u.mT @ u - torch.eye(u.shape[-1], dtype=torch.float64)).abs().max() < tol
    assert (vh @ vh.mT - torch.eye(vh.shape[-2], dtype=torch.float64)).abs().max() < tol
    assert (u[:, :k] @ torch.diag(s) @ vh[:k] - a.double()).abs().max() < tol


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(20, 20), (30, 12), (12, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_svd_rank_deficient(shape, dtype):
    """Rank 5 (singular values 1, 0.5, 0.25, 0.125, 1/16, then exact zeros before rounding):
    the zeros come out below 10 n eps, U and V stay orthogonal (the left vectors of zero singular
    values are completed by the host's QR), A = U S V^T; full_matrices too. Also the zero matrix."""
    m, n = shape
    g = _gen(m + n)
    sv = torch.tensor([1.0, 0.5, 0.25, 0.125, 1 / 16], dtype=torch.float64)
    a = (random_orthogonal(m, g)[:, :5] @ torch.diag(sv) @ random_orthogonal(n, g)[:, :5].T).to(dtype)
    tol = 10 * max(m, n) * EPS[dtype]
    for full in (False, True):
        with foo_kernels_only():
            u, s, vh = torch.linalg.svd(a.to("foo"), full_matrices=full)
            rank = torch.linalg.matrix_rank(a.to("foo"))
        u, s, vh = u.cpu().double(), s.cpu().double(), vh.cpu().double()
        torch.testing.assert_close(s[:5], sv, rtol=0, atol=tol)
        assert s[5:].abs().max() < tol
        assert (u.mT @ u - torch.eye(u.shape[-1], dtype=torch.float64)).abs().max() < tol
        assert (vh @ vh.mT - torch.eye(vh.shape[-2], dtype=torch.float64)).abs().max() < tol
        k = min(m, n)
        assert (u[:, :k] @ torch.diag(s) @ vh[:k] - a.double()).abs().max() < tol
        assert rank.item() == 5
    z = torch.zeros(4, 3, dtype=dtype)
    with foo_kernels_only():
        u, s, vh = torch.linalg.svd(z.to("foo"))
    assert torch.equal(s.cpu(), torch.zeros(3, dtype=dtype))
    torch.testing.assert_close(u.cpu().mT @ u.cpu(), torch.eye(4, dtype=dtype))


def test_svd_batched_compositions_and_errors():
    """Batches with two batch dims, pinv, matrix_rank, matrix_norm(2 / nuc), cond against the CPU
    (cond(A) = 100); the empty SVD; driver= raises as on the CPU."""
    a = conditioned(7, 5, 100.0, batch=(2, 3), seed=11)
    fa = a.to("foo")
    with foo_kernels_only():
        u, s, vh = torch.linalg.svd(fa, full_matrices=False)
        got = {
            "svdvals": torch.linalg.svdvals(fa),
            "pinv": torch.linalg.pinv(fa),
            "rank": torch.linalg.matrix_rank(fa),
            "norm2": torch.linalg.matrix_norm(fa, ord=2),
            "nuc": torch.linalg.matrix_norm(fa, ord="nuc"),
            "cond": torch.linalg.cond(fa),
            "svd_old": torch.svd(fa)[1],
        }
    refs = {
        "svdvals": torch.linalg.svdvals(a),
        "pinv": torch.linalg.pinv(a),
        "rank": torch.linalg.matrix_rank(a),
        "norm2": torch.linalg.matrix_norm(a, ord=2),
        "nuc": torch.linalg.matrix_norm(a, ord="nuc"),
        "cond": torch.linalg.cond(a),
        "svd_old": torch.svd(a)[1],
    }
    for name, ref in refs.items():
        torch.testing.assert_close(got[name].cpu(), ref, msg=name)
    torch.testing.assert_close((u @ torch.diag_embed(s) @ vh).cpu(), a)
    for shape, full in [((3, 0), True), ((0, 4), False), ((2, 0, 0), True)]:
        u_ref, s_ref, vh_ref = torch.linalg.svd(torch.empty(shape), full_matrices=full)
        with foo_kernels_only():
            u, s, vh = torch.linalg.svd(torch.empty(shape, device="foo"), full_matrices=full)
        assert torch.equal(u.cpu(), u_ref) and s.shape == s_ref.shape and torch.equal(vh.cpu(), vh_ref)
    with pytest.raises(RuntimeError) as cpu_err:
        torch.linalg.svd(torch.ones(3, 3), driver="gesvd")
    with pytest.raises(RuntimeError) as foo_err:
        torch.linalg.svd(torch.ones(3, 3, device="foo"), driver="gesvd")
    assert str(foo_err.value) == str(cpu_err.value)


def test_svd_gradients_native():
    """Gauge-invariant outputs (S, U * U, Vh * Vh); distinct singular values, cond 10."""
    a = conditioned(6, 4, 10.0, batch=(2,), seed=7)
    _grads_match(lambda x: torch.linalg.svdvals(x), [a])

    def f(x):
        u, s, vh = torch.linalg.svd(x, full_matrices=False)
        return u * u, s, vh * vh

    _grads_match(f, [a])
    _grads_match(f, [a.mT.contiguous()])
    _grads_match(lambda x: torch.linalg.pinv(x), [a])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pinv_hermitian_against_float64(dtype):
    """pinv(hermitian=True) runs eigh: values and the float32/float64 gradient against float64's
    (the OpInfo's float32 gradient comparison with the CPU is skipped: the CPU's own float32 error
    there exceeds the comparison's rtol). Symmetric, eigenvalues +-[0.1, 1] (cond 10): errors
    within 100 n eps of the float64 result, relative to its largest entry."""
    n = 6
    a64 = symmetric(n, torch.tensor([-1.0, -0.5, -0.1, 0.1, 0.4, 1.0], dtype=torch.float64), batch=(2,), seed=12)
    g = torch.randn(2, n, n, dtype=torch.float64, generator=_gen(1))
    x64 = a64.clone().requires_grad_()
    ref = torch.linalg.pinv(x64, hermitian=True)
    (gref,) = torch.autograd.grad(ref, x64, g)
    x = a64.to(dtype).to("foo").requires_grad_()
    with foo_kernels_only():
        out = torch.linalg.pinv(x, hermitian=True)
        (gx,) = torch.autograd.grad(out, x, g.to(dtype).to("foo"))
    tol = 100 * n * EPS[dtype]
    torch.testing.assert_close(out.detach().cpu().double(), ref.detach(), rtol=0, atol=tol * ref.abs().max().item())
    torch.testing.assert_close(gx.cpu().double(), gref, rtol=0, atol=tol * gref.abs().max().item())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n", [1, 5, 33, 128])
def test_cholesky_inverse_against_float64(n, upper, dtype):
    """A = L L^T with cond(A) = 1e3 (eigenvalues in [1e-3, 1]), batch (2,): cholesky_inverse(L)
    within 10 n cond eps of float64's A^-1, relative to its largest entry, and exactly symmetric
    (as the CPU's); out= and the gradient against the CPU."""
    cond = 1e3
    a64 = spd(n, cond, batch=(2,), seed=n + 1)
    l64 = torch.linalg.cholesky(a64, upper=upper)
    ref = torch.cholesky_inverse(l64, upper=upper)
    with foo_kernels_only():
        got = torch.cholesky_inverse(l64.to(dtype).to("foo"), upper=upper)
        out = torch.empty(0, dtype=dtype, device="foo")
        torch.cholesky_inverse(l64.to(dtype).to("foo"), upper=upper, out=out)
    got = got.cpu()
    assert torch.equal(got, got.mT)
    torch.testing.assert_close(got.double(), ref, rtol=0, atol=10 * n * cond * EPS[dtype] * ref.abs().max().item())
    assert torch.equal(out.cpu(), got)
    if n <= 5 and dtype == torch.float64:
        _grads_match(lambda x: torch.cholesky_inverse(x, upper=upper), [l64], rtol=1e-7, atol=1e-7)


# ---- Least squares (driver 'gels', as CUDA) --------------------------------------------------------

LSTSQ_SHAPES = [(1, 1), (5, 3), (3, 5), (17, 17), (64, 9), (9, 64), (128, 128), (130, 40), (40, 130)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", LSTSQ_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lstsq_matches_float64_reference(shape, dtype):
    """cond(A) = 100 (full rank), b with 3 columns and a batch of 2: the solution (least squares for
    m >= n, minimum norm for m < n) within 10 max(m, n) cond^2 eps of float64's (relative to its
    largest entry; least squares amplifies by cond^2 when the residual is not small), residuals
    (m > n) within the same bound relative to ||b||^2; rank and singular_values empty as CUDA's."""
    m, n = shape
    cond = 100.0
    a = conditioned(m, n, cond, batch=(2,), seed=m * 7 + n).to(dtype)
    b = torch.randn(2, m, 3, dtype=torch.float64, generator=_gen(m + n)).to(dtype)
    ref = torch.linalg.lstsq(a.double(), b.double(), driver="gels")
    with foo_kernels_only():
        got = torch.linalg.lstsq(a.to("foo"), b.to("foo"))
        got_gels = torch.linalg.lstsq(a.to("foo"), b.to("foo"), driver="gels")
    tol = 10 * max(m, n) * cond ** 2 * EPS[dtype]
    assert got.solution.shape == (2, n, 3) and got.solution.dtype == dtype
    torch.testing.assert_close(got.solution.cpu().double(), ref.solution, rtol=0,
                               atol=tol * ref.solution.abs().max().item())
    torch.testing.assert_close(got_gels.solution.cpu(), got.solution.cpu(), rtol=0, atol=0)
    assert got.residuals.shape == ref.residuals.shape
    if m > n:
        torch.testing.assert_close(got.residuals.cpu().double(), ref.residuals, rtol=0,
                                   atol=tol * (b.double() ** 2).sum(-2).max().item())
    assert got.rank.shape == (0,) and got.rank.dtype == torch.int64
    assert got.singular_values.shape == (0,) and got.singular_values.dtype == dtype


def test_lstsq_shapes_broadcast_out_and_errors():
    """Vector b, broadcast batches, empty dims (as gels' quick return), out=, the gradient against
    the CPU; the CPU's errors, and CUDA's for a driver other than gels."""
    cases = [((5, 3), (5,)), ((2, 4, 3), (2, 4)), ((2, 1, 6, 3), (1, 3, 6, 2)), ((0, 3), (0, 2)), ((5, 0), (5, 2)),
             ((5, 3), (5, 0)), ((3, 5), (3,))]
    g = _gen(3)
    for a_shape, b_shape in cases:
        a = torch.randn(a_shape, dtype=torch.float64, generator=g)
        b = torch.randn(b_shape, dtype=torch.float64, generator=g)
        vector = b.dim() == a.dim() - 1
        b2 = b.unsqueeze(-1) if vector else b
        batch = torch.broadcast_shapes(a.shape[:-2], b2.shape[:-2])  # the CPU does not broadcast them all
        b2 = b2.expand(*batch, *b2.shape[-2:])
        ref = torch.linalg.lstsq(a.expand(*batch, *a.shape[-2:]), b2.squeeze(-1) if vector else b2, driver="gels")
        with foo_kernels_only():
            got = torch.linalg.lstsq(a.to("foo"), b.to("foo"))
        for name in ("solution", "residuals"):
            r, x = getattr(ref, name), getattr(got, name).cpu()
            assert x.shape == r.shape, (a_shape, b_shape, name)
            torch.testing.assert_close(x, r, msg=f"{a_shape} {b_shape} {name}")
    a = conditioned(6, 4, 10.0, seed=1)
    b = torch.randn(6, 2, dtype=torch.float64, generator=g)
    sol, res = torch.empty(0, dtype=torch.float64, device="foo"), torch.empty(0, dtype=torch.float64, device="foo")
    rank, sv = torch.empty(0, dtype=torch.long, device="foo"), torch.empty(0, dtype=torch.float64, device="foo")
    with foo_kernels_only():
        torch.linalg.lstsq(a.to("foo"), b.to("foo"), out=(sol, res, rank, sv))
    ref = torch.linalg.lstsq(a, b, driver="gels")
    torch.testing.assert_close(sol.cpu(), ref.solution)
    torch.testing.assert_close(res.cpu(), ref.residuals)
    _grads_match(lambda x, y: torch.linalg.lstsq(x, y, driver="gels").solution, [a, b])
    _grads_match(lambda x, y: torch.linalg.lstsq(x, y, driver="gels").solution, [a.mT.contiguous(), b[:4]])
    d = dict(dtype=torch.float64)
    bad = [
        ((torch.ones(3, **d), torch.ones(3, **d)), "input must have at least 2 dimensions"),
        ((torch.ones(3, 3, **d), torch.ones(3, 3)), "Expected input and other to have the same dtype"),
        ((torch.ones(3, 3, **d), torch.ones(2, 3, 3, **d)), r"input.dim\(\) must be greater or equal"),
        ((torch.ones(3, 3, **d), torch.ones(4, 2, **d)), r"input.size\(-2\) should match other.size\(-2\)"),
        ((torch.ones(3, 3, **d), torch.ones(4, **d)), r"input.size\(-2\) should match other.size\(-1\)"),
    ]
    for (x, y), msg in bad:
        with pytest.raises(RuntimeError, match=msg):
            torch.linalg.lstsq(x, y)
        with foo_kernels_only(), pytest.raises(RuntimeError, match=msg):
            torch.linalg.lstsq(x.to("foo"), y.to("foo"))
    with foo_kernels_only(), pytest.raises(RuntimeError, match="`driver` other than `gels` is not supported on foo"):
        torch.linalg.lstsq(a.to("foo"), b.to("foo"), driver="gelsy")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_eigh_svd_non_finite_input_gives_nan(bad):
    """The CPU raises LAPACK's non-convergence for a NaN/inf entry; foo cannot without a sync and
    returns NaN everywhere instead (no sweep runs), never finite garbage. The other batch element
    is unaffected."""
    a = symmetric(6, torch.linspace(-1, 1, 6, dtype=torch.float64), batch=(2,), seed=5)
    a[1, 2, 4] = a[1, 4, 2] = bad
    with foo_kernels_only():
        w, v = torch.linalg.eigh(a.to("foo"))
        u, s, vh = torch.linalg.svd(a.to("foo"))
    for t in (w, v, u, s, vh):
        assert t[1].cpu().isnan().all()
    torch.testing.assert_close(w[0].cpu(), torch.linalg.eigvalsh(a[0]))
    torch.testing.assert_close(s[0].cpu(), torch.linalg.svdvals(a[0]))
