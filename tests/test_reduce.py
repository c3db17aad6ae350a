"""Reduction launcher (csrc/kernels/ops/reduce.cu) paths that OpInfo samples do not reach: long
reductions split across blocks and finished by a second pass, more outputs than the grid cap
(grid-stride loops), the column kernel (reducing a leading dim), strided rows, first-occurrence
ties and NaNs across chunk boundaries, and float32 precision over 10^6 elements. Every result is
compared with the CPU, and no reduction may fall back to it."""

import itertools
import os
import warnings

import pytest
import torch

import torch_foo

REDUCTIONS = ("sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "var", "std", "var_mean", "std_mean",
              "linalg_vector_norm", "prod")


@pytest.fixture(autouse=True)
def _no_fallback():
    torch_foo.reset_fallback_report()
    yield
    fell_back = {op for op in torch_foo.fallback_report() if op.split("::")[-1].split(".")[0] in REDUCTIONS}
    assert not fell_back, f"reductions ran on the CPU: {fell_back}"


def same(fn, x, **tolerances):
    """fn on foo equals fn on the CPU: dtype, shape, values (all outputs of a tuple)."""
    expected = fn(x)
    actual = fn(x.to("foo"))
    pairs = zip(actual, expected) if isinstance(expected, tuple) else [(actual, expected)]
    for a, e in pairs:
        assert a.device.type == "foo"
        assert a.dtype == e.dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e, equal_nan=True, **tolerances)


def test_float32_sum_of_a_million_is_precise():
    # Positive values: no cancellation, so the default float32 tolerances test the tree sum.
    x = torch.rand(1_000_003)
    same(torch.sum, x)
    same(torch.mean, x)
    same(lambda t: t.view(1, -1).sum(1, keepdim=True), x)
    same(torch.var, x + 1000)  # Welford: the large mean does not cost precision
    same(torch.std, torch.randn(1_000_003))


def test_long_rows_split_across_blocks():
    x = torch.rand(3, 70_001) - 0.25  # mostly positive: sums without heavy cancellation
    for op in ("sum", "mean", "amax", "amin", "var"):
        same(lambda t: getattr(torch, op)(t, 1), x)
    same(lambda t: torch.max(t, 1), x)
    same(lambda t: torch.argmin(t, 1, keepdim=True), x)
    same(lambda t: torch.var_mean(t, 1), x)


def test_more_outputs_than_the_grid():
    # Short rows: one warp each, 8 to a block, more than 4096 blocks' worth.
    x = torch.randn(40_000, 3)
    same(lambda t: t.sum(1), x)
    same(lambda t: t.argmax(1), x)
    # Rows long enough for a block each, more rows than blocks.
    y = torch.rand(4_200, 520)
    same(lambda t: t.sum(1), y)
    same(lambda t: torch.max(t, 1), y)


def test_column_kernel_leading_and_middle_dims():
    x = torch.rand(5_000, 40)
    for op in ("sum", "amax", "argmax", "var"):
        same(lambda t: getattr(torch, op)(t, 0), x)
    same(lambda t: torch.min(t, 0, keepdim=True), x)
    y = torch.randn(3, 2_500, 50, dtype=torch.float64)
    same(lambda t: t.sum(1), y)
    same(lambda t: t.std(1, keepdim=True), y)
    same(lambda t: torch.std_mean(t, 1), y)
    # Transposed: the reduced dim is the leading one in memory, no copy.
    same(lambda t: t.sum(1), torch.rand(64, 3_000).t())


def test_strided_rows_small_inner():
    x = torch.rand(3_000, 5)
    same(lambda t: t.sum(0), x)
    same(lambda t: t.argmin(0), x)
    same(lambda t: t.mean((0, 2)), torch.rand(700, 3, 4))


def test_ties_and_nan_across_chunks():
    x = torch.zeros(100_000)
    x[70_000] = x[90_000] = x[95_000] = 1.0
    same(torch.argmax, x)
    same(lambda t: torch.max(t, 0), x)
    same(torch.argmin, -x)
    x[80_000] = x[99_999] = float("nan")
    for op in (torch.argmax, torch.argmin, torch.amax, torch.amin, torch.sum):
        same(op, x)
    same(lambda t: torch.max(t, 0), x)
    cols = torch.randint(0, 2, (4_000, 33)).float()
    same(lambda t: t.argmax(0), cols)
    same(lambda t: torch.min(t, 0), cols)


def test_accumulation_types():
    # 16-bit floats accumulate in float32: 30000 ones in half stall at 2048 otherwise.
    same(torch.sum, torch.ones(30_000, dtype=torch.float16))
    same(torch.mean, torch.rand(50_000, dtype=torch.bfloat16))
    # Integers (and bool) sum exactly into int64.
    big = torch.randint(2**40, 2**41, (50_000,))
    same(torch.sum, big)
    same(lambda t: t.sum(0), torch.randint(0, 255, (3_000, 20), dtype=torch.uint8))
    same(torch.sum, torch.rand(60_000) > 0.5)
    same(lambda t: t.sum(dtype=torch.float64), torch.randn(10_000, dtype=torch.float16))


@pytest.mark.parametrize("keepdim", [False, True])
def test_dim_combinations(keepdim):
    x = torch.randn(5, 6, 7, 8)
    views = (x, x.permute(2, 0, 3, 1), x[:, ::2])
    for v, r in itertools.product(views, (1, 2, 3)):
        for dims in itertools.combinations(range(4), r):
            same(lambda t: t.sum(dims, keepdim=keepdim), v)
            same(lambda t: t.amin(dims, keepdim=keepdim), v)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                same(lambda t: t.var(dims, keepdim=keepdim, correction=0), v)
        for d in range(4):
            same(lambda t: t.max(d, keepdim=keepdim), v)
        same(lambda t: t.argmax(keepdim=keepdim), v)


@pytest.mark.skipif(os.environ.get("TORCH_FOO_LARGE_TESTS") != "1", reason="set TORCH_FOO_LARGE_TESTS=1 (needs ~5 GB)")
def test_more_than_2_31_elements():
    n = 2**31 + 5
    x = torch.ones(n, dtype=torch.bool)
    x[-1] = False
    d = x.to("foo")
    assert d.sum().item() == n - 1
    assert d.view(1, -1).argmin(1).item() == n - 1


@pytest.mark.parametrize("ord", [2.0, 1.0, 0.0, 3.5, -1.5, float("inf"), float("-inf")], ids=str)
def test_vector_norm_orders_long_and_column(ord):
    # Every order's fold, over a split (long) reduction and a column one; NaN propagates.
    x = torch.randn(3, 70_000)
    x[1, 12345] = float("nan")
    same(lambda t: torch.linalg.vector_norm(t, ord, dim=1), x, rtol=1e-4, atol=1e-5)
    same(lambda t: torch.linalg.vector_norm(t, ord, dim=0), torch.randn(300, 64), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm_type", [2.0, float("inf")], ids=str)
def test_clip_grad_norm_without_foreach(norm_type):
    # clip_grad_norm_'s per-tensor path: a vector norm per gradient, one of their stack, a scale.
    torch.manual_seed(0)
    grads = [torch.randn(5, 7), torch.randn(7), torch.randn(3, 2, 2)]
    params = [torch.zeros_like(g, requires_grad=True) for g in grads]
    params_foo = [torch.zeros_like(g, device="foo", requires_grad=True) for g in grads]
    for p, q, g in zip(params, params_foo, grads):
        p.grad, q.grad = g.clone(), g.to("foo")
    total = torch.nn.utils.clip_grad_norm_(params, 0.5, norm_type=norm_type, foreach=False)
    total_foo = torch.nn.utils.clip_grad_norm_(params_foo, 0.5, norm_type=norm_type, foreach=False)
    assert total_foo.device.type == "foo"
    torch.testing.assert_close(total_foo.cpu(), total)
    for p, q in zip(params, params_foo):
        torch.testing.assert_close(q.grad.cpu(), p.grad)



def test_prod_wraps_integers_and_splits_long_rows():
    # int64 products overflow and wrap as on the CPU; int32 with dtype= keeps int32; bool is "all";
    # a long row (split across blocks) of values near 1 stays within float32 tolerance.
    g = torch.Generator().manual_seed(0)
    big = torch.randint(-(2 ** 20), 2 ** 20, (3, 40), generator=g)
    same(lambda t: torch.prod(t, 1), big)
    same(lambda t: torch.prod(t, 0, dtype=torch.int32), big.to(torch.int16))
    same(lambda t: torch.prod(t), torch.tensor([[True, True], [True, False]]))
    same(lambda t: torch.prod(t, 1), 1 + torch.randn(2, 70000, generator=g) * 1e-3, rtol=1e-4, atol=0)
