"""Focused tests of the CNN ops (docs/kernels.md, "CNN ops"): what the generated OpInfo tests
cannot say. Running statistics in train/eval, layouts (channels_last), convolution configurations
forward and backward against the CPU, shapes that cross GEMM tiles, 16-bit accuracy against
float64 where the CPU rounds 16-bit intermediates, and a small CNN trained natively.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch_foo
from conftest import cuda_paths, foo_kernels_only


@pytest.fixture(autouse=True)
def tiled_gemm():
    """Pins the kernels cuda runs on sim (the convolutions' tiled GEMM, not the sim's panel
    products), as tests/test_gemm.py does."""
    with cuda_paths():
        yield


def _foo(t):
    return t.detach().to("foo").requires_grad_(t.requires_grad)


def _native(fn):
    """Runs fn with the fallback policy 'error': any op not native raises."""
    with foo_kernels_only():
        return fn()


def _close(actual, expected, **tol):
    torch.testing.assert_close(actual.detach().cpu(), expected.detach(), **tol)


# ---- batch norm: running statistics ----------------------------------------------------------


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "2d"])
def test_batch_norm_updates_running_stats_in_train_and_uses_them_in_eval(layout):
    torch.manual_seed(0)
    x = torch.randn(4, 6) * 3 + 1 if layout == "2d" else torch.randn(3, 6, 5, 4) * 3 + 1
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    w, b = torch.randn(6), torch.randn(6)
    rm, rv = torch.randn(6), torch.rand(6) + 0.5
    frm, frv = rm.to("foo"), rv.to("foo")
    for step in range(2):
        y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
        fy = _native(lambda: F.batch_norm(_foo(x), frm, frv, _foo(w), _foo(b), training=True, momentum=0.3, eps=1e-3))
        _close(fy, y, rtol=1e-5, atol=1e-5)
        # In place, with the unbiased variance, as the CPU.
        _close(frm, rm, rtol=1e-6, atol=1e-6)
        _close(frv, rv, rtol=1e-6, atol=1e-6)
    n = x.numel() // 6
    dims = [0] if x.dim() == 2 else [0, 2, 3]
    assert not torch.allclose(rv, torch.rand(6))  # moved
    expected_var = x.var(dim=dims, unbiased=True)
    assert n > 1 and torch.isfinite(expected_var).all()
    # Evaluation normalises with the running statistics and leaves them alone.
    before_m, before_v = frm.cpu(), frv.cpu()
    y = F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-3)
    fy = _native(lambda: F.batch_norm(_foo(x), frm, frv, _foo(w), _foo(b), training=False, eps=1e-3))
    _close(fy, y, rtol=1e-5, atol=1e-5)
    assert torch.equal(frm.cpu(), before_m) and torch.equal(frv.cpu(), before_v)
    # ... and returns them as [C] save_mean/save_invstd, as CUDA (the CPU: 0 elements).
    _, save_mean, save_invstd = _native(lambda: torch.native_batch_norm(_foo(x), _foo(w), _foo(b), frm, frv, False, 0.1, 1e-3))
    assert save_mean.shape == save_invstd.shape == (6,) and save_mean.device.type == "foo"
    assert torch.equal(save_mean.cpu(), before_m)
    _close(save_invstd, (before_v.double() + 1e-3).rsqrt().float())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batch_norm_16bit_saves_float32_statistics(dtype):
    """As CUDA and ATen's meta: save_mean/save_invstd in float32 for 16-bit data (16-bit parameters
    too), which the backward takes; gradients as accurate as computing in float64 allows."""
    torch.manual_seed(2)
    x, w, b = torch.randn(4, 3, 5).to(dtype), torch.randn(3).to(dtype), torch.randn(3).to(dtype)
    for training in (True, False):
        rm, rv = _foo(torch.randn(3).to(dtype)), _foo((torch.rand(3) + 0.5).to(dtype))
        _, mean, invstd = _native(lambda: torch.native_batch_norm(_foo(x), _foo(w), _foo(b), rm, rv, training, 0.1, 1e-5))
        assert mean.dtype == invstd.dtype == torch.float32 and mean.shape == invstd.shape == (3,)
    fx, fw, fb = (_foo(t).requires_grad_() for t in (x, w, b))
    g = torch.randn(4, 3, 5).to(dtype)
    actual = _native(lambda: torch.autograd.grad(F.batch_norm(fx, None, None, fw, fb, training=True), (fx, fw, fb), _foo(g)))
    rx, rw, rb = (t.double().requires_grad_() for t in (x, w, b))
    expected = torch.autograd.grad(F.batch_norm(rx, None, None, rw, rb, training=True), (rx, rw, rb), g.double())
    for a, e in zip(actual, expected):
        assert a.dtype == dtype
        _close(a.double(), e, rtol=0.05, atol=0.05)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16bit_norm_statistics_match_meta(dtype):
    """The statistics' dtypes and shapes are what FakeTensorMode (torch.compile) predicts: float32
    for layer and batch norm (as CUDA), the input's dtype for group norm."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    x, w, b = torch.randn(2, 6, 4).to(dtype), torch.randn(6).to(dtype), torch.randn(6).to(dtype)
    rm, rv = torch.zeros(6).to(dtype), torch.ones(6).to(dtype)
    calls = (
        lambda x, w, b, rm, rv: torch.native_layer_norm(x, (6, 4), None, None, 1e-5),
        lambda x, w, b, rm, rv: torch.native_group_norm(x, w, b, 2, 6, 4, 3, 1e-5),
        lambda x, w, b, rm, rv: torch.native_batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5),
    )
    on_foo = [_foo(t) for t in (x, w, b, rm, rv)]
    for call in calls:
        real = _native(lambda: call(*on_foo))
        with FakeTensorMode() as mode:
            fake = call(*[mode.from_tensor(t) for t in on_foo])
        assert [(r.dtype, r.shape) for r in real] == [(f.dtype, f.shape) for f in fake]


def test_batch_norm_strided_running_stats_and_no_stats():
    torch.manual_seed(1)
    x = torch.randn(5, 4, 3)
    big_m, big_v = torch.zeros(8), torch.ones(8)
    rm, rv = big_m[::2], big_v[::2]  # non-contiguous views: updated through a copy
    fbig_m, fbig_v = big_m.to("foo"), big_v.to("foo")
    frm, frv = fbig_m[::2], fbig_v[::2]
    F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    _native(lambda: F.batch_norm(_foo(x), frm, frv, training=True, momentum=0.5))
    _close(fbig_m, big_m, rtol=1e-6, atol=1e-6)
    _close(fbig_v, big_v, rtol=1e-6, atol=1e-6)
    # Without running statistics (_native_batch_norm_legit.no_stats), forward and backward.
    xr = x.clone().requires_grad_()
    fx = _foo(xr)
    y = F.batch_norm(xr, None, None, training=True)
    fy = _native(lambda: F.batch_norm(fx, None, None, training=True))
    _close(fy, y, rtol=1e-5, atol=1e-5)
    g = torch.randn_like(y)
    (gx,) = torch.autograd.grad(y, xr, g)
    (fgx,) = _native(lambda: torch.autograd.grad(fy, fx, g.to("foo")))
    _close(fgx, gx, rtol=1e-5, atol=1e-5)
    out = torch.ops.aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5)
    fout = _native(lambda: torch.ops.aten._native_batch_norm_legit.no_stats(_foo(x), None, None, True, 0.1, 1e-5))
    for a, e in zip(fout, out):
        _close(a, e, rtol=1e-5, atol=1e-5)


# ---- convolution -----------------------------------------------------------------------------

# (input shape, weight shape, kwargs): grouped, strided, dilated, padded, transposed, 1-d/2-d/3-d.
CONVS = [
    ("conv2d", (2, 4, 9, 8), (6, 2, 3, 3), dict(stride=2, padding=1, dilation=2, groups=2)),
    ("conv2d", (1, 3, 7, 7), (5, 3, 1, 3), dict(stride=(1, 2), padding=(0, 2))),
    ("conv1d", (2, 6, 11), (6, 1, 4), dict(stride=3, padding=2, groups=6)),
    ("conv3d", (1, 4, 5, 6, 4), (4, 2, 3, 2, 3), dict(stride=(2, 1, 1), padding=1, dilation=(1, 2, 1), groups=2)),
    ("conv_transpose2d", (2, 4, 5, 4), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1, groups=2, dilation=1)),
    ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 2, 3), dict(stride=(3, 2), padding=(1, 0), dilation=(2, 1))),
    ("conv_transpose1d", (2, 3, 6), (3, 2, 3), dict(stride=2, output_padding=1)),
    ("conv_transpose3d", (1, 2, 3, 3, 4), (2, 2, 2, 3, 2), dict(stride=2, padding=(0, 1, 0), groups=2)),
]


def _conv_check(name, x_shape, w_shape, kwargs, memory_format=None, dtype=torch.float32, tol=1e-5):
    torch.manual_seed(2)
    transposed = "transpose" in name
    x = torch.randn(x_shape, dtype=dtype)
    w = torch.randn(w_shape, dtype=dtype)
    b = torch.randn(w_shape[1] * kwargs.get("groups", 1) if transposed else w_shape[0], dtype=dtype)
    if memory_format is not None:
        x, w = x.contiguous(memory_format=memory_format), w.contiguous(memory_format=memory_format)
    x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
    fn = getattr(F, name)
    y = fn(x, w, b, **kwargs)
    g = torch.randn_like(y)
    expected = torch.autograd.grad(y, (x, w, b), g)
    fx, fw, fb = _foo(x), _foo(w), _foo(b)
    fy = _native(lambda: fn(fx, fw, fb, **kwargs))
    actual = _native(lambda: torch.autograd.grad(fy, (fx, fw, fb), g.to("foo")))
    _close(fy, y, rtol=tol, atol=tol)
    for what, a, e in zip(("grad_input", "grad_weight", "grad_bias"), actual, expected):
        torch.testing.assert_close(a.cpu(), e, rtol=tol, atol=tol, msg=lambda m, w=what: f"{name} {w}: {m}")
    return fy, actual


@pytest.mark.parametrize("name,x_shape,w_shape,kwargs", CONVS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONVS)])
def test_conv_forward_and_backward_match_cpu(name, x_shape, w_shape, kwargs):
    _conv_check(name, x_shape, w_shape, kwargs)


def test_conv_channels_last_forward_backward():
    fy, (gx, gw, _) = _conv_check("conv2d", (2, 5, 6, 7), (8, 5, 3, 3), dict(padding=1), torch.channels_last)
    # The output and the gradients keep the channels_last layout, as on CUDA.
    assert fy.is_contiguous(memory_format=torch.channels_last) and not fy.is_contiguous()
    assert gx.is_contiguous(memory_format=torch.channels_last)
    assert gw.is_contiguous(memory_format=torch.channels_last)
    _conv_check("conv3d", (1, 3, 4, 5, 4), (4, 3, 2, 2, 2), dict(stride=2), torch.channels_last_3d)


def test_conv_crossing_many_tiles():
    """M = 136 output channels and N = 2 * 20 * 20 columns cross the 128 x 128 tiles (and the
    64 x 64 ones); K = 18 * 9 crosses the k-slices; float64 takes the wide tile."""
    _conv_check("conv2d", (2, 18, 20, 20), (136, 18, 3, 3), dict(padding=1), tol=1e-4)
    _conv_check("conv2d", (1, 4, 9, 70), (66, 4, 3, 3), dict(padding=1), dtype=torch.float64)


def _err(actual, reference):
    return (actual.detach().cpu().double() - reference.detach().double()).abs().max().item()


def _ulp(t, dtype):
    """One ulp of `dtype` at t's largest magnitude."""
    return (torch.finfo(dtype).eps * t.detach().double().abs().max()).item()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16bit_results_are_as_accurate_as_the_cpu(dtype):
    """Where the CPU rounds 16-bit intermediates (transposed convolution, batch norm, 1-d linear
    upsampling) the generated tests opt out of comparing with it: foo computes in float and must be
    within one 16-bit ulp of the float64 result, and no worse than the CPU."""
    torch.manual_seed(3)
    x = torch.randn(2, 4, 5, 5) * 4
    w = torch.randn(4, 3, 3, 3)
    cases = [
        (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), (x, w)),
        (lambda x: F.batch_norm(x, None, None, training=True, eps=0.5), (x,)),
        (lambda x: F.batch_norm(x, None, None, training=True, eps=0.5), (x.contiguous(memory_format=torch.channels_last),)),
        (lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), (x.flatten(2),)),
    ]
    for fn, args in cases:
        ref = fn(*[a.double() for a in args])
        cpu = fn(*[a.to(dtype) for a in args])
        foo = _native(lambda: fn(*[a.to(dtype).to("foo") for a in args]))
        assert foo.dtype == dtype and foo.device.type == "foo"
        assert _err(foo, ref) <= max(_err(cpu, ref), 2 * _ulp(ref, dtype)), (_err(foo, ref), _err(cpu, ref))


# ---- upsampling ------------------------------------------------------------------------------


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_upsample_linear1d_matches_cpu(dtype, align_corners):
    torch.manual_seed(4)
    x = torch.randn(2, 3, 7, dtype=dtype, requires_grad=True)
    for kwargs in (dict(size=12), dict(scale_factor=0.6), dict(scale_factor=2.3)):
        y = F.interpolate(x, mode="linear", align_corners=align_corners, **kwargs)
        fx = _foo(x)
        fy = _native(lambda: F.interpolate(fx, mode="linear", align_corners=align_corners, **kwargs))
        _close(fy, y, rtol=1e-5, atol=1e-6)
        g = torch.randn_like(y)
        (gx,) = torch.autograd.grad(y, x, g)
        (fgx,) = _native(lambda: torch.autograd.grad(fy, fx, g.to("foo")))
        _close(fgx, gx, rtol=1e-5, atol=1e-6)


def test_pool_and_upsample_channels_last():
    torch.manual_seed(5)
    x = torch.randn(2, 5, 9, 8).contiguous(memory_format=torch.channels_last).requires_grad_()
    ops = [
        lambda t: F.max_pool2d(t, 3, 2, 1),
        lambda t: F.avg_pool2d(t, 2, ceil_mode=True, count_include_pad=False),
        lambda t: F.adaptive_avg_pool2d(t, (4, 3)),
        lambda t: F.adaptive_max_pool2d(t, (5, 2)),
        lambda t: F.interpolate(t, scale_factor=1.5, mode="nearest"),
        lambda t: F.interpolate(t, size=(13, 5), mode="bilinear"),
    ]
    for op in ops:
        y = op(x)
        fx = _foo(x)
        fy = _native(lambda: op(fx))
        assert fy.is_contiguous(memory_format=torch.channels_last)
        _close(fy, y, rtol=1e-5, atol=1e-5)
        g = torch.randn_like(y)
        (fgx,) = _native(lambda: torch.autograd.grad(fy, fx, g.to("foo")))
        _close(fgx, torch.autograd.grad(y, x, g)[0], rtol=1e-5, atol=1e-5)


# ---- norms over long rows --------------------------------------------------------------------


def test_layer_and_group_norm_long_rows():
    """Rows long enough for 256-thread blocks, and weight gradients summed over many rows."""
    torch.manual_seed(6)
    for fn, x, p in (
        (lambda x, w, b: F.layer_norm(x, (2500,), w, b), torch.randn(3, 2500) + 5, 2500),
        (lambda x, w, b: F.layer_norm(x, (40,), w, b), torch.randn(300, 40), 40),
        (lambda x, w, b: F.group_norm(x, 4, w, b), torch.randn(2, 8, 30, 20), 8),
    ):
        w, b = torch.randn(p, requires_grad=True), torch.randn(p, requires_grad=True)
        x.requires_grad_()
        y = fn(x, w, b)
        g = torch.randn_like(y)
        expected = torch.autograd.grad(y, (x, w, b), g)
        fx, fw, fb = _foo(x), _foo(w), _foo(b)
        fy = _native(lambda: fn(fx, fw, fb))
        _close(fy, y, rtol=1e-4, atol=1e-4)
        actual = _native(lambda: torch.autograd.grad(fy, (fx, fw, fb), g.to("foo")))
        for a, e in zip(actual, expected):
            _close(a, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_group_norm_backward_takes_mean_and_rstd_as_given(dtype):
    """native_group_norm_backward called directly: mean/rstd are inputs (here not the input's own
    statistics), any output_mask, no weight, groups of 1 and C, HxW = 1, a strided grad_out.
    The CPU reference gets grad_out contiguous (the CPU kernel reads a strided one as if it were)
    and a weight of ones for none (the CPU raises sizing grad_weight/grad_bias without one)."""
    torch.manual_seed(7)
    op = torch.ops.aten.native_group_norm_backward
    for (n, c, hxw, groups), has_weight, mask in (
        ((2, 6, 5, 3), True, [True, True, True]), ((3, 4, 1, 2), False, [True, False, True]),
        ((2, 6, 4, 1), True, [False, True, False]), ((2, 6, 4, 6), False, [True, False, False]),
    ):
        x, w = torch.randn(n, c, hxw, dtype=dtype), torch.randn(c, dtype=dtype) if has_weight else None
        mean, rstd = torch.randn(n, groups, dtype=dtype), torch.rand(n, groups, dtype=dtype) + 0.5
        grad_out = torch.randn(n, c, 2 * hxw, dtype=dtype)[..., ::2]
        shape = (n, c, hxw, groups, mask)
        expected = op(grad_out.contiguous(), x, mean, rstd, torch.ones(c, dtype=dtype) if w is None else w, *shape)
        actual = _native(lambda: op(_foo(grad_out), _foo(x), _foo(mean), _foo(rstd), None if w is None else _foo(w), *shape))
        for a, e, wanted in zip(actual, expected, mask):
            assert (a is not None) == wanted
            if wanted:
                assert a.device.type == "foo" and a.dtype == e.dtype
                _close(a, e, rtol=1e-5, atol=1e-5)


# ---- a CNN trained natively ------------------------------------------------------------------


class SmallCNN(nn.Module):
    # No bias before a BatchNorm (as in ResNets): batch norm cancels it, so its gradient is pure
    # rounding noise, which Adam's normalisation turns into lr-sized updates that differ anywhere.
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
        )
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def test_cnn_adamw_steps_native_and_match_cpu():
    torch.manual_seed(7)
    cpu_model = SmallCNN()
    foo_model = copy.deepcopy(cpu_model).to("foo")
    x, t = torch.randn(4, 3, 12, 12), torch.randint(0, 10, (4,))

    def train(model, x, t):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), t)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses

    cpu_losses = train(cpu_model, x, t)
    foo_losses = _native(lambda: train(foo_model, x.to("foo"), t.to("foo")))
    torch.testing.assert_close([l.cpu() for l in foo_losses], cpu_losses, rtol=1e-4, atol=1e-5)
    for (name, a), e in zip(foo_model.state_dict().items(), cpu_model.state_dict().values()):
        assert a.device.type == "foo", name
        torch.testing.assert_close(a.cpu(), e, rtol=1e-4, atol=1e-5, msg=lambda m, n=name: f"{n}: {m}")
    # Evaluation uses the running statistics the training steps left.
    cpu_model.eval(), foo_model.eval()
    with torch.no_grad():
        expected = cpu_model(x)
        actual = _native(lambda: foo_model(x.to("foo")))
    _close(actual, expected, rtol=1e-4, atol=1e-5)


# ---- bad input: clean Python errors, never a kernel reading out of bounds ------------------------


def test_bad_input_raises_cleanly():
    x, w = torch.randn(1, 4, 5, 5, device="foo"), torch.randn(6, 2, 3, 3, device="foo")
    conv = torch.ops.aten.convolution_overrideable
    with pytest.raises(RuntimeError, match="channels"):
        conv(x, w, None, [1], [0], [1], False, [0], 1)  # 4 channels, weight wants 2 per group, groups=1
    with pytest.raises(RuntimeError, match="bias"):
        conv(x, w, torch.randn(5, device="foo"), [1], [0], [1], False, [0], 2)
    with pytest.raises(RuntimeError, match="grad_output"):
        torch.ops.aten.convolution_backward_overrideable(
            torch.randn(1, 3, 4, 4, device="foo"), x, torch.randn(4, 4, 3, 3, device="foo"), [1], [0], [1], False, [0], 1,
            [True, True, False])
    with pytest.raises(NotImplementedError, match="Long|int64"):
        F.conv2d(x.long(), w.long(), groups=2)
    xr = torch.randn(3, 8, device="foo")
    with pytest.raises(RuntimeError, match="statistics"):
        torch.ops.aten.native_layer_norm_backward(xr, xr, [8], torch.zeros(2, device="foo"), torch.ones(3, device="foo"),
                                                  None, None, [True, False, False])
    with pytest.raises(RuntimeError, match="running_mean"):
        F.batch_norm(torch.randn(2, 3, device="foo"), torch.zeros(4, device="foo"), torch.ones(3, device="foo"))
    assert torch_foo.fallback_report() == {}
