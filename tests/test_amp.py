"""Mixed precision on foo: torch.autocast("foo") follows CUDA's policy (the op lists ATen's
autocast_mode.h exports), nested/disabled contexts, custom_fwd/custom_bwd, autocast inside
torch.compile(backend="aot_eager"), and torch.amp.GradScaler("foo") on the native
_amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_ kernels, checked against the
CPU's implementations of the same ops and a CPU autocast training loop."""

import pytest
import torch
import torch.nn.functional as F

import torch_foo

LOW = [torch.float16, torch.bfloat16]



def test_policy_is_cudas_op_for_op():
    names = torch._C._dispatch_get_all_op_names()
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    cuda = {n for n in names if has(n, "AutocastCUDA")}
    foo = {n for n in names if has(n, "AutocastPrivateUse1")}
    # CUDA's list but its cuDNN-only ops (torch 2.14 adds _cudnn_rnn)
    assert foo == cuda - {"aten::cudnn_convolution", "aten::cudnn_convolution_transpose", "aten::_cudnn_rnn"}
    assert {"aten::mm", "aten::softmax.int", "aten::layer_norm", "aten::mse_loss", "aten::addcmul"} <= foo


@pytest.mark.parametrize("low", LOW, ids=str)
def test_cast_policies(low, no_fallback):
    a, b = torch.randn(8, 8, device="foo"), torch.randn(8, 8, device="foo")
    h = a.to(low)
    with torch.autocast("foo", dtype=low):
        # lower_precision_fp: matmul-like ops run in the low dtype
        for out in (a @ b, torch.mm(a, b), F.linear(a, b), torch.addmm(a, a, b), torch.bmm(a[None], b[None]),
                    F.conv2d(a[None, None], b[None, None, :3, :3]), F.conv1d(a[None], b[:, :, None])):
            assert out.dtype == low and out.device.type == "foo"
        # fp32: 16-bit inputs are computed in float32
        for out in (torch.softmax(h, 1), torch.log_softmax(h, 1), torch.exp(h), torch.log(h.abs()), h.sum(),
                    h.sum(0), torch.rsqrt(h.abs()), torch.pow(h, 2.0), torch.cumsum(h, 0), F.layer_norm(h, (8,))):
            assert out.dtype == torch.float32
        # promote: mixed inputs go to the widest
        assert torch.addcmul(h, a, h).dtype == torch.float32
        # anything else falls through with its inputs' dtypes
        assert (h + h).dtype == low and torch.relu(h).dtype == low and (a * 2).dtype == torch.float32
        # nested: an inner context changes or disables it, the outer one comes back
        with torch.autocast("foo", enabled=False):
            assert (a @ b).dtype == torch.float32
        other = torch.bfloat16 if low == torch.float16 else torch.float16
        with torch.autocast("foo", dtype=other):
            assert (a @ b).dtype == other
        assert (a @ b).dtype == low
        assert torch.is_autocast_enabled("foo") and torch.get_autocast_dtype("foo") == low
    assert not torch.is_autocast_enabled("foo")
    assert (a @ b).dtype == torch.float32


def test_fp32_ops_that_fall_back_still_follow_the_policy():
    h = torch.randn(6, 5, device="foo").half()
    with torch.autocast("foo", dtype=torch.float16):
        assert F.mse_loss(h, h * 2).dtype == torch.float32  # no foo kernel: float32 inputs to the CPU fallback
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(torch.rand(3, device="foo"), torch.rand(3, device="foo"))


@pytest.mark.parametrize("low", LOW, ids=str)
def test_values_match_cpu_autocast(low):
    a, b = torch.randn(16, 24), torch.randn(24, 8)
    with torch.autocast("cpu", dtype=low):  # CPU autocast also runs matmul in the low dtype
        expected_y = a @ b
    with torch.autocast("foo", dtype=low):
        y = a.to("foo") @ b.to("foo")
        s = torch.softmax(y, 1)
    assert y.dtype == expected_y.dtype == low
    torch.testing.assert_close(y.cpu(), expected_y, rtol=1e-2, atol=1e-2)
    # softmax is float32 under CUDA's policy (the CPU's keeps it 16-bit): softmax of the 16-bit y
    assert s.dtype == torch.float32
    torch.testing.assert_close(s.cpu(), torch.softmax(y.cpu().float(), 1))


class ScaledMM(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="foo")
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @torch.amp.custom_bwd(device_type="foo")
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.t(), a.t() @ grad


class Float32MM(ScaledMM):
    @staticmethod
    @torch.amp.custom_fwd(device_type="foo", cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b


def test_custom_fwd_and_bwd():
    a = torch.randn(4, 3, device="foo", requires_grad=True)
    b = torch.randn(3, 5, device="foo", requires_grad=True)
    with torch.autocast("foo", dtype=torch.float16):
        y = ScaledMM.apply(a, b)  # autocast stays on inside forward
        z = Float32MM.apply(a.half(), b.half())  # inputs cast to float32, autocast off inside
    assert y.dtype == torch.float16 and z.dtype == torch.float32
    y.float().sum().backward()  # backward runs under the forward's autocast state
    assert a.grad.dtype == torch.float32 and a.grad.shape == (4, 3)
    torch.testing.assert_close(a.grad.cpu(), torch.ones(4, 5) @ b.detach().cpu().t(), rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(z.cpu(), a.detach().cpu() .half().float() @ b.detach().cpu().half().float())


def test_autocast_inside_compile_aot_eager():
    def f(a, b):
        with torch.autocast("foo", dtype=torch.float16):
            y = a @ b
            return y, torch.softmax(y, 1)

    compiled = torch.compile(f, backend="aot_eager")
    a = torch.randn(8, 8, device="foo", requires_grad=True)
    b = torch.randn(8, 8, device="foo")
    y, s = compiled(a, b)
    ey, es = f(a, b)
    assert y.dtype == torch.float16 and s.dtype == torch.float32 and y.device.type == "foo"
    assert torch.equal(y.cpu(), ey.cpu()) and torch.equal(s.cpu(), es.cpu())
    s.sum().backward()
    assert a.grad.dtype == torch.float32 and a.grad.device.type == "foo"


# ---- GradScaler's kernels, against the CPU's implementations of the same ops ----

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_unscale_kernel_matches_cpu(dtype, no_fallback):
    grads = [torch.randn(5, 7).to(dtype) * 1000, torch.randn(3, 9).to(dtype).t(), torch.randn(0).to(dtype)]
    for inv in (0.125, 1 / 3, 1.0):
        for poison in (None, float("inf"), float("nan")):
            cpu = [g.clone() for g in grads]
            if poison is not None:
                cpu[1][2, 1] = poison
            foo = [g.to("foo") for g in cpu]
            found_cpu, found_foo = torch.zeros(()), torch.zeros((), device="foo")
            inv_cpu = torch.tensor(inv, dtype=torch.float32)
            torch._amp_foreach_non_finite_check_and_unscale_(cpu, found_cpu, inv_cpu)
            torch._amp_foreach_non_finite_check_and_unscale_(foo, found_foo, inv_cpu.to("foo"))
            assert found_foo.item() == found_cpu.item() == (0.0 if poison is None else 1.0)
            for f, c in zip(foo, cpu):
                assert f.device.type == "foo" and f.dtype == c.dtype
                torch.testing.assert_close(f.cpu(), c, rtol=0, atol=0, equal_nan=True)
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(
            [torch.ones(2, device="foo")], torch.zeros((), dtype=torch.float64, device="foo"),
            torch.ones((), device="foo"))


def test_update_scale_kernel_matches_cpu(no_fallback):
    state = {}
    for device in ("cpu", "foo"):
        scale = torch.full((), 2.0**120, device=device)
        tracker = torch.zeros((), dtype=torch.int32, device=device)
        history = []
        for found in (0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0):
            torch._amp_update_scale_(scale, tracker, torch.full((), float(found), device=device), 2.0**4, 0.5, 3)
            history.append((scale.item(), tracker.item()))
        state[device] = history
    assert state["foo"] == state["cpu"]
    assert max(s for s, _ in state["foo"]) < float("inf")  # never grows past float32's range
    assert state["foo"][2] == (2.0**119, 0)  # backoff after an overflow


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def train(device, steps, poison_steps, low):
    """An autocast + GradScaler loop; returns (model, [(scale, skipped)])."""
    torch.manual_seed(0)
    xs, ys = torch.randn(steps, 16, 12), torch.randn(steps, 16, 4)
    model = make_model(1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler(device, init_scale=2.0**10, growth_interval=2)
    history = []
    for step in range(steps):
        opt.zero_grad()
        with torch.autocast(device, dtype=low):
            out = model(xs[step].to(device))
            loss = F.mse_loss(out, ys[step].to(device))
        assert out.dtype == low and loss.dtype == torch.float32
        scaler.scale(loss).backward()
        if step in poison_steps:
            model[0].weight.grad[0, 0] = float("inf")
        before = [p.detach().clone() for p in model.parameters()]
        scaler.step(opt)
        scaler.update()
        skipped = all(torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))
        history.append((scaler.get_scale(), skipped))
    return model, history


@pytest.mark.parametrize("low", LOW, ids=str)
def test_gradscaler_training_loop_matches_cpu(low):
    foo_model, foo_history = train("foo", 8, {3}, low)
    cpu_model, cpu_history = train("cpu", 8, {3}, low)
    # the same steps skipped and the same scale schedule: x2 every 2 good steps, /2 on overflow
    assert foo_history == cpu_history
    assert [s for s, _ in foo_history] == [1024.0, 2048.0, 2048.0, 1024.0, 1024.0, 2048.0, 2048.0, 4096.0]
    assert [k for _, k in foo_history] == [False, False, False, True, False, False, False, False]
    for p_foo, p_cpu in zip(foo_model.parameters(), cpu_model.parameters()):
        assert p_foo.device.type == "foo" and p_foo.dtype == torch.float32
        torch.testing.assert_close(p_foo.detach().cpu(), p_cpu.detach(), rtol=2e-2, atol=2e-3)
