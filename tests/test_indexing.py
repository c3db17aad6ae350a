"""Indexing and data movement on foo: what the manifest-generated op tests cannot say.

The OpInfo tests (tests/ops) cover values, layouts, out=, in-place and gradients on small
samples. Here: sizes that cross block, tile and batch boundaries; the 64-bit index path;
duplicate indices under accumulation; stability of sort; errors for bad indices (a Python
exception, and the device keeps working); layouts of clone/cat; embedding's backward options;
and a small decoder training step whose indexing ops must not fall back.
"""

import pytest
import torch

import torch_foo
from conftest import assert_foo_equal, run_python, foo_kernels_only

F = torch.nn.functional


def foo(t):
    return t.to("foo")


def same_layout(t):
    """`t` on foo with its sizes, strides and storage offset (t.to() would compact it)."""
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = t.new_empty(0).set_(t.untyped_storage(), 0, (n,), (1,)).to("foo")
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


def close(actual, expected, **kw):
    assert actual.device.type == "foo"
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **kw)


@pytest.fixture
def native():
    """The block must not fall back to the CPU."""
    with foo_kernels_only():
        yield


# ---- sizes crossing block / tile / batch boundaries -----------------------------------------


def test_large_gather_scatter_index_select(native):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 257, generator=g)
    idx = torch.randint(0, 300, (700, 257), generator=g)
    close(foo(x).gather(0, foo(idx)), x.gather(0, idx), rtol=0, atol=0)
    rows = torch.randint(0, 300, (1000,), generator=g)
    close(foo(x).index_select(0, foo(rows)), x.index_select(0, rows), rtol=0, atol=0)
    close(foo(x)[foo(rows), 3:], x[rows, 3:], rtol=0, atol=0)
    # Integer-valued data: the atomic sums are exact in any order.
    src = torch.randint(-5, 5, (700, 257), generator=g).double()
    close(foo(torch.zeros(300, 257, dtype=torch.float64)).scatter_add(0, foo(idx), foo(src)),
          torch.zeros(300, 257, dtype=torch.float64).scatter_add(0, idx, src), rtol=0, atol=0)


def test_compaction_across_tiles(native):
    """nonzero / masked_select / masked_scatter_ over many 1024-element tiles, strided inputs."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(37, 301, generator=g)
    x[x.abs() < 0.3] = 0
    t = x.t()  # not contiguous
    assert_foo_equal(foo(t).nonzero(), t.nonzero())
    assert_foo_equal(foo(x)[:, ::3].nonzero(), x[:, ::3].nonzero())
    mask = torch.rand(37, 1, generator=g) > 0.5  # broadcast across the columns
    assert_foo_equal(foo(x).masked_select(foo(mask)), x.masked_select(mask))
    source = torch.randn(x.numel(), generator=g)
    assert_foo_equal(foo(x).masked_scatter_(foo(x > 0), foo(source)), x.clone().masked_scatter_(x > 0, source))
    assert_foo_equal(foo(torch.zeros(0, 3)).nonzero(), torch.zeros(0, 2, dtype=torch.long))


def test_cat_many_inputs_and_layouts(native):
    g = torch.Generator().manual_seed(2)
    parts = [torch.randn(3, int(n), 5, generator=g) for n in torch.randint(0, 4, (150,), generator=g)]
    assert_foo_equal(torch.cat([foo(p) for p in parts], 1), torch.cat(parts, 1))  # 3 batches of 64
    a = torch.randn(2, 3, 4, 5, generator=g).to(memory_format=torch.channels_last)
    b = torch.randn(2, 2, 4, 5, generator=g).to(memory_format=torch.channels_last)
    out = torch.cat([foo(a), foo(b)], 1)
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert_foo_equal(out, torch.cat([a, b], 1))
    # Mixed dtypes promote; a legacy empty 1-D input is skipped; a transposed input is copied.
    c = torch.randint(0, 9, (3, 5), generator=g)
    d = torch.randn(5, 3, generator=g, dtype=torch.float64).t()
    assert_foo_equal(torch.cat([foo(c), foo(torch.empty(0)), foo(d)]), torch.cat([c, torch.empty(0), d]))
    assert_foo_equal(torch.stack([foo(c), foo(c)], 2), torch.stack([c, c], 2))
    out = foo(torch.zeros(6, 5)).t()  # a non-contiguous out
    torch.cat([foo(c.float()).t(), foo(c.float()).t()], 1, out=out)
    assert_foo_equal(out, torch.cat([c.float().t()] * 2, 1))


@pytest.mark.parametrize("dim", [0, 1])
def test_cumsum_cumprod_long(native, dim):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(3, 5000, generator=g) if dim == 1 else torch.randn(5000, 3, generator=g)
    close(foo(x).cumsum(dim), x.cumsum(dim), rtol=1e-6, atol=1e-6)  # double accumulation, as the CPU
    y = 1 + torch.randn(x.shape, generator=g) / 1000
    close(foo(y).cumprod(dim), y.cumprod(dim), rtol=1e-5, atol=0)
    n = torch.randint(-3, 4, x.shape, generator=g, dtype=torch.int8)
    assert_foo_equal(foo(n).cumsum(dim), n.cumsum(dim))  # int64 result
    assert_foo_equal(foo(n).cumprod(dim, dtype=torch.int8), n.cumprod(dim, dtype=torch.int8))  # wraps alike


def test_sort_long_rows_stable(native):
    """Rows longer than one shared-memory tile go through the merge passes; ties keep their order."""
    g = torch.Generator().manual_seed(4)
    x = torch.randint(0, 50, (3, 9000), generator=g).float()
    x[0, ::7] = float("nan")
    for descending in (False, True):
        values, indices = foo(x).sort(dim=1, descending=descending, stable=True)
        expected = x.sort(dim=1, descending=descending, stable=True)
        assert_foo_equal(values, expected.values)
        assert_foo_equal(indices, expected.indices)
    # stable=False gives the same (stable) order, every time.
    first = foo(x).sort(dim=1, stable=False).indices.cpu()
    assert torch.equal(first, x.sort(dim=1, stable=True).indices)
    assert torch.equal(foo(x).sort(1).indices.cpu(), first)
    # argsort / topk on long rows, along a non-last dim.
    assert_foo_equal(foo(x.t()).argsort(dim=0, stable=True), x.t().argsort(dim=0, stable=True))
    y = torch.randn(9000, 2, generator=g)
    v, i = foo(y).topk(5, 0)
    assert_foo_equal(v, y.topk(5, 0).values)
    assert_foo_equal(i, y.topk(5, 0).indices)


def test_sort_sample_with_ties():
    """The OpInfo's 8000-element tie-heavy sample (opted out of the generated tests): values equal
    the CPU's; indices are the stable order."""
    g = torch.Generator().manual_seed(5)
    for dtype in (torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.bool):
        x = torch.randint(0, 2 if dtype == torch.bool else 10, (8000,), generator=g).to(dtype)
        values, indices = foo(x).sort()
        assert_foo_equal(values, x.sort().values)
        assert_foo_equal(indices, x.sort(stable=True).indices)


def test_topk_integers_ties():
    """Integer topk (opted out of the generated tests for its ties): values as the CPU's, indices
    point at them, lowest index first among equal values."""
    g = torch.Generator().manual_seed(6)
    x = torch.randint(-9, 10, (5, 10, 5), generator=g, dtype=torch.int32)
    for largest in (True, False):
        values, indices = foo(x).topk(3, 1, largest=largest)
        assert_foo_equal(values, x.topk(3, 1, largest=largest).values)
        assert torch.equal(x.gather(1, indices.cpu()), values.cpu())
        assert_foo_equal(indices, x.sort(dim=1, descending=largest, stable=True).indices[:, :3])


def test_tril_triu_indices_shapes():
    for row, col, offset in [(0, 3, 0), (5, 0, 0), (5, 4, 1), (4, 7, -2), (6, 6, -10), (6, 6, 10), (70, 90, 3)]:
        for fn in (torch.tril_indices, torch.triu_indices):
            assert_foo_equal(fn(row, col, offset, device="foo"), fn(row, col, offset))
    assert_foo_equal(torch.tril_indices(5, 4, dtype=torch.int32, device="foo"), torch.tril_indices(5, 4, dtype=torch.int32))


def test_unfold_backward_overlapping_windows(native):
    x = torch.randn(4, 11, 3, requires_grad=True)
    fx = foo(x.detach()).requires_grad_()
    g = torch.randn(x.unfold(1, 4, 3).shape)
    for size, step in ((4, 3), (3, 1), (2, 5)):
        g = torch.randn(x.unfold(1, size, step).shape)
        expected, = torch.autograd.grad(x.unfold(1, size, step), x, g)
        actual, = torch.autograd.grad(fx.unfold(1, size, step), fx, foo(g))
        close(actual, expected)


def test_all_any_truth_and_long_rows(native):
    """Integers are read by their bits (256 in int16 is true), -0.0 is false, NaN true; a long
    row is split across blocks; uint8 input gives uint8, as on the CPU."""
    cases = [torch.tensor([256, 1], dtype=torch.int16), torch.tensor([-0.0, 1.0]), torch.tensor([float("nan"), 1.0]),
             torch.tensor([0, 7], dtype=torch.uint8), torch.tensor([True, False]), torch.tensor([1 << 40, 0])]
    for t in cases:
        for fn in (torch.all, torch.any):
            assert_foo_equal(fn(foo(t)), fn(t))
    x = torch.ones(3, 70000)
    x[1, -1] = 0
    x[2, 12345] = 0
    assert_foo_equal(foo(x).all(1), x.all(1))
    assert_foo_equal((foo(x) == 0).any(1), (x == 0).any(1))
    assert_foo_equal(foo(x.t()).all(0, keepdim=True), x.t().all(0, keepdim=True))  # column kernel
    assert_foo_equal(foo(torch.zeros(0, 3)).all(0), torch.zeros(0, 3).all(0))  # empty: the identity
    assert_foo_equal(foo(torch.zeros(0, 3)).any(0), torch.zeros(0, 3).any(0))


# ---- the 64-bit index path --------------------------------------------------------------------


def test_64bit_index_path():
    code = """
import torch, torch_foo
torch_foo.set_fallback_policy("error")
g = torch.Generator().manual_seed(0)
x = torch.randn(40, 33, generator=g, dtype=torch.float64)
idx = torch.randint(0, 40, (50, 33), generator=g)
f = lambda t: t.to("foo")
torch.testing.assert_close(f(x).t().gather(1, f(idx).t()).cpu(), x.t().gather(1, idx.t()))
torch.testing.assert_close(f(x)[f(idx[:, 0])].cpu(), x[idx[:, 0]])
z = torch.zeros(40, 33, dtype=torch.float64)
rows, v = idx[:, 0], torch.randn(50, 33, generator=g, dtype=torch.float64)
torch.testing.assert_close(f(z).index_put_((f(rows),), f(v), accumulate=True).cpu(),
                           z.clone().index_put_((rows,), v, accumulate=True))
cols = idx[0] % 33
torch.testing.assert_close(f(x).index_select(1, f(cols)).cpu(), x.index_select(1, cols))
print("ok")
"""
    r = run_python(code, env={"TORCH_FOO_FORCE_64BIT_INDEXING": "1"})
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


# ---- duplicates under accumulation -------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                                   torch.int64, torch.uint8, torch.bool])
def test_index_put_accumulate_duplicates(native, dtype):
    g = torch.Generator().manual_seed(7)
    idx = torch.randint(0, 7, (3000,), generator=g)  # ~430 hits per slot: contended atomics
    values = torch.randint(0, 2, (3000, 2), generator=g).to(dtype)
    base = torch.zeros(7, 2, dtype=dtype)
    expected = base.clone().index_put_((idx,), values, accumulate=True)
    actual = foo(base).index_put_((foo(idx),), foo(values), accumulate=True)
    if dtype == torch.float16:
        expected = base.double().index_put_((idx,), values.double(), accumulate=True).to(dtype)  # exact sums < 2048
    assert_foo_equal(actual, expected)
    # The same through index_add_ and scatter_reduce('amax'/'prod'), the other atomic paths.
    assert_foo_equal(foo(base).index_add_(0, foo(idx), foo(values)), expected)
    if dtype != torch.bool:
        src = torch.randint(1, 3, (3000, 2), generator=g).to(dtype)
        index2 = idx.unsqueeze(1).expand(3000, 2)
        for reduce in ("amax", "amin"):
            assert_foo_equal(foo(base).scatter_reduce(0, foo(index2), foo(src), reduce, include_self=False),
                             base.scatter_reduce(0, index2, src, reduce, include_self=False))


# ---- errors: a Python exception, and the device keeps working ----------------------------------


@pytest.mark.parametrize("case", ["index", "index_neg", "index_put", "index_select", "embedding", "gather",
                                  "scatter", "index_add", "embedding_backward", "masked_scatter"])
def test_bad_index_raises_and_device_survives(native, case):
    x = foo(torch.arange(12.0).view(3, 4))
    bad = foo(torch.tensor([0, 3]))
    calls = {
        "index": (IndexError, "index 3 is out of bounds for dimension 0 with size 3", lambda: x[bad]),
        "index_neg": (IndexError, "index -4 is out of bounds for dimension 0 with size 3", lambda: x[foo(torch.tensor([-4]))]),
        "index_put": (IndexError, "out of bounds", lambda: x.index_put_((bad,), foo(torch.tensor(1.0)), accumulate=True)),
        "index_select": (IndexError, "index out of range in self", lambda: x.index_select(0, bad)),
        "embedding": (IndexError, "index out of range in self", lambda: F.embedding(bad, x)),
        "gather": (RuntimeError, "index 3 is out of bounds for dimension 0 with size 3",
                   lambda: x.gather(0, foo(torch.tensor([[3, 0, 0, 0]])))),
        "scatter": (RuntimeError, "index 5 is out of bounds for dimension 1 with size 4",
                    lambda: x.scatter_(1, foo(torch.tensor([[5]])), 1.0)),
        "index_add": (RuntimeError, "index 3 is out of bounds for dimension 0 with size 3",  # the CPU's, 2-d
                      lambda: x.index_add_(0, bad, foo(torch.ones(2, 4)))),
        "embedding_backward": (IndexError, "out of range",
                               lambda: torch.ops.aten.embedding_dense_backward(foo(torch.ones(2, 4)), bad, 3, -1, False)),
        "masked_scatter": (RuntimeError, "Number of elements of source < number of ones in mask",
                           lambda: x.masked_scatter_(x > 2, foo(torch.ones(3)))),
    }
    error, message, call = calls[case]
    if case == "masked_scatter":  # sized on the host: raised at the op
        with pytest.raises(error, match=message):
            call()
    else:  # found on the device: raised at the next synchronisation (test_device_errors.py)
        call()
        with pytest.raises(error, match=message):
            torch.foo.synchronize()
    torch.foo.synchronize()  # nothing was left broken on the stream
    assert_foo_equal(x[foo(torch.tensor([2]))], torch.tensor([[8.0, 9.0, 10.0, 11.0]]))


# ---- embedding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_embedding_backward_options(native, dtype):
    g = torch.Generator().manual_seed(8)
    weight = torch.randn(20, 6, generator=g).to(dtype)
    idx = torch.randint(0, 20, (7, 30), generator=g)
    grad = torch.randn(7, 30, 6, generator=g).to(dtype)
    for padding_idx, scale in ((None, False), (3, False), (None, True), (5, True)):
        w = weight.clone().requires_grad_()
        fw = foo(weight).requires_grad_()
        F.embedding(idx, w, padding_idx=padding_idx, scale_grad_by_freq=scale).backward(grad)
        F.embedding(foo(idx), fw, padding_idx=padding_idx, scale_grad_by_freq=scale).backward(foo(grad))
        # foo sums each row in float and rounds once; the CPU rounds 16-bit sums as it goes.
        tol = {} if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
        close(fw.grad, w.grad, **tol)
        if padding_idx is not None:
            assert not fw.grad[padding_idx].cpu().any()


def test_embedding_max_norm_duplicates(native):
    g = torch.Generator().manual_seed(9)
    weight = torch.randn(10, 5, generator=g) * 3
    idx = torch.tensor([[1, 1, 4], [4, 9, 1]])
    fw = foo(weight)
    out = F.embedding(foo(idx), fw, max_norm=1.5)
    expected_weight = weight.clone()
    expected = F.embedding(idx, expected_weight, max_norm=1.5)
    close(out, expected)
    close(fw, expected_weight)  # renormalised in place, each row once


# ---- clone of any layout ------------------------------------------------------------------------


def test_clone_layouts(native):
    g = torch.Generator().manual_seed(10)
    x = torch.randn(2, 3, 4, 5, generator=g)
    cases = [
        x.to(memory_format=torch.channels_last),
        x.transpose(1, 3),
        x[:, 1:, ::2],
        torch.randn(3, 1, generator=g).expand(3, 4),  # overlapping
        torch.randn(10, generator=g).as_strided((4, 3), (2, 1), 1),  # overlapping, with an offset
    ]
    for t in cases:
        for fmt in (torch.preserve_format, torch.contiguous_format):
            expected = t.clone(memory_format=fmt)
            result = same_layout(t).clone(memory_format=fmt)
            assert result.stride() == expected.stride(), (t.stride(), fmt)
            assert_foo_equal(result, expected)


# ---- a decoder training step ---------------------------------------------------------------------

# The ops of this family a GPT-style step reaches; none may fall back.
INDEXING_OPS = {"embedding", "embedding_dense_backward", "index_select", "index", "_index_put_impl_", "cat",
                "tril", "triu", "all", "any", "index_add", "gather", "scatter", "scatter_add", "masked_select",
                "masked_scatter_", "nonzero", "cumsum", "sort", "topk", "flip", "roll", "repeat", "unfold"}


class TinyDecoder(torch.nn.Module):
    def __init__(self, vocab=17, dim=16, heads=2, length=8):
        super().__init__()
        self.heads = heads
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Embedding(length, dim)
        self.norm = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied, as in GPT-2

    def forward(self, tokens):
        b, t = tokens.shape
        x = self.tok(tokens) + self.pos(torch.arange(t, device=tokens.device))
        q, k, v = self.qkv(self.norm(x)).split(x.shape[-1], dim=-1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5)
        causal = torch.tril(torch.ones(t, t, device=tokens.device, dtype=torch.bool))
        scores = scores.masked_fill(~causal, float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        return self.head(x + self.proj(y))


def test_decoder_step_indexing_ops_native():
    torch.manual_seed(0)
    model = TinyDecoder()
    foo_model = TinyDecoder()
    foo_model.load_state_dict(model.state_dict())
    foo_model.to("foo")
    tokens = torch.randint(0, 17, (3, 8))
    losses = []
    torch_foo.reset_fallback_report()
    for m, tok in ((model, tokens), (foo_model, foo(tokens))):
        logits = m(tok[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tok[:, 1:].reshape(-1))
        loss.backward()
        losses.append(loss.detach().cpu())
        if m is foo_model:
            report = torch_foo.fallback_report()
    fallen = {op for op in report if op.split("::")[-1].split(".")[0] in INDEXING_OPS}
    assert not fallen, f"indexing ops fell back: {fallen} (all fallbacks: {report})"
    torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-5)
    close(foo_model.tok.weight.grad, model.tok.weight.grad, rtol=1e-4, atol=1e-5)


# ---- CPU index tensors, as on CUDA -------------------------------------------------------------


def test_cpu_index_tensors_are_accepted_as_on_cuda(no_fallback):
    """x[idx], x[mask], x[idx] = v and index_put_ take index tensors on the CPU (moved to the
    device, as CUDA's AdvancedIndex does); index_select does not, as on CUDA."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 5, generator=g)
    xf = x.to("foo")
    rows, cols = torch.tensor([4, 0, 4, -1]), torch.tensor([1, 3, 1, 0])
    mask = torch.rand(6, generator=g) > 0.5
    assert_foo_equal(xf[rows], x[rows])
    assert_foo_equal(xf[rows, cols], x[rows, cols])
    assert_foo_equal(xf[:, cols], x[:, cols])
    assert_foo_equal(xf[mask], x[mask])
    assert_foo_equal(xf[rows.int()], x[rows.int()])
    mixed = xf[rows.to("foo"), cols]  # one on foo, one on the CPU
    assert_foo_equal(mixed, x[rows, cols])

    values = torch.randn(4, generator=g)
    expected, actual = x.clone(), xf.clone()
    expected.index_put_((rows, cols), values, accumulate=True)
    actual.index_put_((rows, cols), values.to("foo"), accumulate=True)
    torch.testing.assert_close(actual.cpu(), expected)
    assert actual.device.type == "foo"
    expected[mask] = 7.0
    actual[mask] = 7.0
    expected[rows] = torch.arange(5.0)
    actual[rows] = torch.arange(5.0).to("foo")
    torch.testing.assert_close(actual.cpu(), expected)

    with pytest.raises(RuntimeError, match="index_select: Expected all tensors to be on the same device"):
        xf.index_select(0, rows.abs())
    xf[torch.tensor([6])]  # a CPU index moves to the device, which reports it at the next wait
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 6"):
        torch.foo.synchronize()
