"""Matrix products (csrc/kernels/ops/gemm.cu): what OpInfo samples do not reach — sizes crossing the
GEMM's 64/128 tiles and its 8/16 k-steps, both tile shapes, transposed and sliced operands without
copies, broadcast bias, beta=0 with NaN, K=0, and linear/matmul forward+backward without fallback."""

import pytest
import torch
import torch.nn.functional as F

import torch_foo
from conftest import cuda_paths, fallback_count

# 16-bit results are compared with the float32 CPU product cast down.
TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=1e-2, atol=1e-2),
    torch.bfloat16: dict(rtol=2e-2, atol=4e-2),
}
GEMM_OPS = ("mm", "bmm", "addmm", "addmv", "dot")


@pytest.fixture(autouse=True)
def tiled_gemm():
    """Sim runs products above the small path with a barrier-free panel kernel (gemm_tile.cuh), a
    sim-only path; these tests pin the tiled kernel cuda runs, so its barriers, shared memory and
    tile edges are checked on sim. test_panel_products_match_tiled checks the panel kernel against it."""
    with cuda_paths():
        yield


def randn(*shape, dtype=torch.float32):
    return torch.randn(shape, dtype=torch.float64).to(dtype)


def reference(fn, *args, dtype, **kwargs):
    up = torch.float32 if dtype in (torch.float16, torch.bfloat16) else torch.float64
    return fn(*(a.to(up) for a in args), **kwargs).to(dtype)


def check(actual, expected):
    assert actual.device.type == "foo"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **TOL[expected.dtype])


def layouts(t):
    """The same values contiguous, with transposed storage, and as a strided slice."""
    yield t
    yield t.mT.contiguous().mT
    wide = torch.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
    wide[..., ::2] = t
    yield wide[..., ::2]


@pytest.fixture(autouse=True)
def _no_gemm_fallback():
    torch_foo.reset_fallback_report()
    yield
    assert sum(fallback_count(op) for op in GEMM_OPS) == 0, torch_foo.fallback_report()


# (m, k, n): tile edges of the small (64 x 64 x 16) and large (128 x 128 x 8) tiles, and enough
# 128-tiles (>= 8 on sim) that the large tile is chosen.
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 5, 3), (65, 17, 63), (129, 9, 1), (257, 33, 257), (1, 300, 130)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_mm_sizes_and_layouts(m, k, n, dtype):
    a, b = randn(m, k, dtype=dtype), randn(k, n, dtype=dtype)
    expected = reference(torch.mm, a, b, dtype=dtype)
    for i, av in enumerate(layouts(a)):
        for j, bv in enumerate(layouts(b)):
            if dtype != torch.float32 and i + j > 1 and m * n > 5000:
                continue  # keep the sim run short: every layout pair in float32, a few elsewhere
            check(torch.mm(av.to("foo"), bv.to("foo")), expected)


def test_transposed_views_are_not_copied():
    a, b = randn(70, 40), randn(50, 70)
    af, bf = a.to("foo"), b.to("foo")
    # a.t() and b.t() are strided views of foo memory; the product reads them in place.
    check(torch.mm(af.t(), bf.t()), torch.mm(a.t(), b.t()))
    check(af.t() @ bf.t(), a.t() @ b.t())


def test_bmm_batched_and_broadcast():
    a, b = randn(3, 33, 17), randn(3, 17, 70)
    check(torch.bmm(a.to("foo"), b.to("foo")), torch.bmm(a, b))
    # batch stride 0 (expanded) and a permuted batch dimension
    b1 = randn(1, 17, 70)
    check(torch.bmm(a.to("foo"), b1.to("foo").expand(3, 17, 70)), torch.bmm(a, b1.expand(3, 17, 70)))
    ap = randn(33, 3, 17).permute(1, 0, 2)
    check(torch.bmm(ap.to("foo"), b.to("foo")), torch.bmm(ap, b))
    x, y = randn(2, 1, 9, 5), randn(3, 5, 4)  # matmul broadcasts batches, then runs bmm
    check(torch.matmul(x.to("foo"), y.to("foo")), torch.matmul(x, y))


@pytest.mark.parametrize("bias_shape", [(70,), (1, 70), (33, 70), (33, 1), ()])
def test_addmm_bias_broadcast_and_scalars(bias_shape):
    a, b, bias = randn(33, 17), randn(17, 70), randn(*bias_shape)
    for beta, alpha in [(1, 1), (0.5, -2.0)]:
        out = torch.addmm(bias.to("foo"), a.to("foo"), b.to("foo"), beta=beta, alpha=alpha)
        check(out, torch.addmm(bias, a, b, beta=beta, alpha=alpha))


def test_addmm_beta_zero_ignores_nan_and_k_zero():
    a, b = randn(9, 5), randn(5, 7)
    nan = torch.full((9, 7), float("nan"))
    check(torch.addmm(nan.to("foo"), a.to("foo"), b.to("foo"), beta=0), torch.mm(a, b))
    c = randn(9, 7)
    empty_a, empty_b = torch.empty(9, 0), torch.empty(0, 7)
    check(torch.addmm(c.to("foo"), empty_a.to("foo"), empty_b.to("foo"), beta=2), 2 * c)
    check(torch.mm(empty_a.to("foo"), empty_b.to("foo")), torch.zeros(9, 7))
    assert torch.mm(torch.empty(0, 4, device="foo"), torch.empty(4, 3, device="foo")).shape == (0, 3)


def test_in_place_and_out():
    a, b, c = randn(20, 10), randn(10, 30), randn(20, 30)
    cf = c.to("foo")
    cf.addmm_(a.to("foo"), b.to("foo"), beta=0.5)
    check(cf, torch.addmm(c, a, b, beta=0.5))
    out = torch.empty(30, 20, device="foo").t()  # non-contiguous out keeps its strides
    torch.mm(a.to("foo"), b.to("foo"), out=out)
    assert out.stride() == (1, 20)
    check(out, a @ b)
    out = torch.empty(0, device="foo")
    torch.mm(a.to("foo"), b.to("foo"), out=out)
    check(out, a @ b)
    sq = randn(10, 10)
    sqf = sq.to("foo")
    torch.mm(sqf, sqf, out=sqf)  # out aliases both inputs
    check(sqf, sq @ sq)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double"):
        torch.mm(a.to("foo"), b.to("foo"), out=torch.empty(20, 30, dtype=torch.float64, device="foo"))


def test_shape_and_dtype_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x5 and 6x3\)"):
        torch.mm(torch.ones(4, 5, device="foo"), torch.ones(6, 3, device="foo"))
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2"):
        torch.bmm(torch.ones(2, 4, 5, device="foo"), torch.ones(2, 6, 3, device="foo"))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.mm(torch.ones(4, 5, device="foo"), torch.ones(5, 3, device="foo", dtype=torch.float64))
    with pytest.raises(NotImplementedError, match="Bool"):
        torch.mm(torch.ones(2, 2, device="foo", dtype=torch.bool), torch.ones(2, 2, device="foo", dtype=torch.bool))


def test_mv_and_dot():
    for m, k in [(7, 5), (600, 33), (33, 600)]:
        a, v = randn(m, k), randn(k)
        for av in layouts(a):
            check(torch.mv(av.to("foo"), v.to("foo")), torch.mv(av, v))
        s = randn(1)
        check(torch.addmv(s.to("foo"), a.to("foo"), v.to("foo"), beta=0.5, alpha=2), torch.addmv(s, a, v, beta=0.5, alpha=2))
    x, y = randn(5000), randn(10000)[::2]
    check(torch.dot(x.to("foo"), y.to("foo")), torch.dot(x, y))
    check(torch.dot(x[:0].to("foo"), y[:0].to("foo")), torch.dot(x[:0], y[:0]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_linear_forward_backward(dtype):
    x, w, b = randn(2, 9, 33, dtype=dtype), randn(70, 33, dtype=dtype), randn(70, dtype=dtype)
    g = randn(2, 9, 70, dtype=dtype)
    up = torch.float32 if dtype == torch.float16 else torch.float64
    results = []
    for device, dt in (("cpu", up), ("foo", dtype)):
        xs, ws, bs = (t.to(dt).to(device).requires_grad_() for t in (x, w, b))
        y = F.linear(xs, ws, bs)
        y.backward(g.to(dt).to(device))
        results.append((y, xs.grad, ws.grad, bs.grad))
    for expected, actual in zip(*results):
        check(actual, expected.to(dtype))


INT_TYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def randint(*shape, dtype):
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integer_products_exact(dtype):
    """Integer products equal the CPU's bit for bit, wrapping included (full-range values overflow
    every dtype), across tile sizes, transposed operands, and alpha/beta."""
    for m, k, n in [(3, 4, 5), (65, 17, 130)]:
        a, b = randint(m, k, dtype=dtype), randint(k, n, dtype=dtype)
        for av in layouts(a):
            got = torch.mm(av.to("foo"), b.to("foo"))
            assert got.dtype == dtype and got.device.type == "foo"
            assert torch.equal(got.cpu(), torch.mm(av, b))
    c, a, b = randint(6, 7, dtype=dtype), randint(6, 9, dtype=dtype), randint(9, 7, dtype=dtype)
    for beta, alpha in [(1, 1), (0, 3), (2, -1 if dtype.is_signed else 5)]:
        got = torch.addmm(c.to("foo"), a.to("foo"), b.to("foo"), beta=beta, alpha=alpha)
        assert torch.equal(got.cpu(), torch.addmm(c, a, b, beta=beta, alpha=alpha))
    x, y = randint(3, 5, 6, dtype=dtype), randint(3, 6, 4, dtype=dtype)
    assert torch.equal(torch.bmm(x.to("foo"), y.to("foo")).cpu(), torch.bmm(x, y))
    assert torch.equal(torch.matmul(x.to("foo"), y[0].to("foo")).cpu(), torch.matmul(x, y[0]))
    v, w = randint(300, dtype=dtype), randint(300, dtype=dtype)
    assert torch.equal(torch.dot(v.to("foo"), w.to("foo")).cpu(), torch.dot(v, w))
    mat = randint(40, 300, dtype=dtype)
    assert torch.equal(torch.mv(mat.to("foo"), v.to("foo")).cpu(), torch.mv(mat, v))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_panel_products_match_tiled(dtype):
    """The sim's panel kernel sums each element's products in the tiled kernel's order: the same
    bits, across panel and tile edges, transposed operands, batches, beta and a convolution."""
    torch.manual_seed(3)
    a, b, c = randn(70, 45, dtype=dtype), randn(45, 83, dtype=dtype), randn(70, 83, dtype=dtype)
    ba, bb = randn(3, 33, 20, dtype=dtype), randn(3, 40, 20, dtype=dtype)
    img, w = randn(2, 3, 12, 12, dtype=dtype), randn(8, 3, 3, 3, dtype=dtype)
    cases = (lambda d: d(a) @ d(b), lambda d: d(b).t() @ d(a).t(),
             lambda d: torch.addmm(d(c), d(a), d(b), beta=0.5, alpha=2.0),
             lambda d: torch.bmm(d(ba), d(bb).transpose(1, 2)),
             lambda d: F.conv2d(d(img), d(w), padding=1))
    for i, case in enumerate(cases):
        tiled = case(lambda t: t.to("foo")).cpu()  # the fixture's cuda paths
        torch_foo.set_sim_only_paths(True)
        try:
            panel = case(lambda t: t.to("foo"))
        finally:
            torch_foo.set_sim_only_paths(False)
        assert panel.device.type == "foo" and panel.dtype == dtype
        assert torch.equal(panel.cpu(), tiled), i
