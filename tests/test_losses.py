"""Losses beyond what the generated OpInfo tests say: 16-bit accuracy against float64, the CPU's
errors for bad inputs, and the losses that decompose (cross_entropy with label smoothing and
ignore_index, binary_cross_entropy_with_logits with pos_weight, kl_div) running natively."""

import pytest
import torch
import torch.nn.functional as F

import torch_foo
from conftest import foo_kernels_only


def _native(fn):
    with foo_kernels_only():
        return fn()


def _forward_backward(loss_fn, *tensors):
    """loss and the gradients of every floating input, on the tensors' device."""
    leaves = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in tensors]
    loss = loss_fn(*leaves)
    grads = torch.autograd.grad(loss, [t for t in leaves if t.requires_grad])
    return [loss.detach(), *grads]


def _check_native(loss_fn, *tensors, rtol=1e-5, atol=1e-6):
    expected = _forward_backward(loss_fn, *tensors)
    actual = _native(lambda: _forward_backward(loss_fn, *[t.to("foo") for t in tensors]))
    assert torch_foo.fallback_report() == {}
    for a, e in zip(actual, expected):
        assert a.device.type == "foo" and a.dtype == e.dtype
        torch.testing.assert_close(a.cpu(), e, rtol=rtol, atol=atol)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_label_smoothing_ignore_index(reduction, weighted):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(12, 5, generator=g)
    target = torch.randint(0, 5, (12,), generator=g)
    target[[2, 7]] = -100
    weight = torch.rand(5, generator=g) + 0.5 if weighted else None
    needs = ["aten::gather.out", "aten::masked_select"]
    if weighted and reduction == "mean" and not all(
        torch._C._dispatch_has_kernel_for_dispatch_key(op, "PrivateUse1") for op in needs
    ):
        pytest.skip("the weighted mean divides by weight.gather(0, target.masked_select(...)): wip/index")
    def loss(x):
        w = weight.to(x.device) if weight is not None else None
        return F.cross_entropy(x, target.to(x.device), weight=w, ignore_index=-100, label_smoothing=0.1,
                               reduction=reduction).sum()
    _check_native(loss, logits)


def test_bce_with_logits_pos_weight_and_kl_div():
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(6, 4, generator=g), torch.rand(6, 4, generator=g)
    pos = torch.rand(4, generator=g) + 0.5
    _check_native(lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=pos.to(a.device)), x, y)
    logp = F.log_softmax(torch.randn(6, 4, generator=g), dim=1)
    _check_native(lambda a, b: F.kl_div(a, b, reduction="batchmean"), logp, y)
    _check_native(lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), logp, y.log())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16bit_bce_as_accurate_as_the_cpu(dtype):
    g = torch.Generator().manual_seed(2)
    x = torch.rand(4096, generator=g).clamp(0.01, 0.99).to(dtype)
    y = torch.rand(4096, generator=g).to(dtype)
    exact = F.binary_cross_entropy(x.double(), y.double(), reduction="none")
    foo = _native(lambda: F.binary_cross_entropy(x.to("foo"), y.to("foo"), reduction="none")).cpu()
    cpu = F.binary_cross_entropy(x, y, reduction="none")
    ulp = torch.finfo(dtype).eps * exact.abs().clamp_min(torch.finfo(dtype).tiny)
    foo_err = ((foo.double() - exact).abs() / ulp).max()
    cpu_err = ((cpu.double() - exact).abs() / ulp).max()
    assert foo_err <= 1.0 and foo_err <= cpu_err, (foo_err, cpu_err)


def test_bce_bad_input_raises_the_cpu_error():
    x = torch.tensor([0.2, 1.5], device="foo")
    y = torch.tensor([0.0, 1.0], device="foo")
    # Checked on the device: raised at the next synchronisation (test_device_errors.py).
    F.binary_cross_entropy(x, y)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        torch.foo.synchronize()
    F.binary_cross_entropy(y, torch.tensor([0.5, -1.0], device="foo"))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        torch.foo.synchronize()
    loss = F.binary_cross_entropy(torch.tensor([float("nan")], device="foo"), torch.tensor([0.5], device="foo"))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        loss.item()


def test_loss_parameter_errors():
    a = torch.randn(3, device="foo")
    with pytest.raises(RuntimeError, match="negative values for beta"):
        torch.ops.aten.smooth_l1_loss(a, a, 1, -1.0)
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(a, a, delta=0.0)
    with pytest.raises(NotImplementedError, match="mse_loss"):
        torch.ops.aten.mse_loss(a.long(), a.long())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_native_dropout_backward_matches_cpu(dtype):
    g = torch.Generator().manual_seed(3)
    grad = torch.randn(33, 17, generator=g).to(dtype)
    mask = torch.rand(33, 17, generator=g) > 0.3
    expected = torch.ops.aten.native_dropout_backward(grad, mask, 1 / 0.7)
    actual = _native(lambda: torch.ops.aten.native_dropout_backward(grad.to("foo"), mask.to("foo"), 1 / 0.7))
    assert actual.device.type == "foo" and actual.dtype == dtype
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_weights_and_reductions(p, reduction):
    g = torch.Generator().manual_seed(p)
    x, target = torch.randn(6, 5, generator=g), torch.randint(0, 5, (6,), generator=g)
    weight = torch.rand(5, generator=g) + 0.5
    for w in (None, weight):
        _check_native(lambda a, t, w=w: F.multi_margin_loss(a, t, p=p, margin=0.7, weight=w.to(a.device) if w is not None else None,
                                                               reduction=reduction).sum(), x, target)


def test_multi_margin_loss_target_out_of_range_raises_the_cpu_error():
    x, target = torch.randn(3, 4), torch.tensor([0, 4, 1])
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, target)
    loss = F.multi_margin_loss(x.to("foo"), target.to("foo"))  # checked on the device: raised at the next wait
    with pytest.raises(RuntimeError, match="target out of range"):
        loss.item()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_rows_ending_early(reduction):
    # Rows of target classes end at the first -1 (row 1 has none); a 1-d input is one sample.
    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    target = torch.tensor([[3, 0, -1, 1, 4], [-1, 2, 2, 2, 2], [4, 3, 2, 1, 0]])
    _check_native(lambda a, t: F.multilabel_margin_loss(a, t, reduction=reduction).sum(), x, target)
    _check_native(lambda a, t: F.multilabel_margin_loss(a, t, reduction=reduction).sum(), x[0], target[0])


def test_multilabel_margin_loss_target_out_of_range_raises_the_cpu_error():
    x, target = torch.randn(2, 3), torch.tensor([[0, 3, -1], [1, -1, 0]])
    with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
        F.multilabel_margin_loss(x, target)
    F.multilabel_margin_loss(x.to("foo"), target.to("foo"))  # checked on the device: raised at the next wait
    with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
        torch.foo.synchronize()
