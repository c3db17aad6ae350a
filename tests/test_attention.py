"""The fused SDPA kernel (csrc/kernels/ops/attention.cu, csrc/aten/ops/attention.cpp) against PyTorch's math
path on the CPU: which backend F.scaled_dot_product_attention takes on foo, forward and backward
on ragged shapes (lengths that are no multiple of the tiles, query and key lengths that differ,
value head dims that differ from the key's), causal, boolean and additive masks (broadcast),
grouped-query attention, fully masked rows, dropout with the mask reproduced from the foo
generator, and the 16-bit types. Shapes are small: the sim device is slow."""

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import torch_foo

MATH = torch.ops.aten._scaled_dot_product_attention_math
FUSED = torch.ops.aten._scaled_dot_product_fused_attention_overrideable


pytestmark = pytest.mark.usefixtures("no_fallback")  # every test: foo kernels only


def rand(*shape, dtype=torch.float64, gen):
    return torch.randn(shape, dtype=torch.float64, generator=gen).to(dtype)


def run(device, q, k, v, mask, grad, dtype, **kw):
    """out, dq, dk, dv (and dmask for an additive mask) of F.sdpa on `device` in `dtype`."""
    leaves = [t.to(device, dtype).detach().requires_grad_() for t in (q, k, v)]
    m = None
    if mask is not None:
        m = mask.to(device) if mask.dtype == torch.bool else mask.to(device, dtype).detach().requires_grad_()
    if "dropout_mask" in kw:
        out = MATH(*leaves, m, **kw)[0]
    elif device == "cpu":
        with sdpa_kernel(SDPBackend.MATH):
            out = F.scaled_dot_product_attention(*leaves, attn_mask=m, **kw)
    else:
        out = F.scaled_dot_product_attention(*leaves, attn_mask=m, **kw)
        assert "FusedAttentionOverrideable" in out.grad_fn.name()  # the fused kernel, not math
    out.backward(grad.to(device, dtype))
    grads = [t.grad for t in leaves] + ([m.grad] if m is not None and m.requires_grad else [])
    return [out] + grads


def compare(actual, expected, **tol):
    for a, e in zip(actual, expected, strict=True):
        assert a.device.type == "foo" and a.dtype == e.dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e, **tol)


def test_backend_choice():
    q = torch.randn(1, 2, 5, 8, device="foo")
    assert torch._fused_sdp_choice(q, q, q) == SDPBackend.OVERRIDEABLE.value
    mask = torch.ones(5, 5, dtype=torch.bool, device="foo")
    assert torch._fused_sdp_choice(q, q, q, mask, 0.1, False) == SDPBackend.OVERRIDEABLE.value
    # Not for the fused kernel: 3-D inputs, head dim > 128, integer dtype; SDPA then runs the math path.
    q3 = torch.randn(2, 5, 8, device="foo")
    assert torch._fused_sdp_choice(q3, q3, q3) == SDPBackend.MATH.value
    big = torch.randn(1, 1, 3, 130, device="foo")
    assert torch._fused_sdp_choice(big, big, big) == SDPBackend.MATH.value
    # GQA only with enable_gqa.
    kv = torch.randn(1, 1, 5, 8, device="foo")
    assert torch._fused_sdp_choice(q, kv, kv) == SDPBackend.MATH.value
    assert torch._fused_sdp_choice(q, kv, kv, enable_gqa=True) == SDPBackend.OVERRIDEABLE.value
    with sdpa_kernel(SDPBackend.MATH):
        assert torch._fused_sdp_choice(q, q, q) == SDPBackend.MATH.value
    with sdpa_kernel(SDPBackend.OVERRIDEABLE), pytest.raises(RuntimeError, match="no available kernel"):
        torch._fused_sdp_choice(big, big, big)


def test_fused_op_rejects_unfit_inputs():
    big = torch.randn(1, 1, 3, 130, device="foo")
    with pytest.raises(RuntimeError, match=r"_scaled_dot_product_fused_attention_overrideable: .*head dims above 128"):
        FUSED(big, big, big)


# (batch, heads, kv_batch, kv_heads, L, S, E, Ev, mask kind, causal)
CASES = [
    (2, 2, 2, 2, 37, 45, 16, 16, None, False),
    (1, 3, 1, 3, 33, 20, 24, 40, None, True),        # causal with L > S, Ev != E
    (2, 2, 2, 2, 19, 70, 8, 8, "bool", False),       # boolean [L, S] mask
    (2, 4, 2, 2, 17, 23, 64, 64, "additive", False),  # GQA, additive [B, 1, L, S] mask
    (2, 2, 1, 2, 9, 40, 128, 96, "additive2d", False),  # kv batch 1 broadcast, widest tiles
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_forward_backward_against_math(case):
    B, H, KB, KH, L, S, E, Ev, kind, causal = case
    gen = torch.Generator().manual_seed(hash(case) % 1000)
    q, k, v = rand(B, H, L, E, gen=gen), rand(KB, KH, S, E, gen=gen), rand(KB, KH, S, Ev, gen=gen)
    grad = rand(B, H, L, Ev, gen=gen)
    mask = None
    if kind == "bool":
        mask = torch.rand(L, S, generator=gen) > 0.3
        mask[3] = False  # a fully masked row: zeros, as the math path's safe softmax
    elif kind == "additive":
        mask = rand(B, 1, L, S, gen=gen)
    elif kind == "additive2d":
        mask = rand(L, S, gen=gen)
    kw = dict(is_causal=causal) if causal else {}
    gqa = dict(enable_gqa=True) if KH != H else {}
    cpu_k, cpu_v = (k.expand(B, -1, -1, -1), v.expand(B, -1, -1, -1)) if KB != B else (k, v)
    expected = run("cpu", q, cpu_k, cpu_v, mask, grad, torch.float64, **kw, **gqa)
    if KB != B:  # the math reference saw expanded key/value: their gradients sum over the batch
        expected[2] = expected[2].sum(0, keepdim=True)
        expected[3] = expected[3].sum(0, keepdim=True)
    if KB != B:
        actual = run_fused_direct(q, k, v, mask, grad)
    else:
        actual = run("foo", q, k, v, mask, grad, torch.float64, **kw, **gqa)
    compare(actual, expected, rtol=1e-9, atol=1e-9)


def run_fused_direct(q, k, v, mask, grad):
    """The fused op called directly (F.sdpa refuses a key/value batch of 1 with a larger query batch)."""
    leaves = [t.to("foo").detach().requires_grad_() for t in (q, k, v)]
    m = mask.to("foo").detach().requires_grad_()
    out = FUSED(*leaves, m)[0]
    out.backward(grad.to("foo"))
    return [out] + [t.grad for t in leaves] + [m.grad]


def test_causal_fused_op_with_bias():
    """is_causal and an additive bias together (the fused op's own contract; SDPA refuses both)."""
    gen = torch.Generator().manual_seed(3)
    q, k, v, bias = rand(1, 2, 21, 8, gen=gen), rand(1, 2, 21, 8, gen=gen), rand(1, 2, 21, 8, gen=gen), rand(21, 21, gen=gen)
    causal = torch.ones(21, 21, dtype=torch.bool).tril()
    expected = MATH(q, k, v, bias.masked_fill(~causal, float("-inf")))[0]
    out = FUSED(q.to("foo"), k.to("foo"), v.to("foo"), bias.to("foo"), 0.0, True)[0]
    compare([out], [expected], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-5), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_low_precision(dtype, tol):
    gen = torch.Generator().manual_seed(7)
    q, k, v, grad = (rand(1, 2, 25, 32, gen=gen) for _ in range(4))
    mask = rand(25, 25, gen=gen)
    expected = run("cpu", q, k, v, mask, grad, torch.float64)
    actual = run("foo", q, k, v, mask, grad, dtype)
    compare(actual, [e.to(dtype) for e in expected], rtol=tol, atol=tol * 4)


def test_dropout_matches_math_with_the_generators_mask():
    """The kernel keeps score (b, h, i, j) when the Philox uniform of element ((b*H+h)*L+i)*S+j is
    below 1 - p: bernoulli_(1 - p) of a [B, H, L, S] tensor from the same generator state."""
    gen = torch.Generator().manual_seed(11)
    B, H, L, S, E, p = 2, 2, 13, 18, 8, 0.3
    q, k, v, grad = rand(B, H, L, E, gen=gen), rand(B, H, S, E, gen=gen), rand(B, H, S, E, gen=gen), rand(B, H, L, E, gen=gen)
    torch.foo.manual_seed(1234)
    actual = run("foo", q, k, v, None, grad, torch.float64, dropout_p=p)
    torch.foo.manual_seed(1234)
    keep = torch.empty(B, H, L, S, device="foo").bernoulli_(1 - p).bool().cpu()
    assert 0.5 < keep.float().mean() < 0.9
    expected = run("cpu", q, k, v, None, grad, torch.float64, dropout_p=p, dropout_mask=keep)
    # The CPU reference ran with an explicit mask; the foo run drew its own: same numbers.
    compare(actual, expected, rtol=1e-9, atol=1e-9)


def meta_like(t):
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")


@pytest.mark.parametrize("dropout_p", [0.0, 0.2])
@pytest.mark.parametrize("v_dim", [8, 12])
def test_outputs_have_the_meta_kernels_layouts(dropout_p, v_dim):
    """Inductor allocates and checks an extern op's outputs with torch's meta kernel: the fused op's
    output takes the query's layout (here GPT's, heads transposed out of [B, L, H, E]), its
    seed/offset are 0-d, and the backward's gradients take q's, k's and v's layouts."""
    gen = torch.Generator().manual_seed(5)
    B, L, H, E = 2, 7, 3, 8
    # float32: for a float64 query foo keeps a float64 logsumexp (the meta kernel says float32),
    # which only foo's backward reads.
    q, k = (rand(B, L, H, E, dtype=torch.float32, gen=gen).transpose(1, 2) for _ in range(2))
    v = rand(B, H, L, v_dim, dtype=torch.float32, gen=gen)  # contiguous, unlike q and k
    grad = rand(B, H, L, v_dim, dtype=torch.float32, gen=gen)
    foo_in = [t.to("foo").transpose(1, 2).contiguous().transpose(1, 2) if t is not v else t.to("foo") for t in (q, k, v)]
    assert [t.stride() for t in foo_in] == [t.stride() for t in (q, k, v)]
    BACKWARD = torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward

    def call(q, k, v, grad):
        fwd = FUSED(q, k, v, None, dropout_p, True)
        out, lse, seed, offset = fwd[0], fwd[1], fwd[6], fwd[7]
        grads = BACKWARD(grad, q, k, v, None, [True, True, True, False], out, lse, None, None,
                         L, L, dropout_p, True, seed, offset)
        return [out, lse, seed, offset, *grads[:3]]

    actual = call(*foo_in, grad.to("foo"))
    expected = call(*map(meta_like, (q, k, v, grad)))
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        assert (i, a.device.type, a.shape, a.stride(), a.dtype) == (i, "foo", e.shape, e.stride(), e.dtype)
    if dropout_p == 0.0:  # the values too (with dropout, test_dropout_matches_math_... checks them)
        reference = MATH(q, k, v, None, 0.0, True)[0]
        torch.testing.assert_close(actual[0].cpu(), reference, rtol=2e-5, atol=2e-5)
