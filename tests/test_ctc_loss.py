"""F.ctc_loss / nn.CTCLoss on foo (csrc/aten/ops/ctc_loss.cpp, kernels/ops/ctc_loss.cu) against the CPU,
with the fallback forbidden: what the OpInfo's samples (padded int64 targets, full input lengths)
do not reach -- concatenated 1-D targets, int32 targets, varied input lengths, empty targets and
inputs, another blank index, impossible alignments with zero_infinity on and off, the raw aten
results (neg_log_likelihood and log_alpha), errors, and host synchronisation."""

import re
import warnings

import pytest
import torch
import torch.nn.functional as F

from conftest import foo_kernels_only

FLOATS = [torch.float32, torch.float64]


def _foo(t):
    return t.to("foo") if isinstance(t, torch.Tensor) else t


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else {}


def _problem(T=14, N=5, C=7, S=6, blank=0, seed=0, impossible=False, dtype=torch.float32):
    """log_probs (T, N, C); padded targets (N, S) without the blank; varied lengths: one full
    input, one empty target, one target as long as S, and (impossible) one target longer than
    its input can emit (a repeated label needs a blank between, so 3 repeats need 5 steps)."""
    g = torch.Generator().manual_seed(seed)
    log_probs = torch.randn(T, N, C, generator=g, dtype=torch.float64).log_softmax(2).to(dtype)
    labels = [c for c in range(C) if c != blank]
    targets = torch.tensor(labels)[torch.randint(0, len(labels), (N, S), generator=g)]
    input_lengths = [T] + [int(x) for x in torch.randint(S + 2, T + 1, (N - 1,), generator=g)]
    target_lengths = [S, 0] + [int(x) for x in torch.randint(1, S + 1, (N - 2,), generator=g)]
    if impossible:
        targets[2, :3] = targets[2, 0]
        input_lengths[2], target_lengths[2] = 4, 3
    return log_probs, targets, input_lengths, target_lengths


def _concatenated(targets, target_lengths):
    return torch.cat([targets[b, :n] for b, n in enumerate(target_lengths)])


def _valid_alpha(log_alpha, input_lengths, target_lengths):
    """The entries of log_alpha the CPU writes (it leaves the others uninitialised)."""
    return torch.cat([log_alpha[b, :il, : 2 * tl + 1].flatten()
                      for b, (il, tl) in enumerate(zip(input_lengths, target_lengths))])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("target_dtype", [torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("blank", [0, 3])
def test_aten_results_match_cpu(dtype, target_dtype, layout, blank):
    log_probs, targets, il, tl = _problem(blank=blank, dtype=dtype)
    if layout == "concatenated":
        targets = _concatenated(targets, tl)
    targets = targets.to(target_dtype)
    nll, log_alpha = torch._ctc_loss(log_probs, targets, il, tl, blank)
    with foo_kernels_only():
        f_nll, f_alpha = torch._ctc_loss(_foo(log_probs), _foo(targets), il, tl, blank)
    assert f_nll.device.type == "foo" and f_nll.dtype == dtype and f_nll.shape == nll.shape
    assert f_alpha.device.type == "foo" and f_alpha.dtype == dtype and f_alpha.shape == log_alpha.shape
    torch.testing.assert_close(f_nll.cpu(), nll, **_tol(dtype))
    torch.testing.assert_close(_valid_alpha(f_alpha.cpu(), il, tl), _valid_alpha(log_alpha, il, tl), **_tol(dtype))
    # Everything else is -inf on foo (CUDA's convention).
    rest = torch.ones_like(log_alpha, dtype=torch.bool)
    for b, (i, t) in enumerate(zip(il, tl)):
        rest[b, :i, : 2 * t + 1] = False
    assert (f_alpha.cpu()[rest] == float("-inf")).all()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("lengths_as", ["lists", "tensors"])
def test_loss_and_gradient_match_cpu(dtype, layout, reduction, zero_infinity, lengths_as):
    log_probs, targets, il, tl = _problem(blank=2, impossible=True, dtype=dtype)
    if layout == "concatenated":
        targets = _concatenated(targets, tl)
    lengths = (il, tl) if lengths_as == "lists" else (torch.tensor(il), torch.tensor(tl))
    x = log_probs.clone().requires_grad_()
    loss = F.ctc_loss(x, targets, *lengths, blank=2, reduction=reduction, zero_infinity=zero_infinity)
    grad_out = torch.randn(loss.shape, dtype=dtype)
    (expected,) = torch.autograd.grad(loss, x, grad_out)
    fx = _foo(log_probs).requires_grad_()
    with foo_kernels_only():
        f_loss = F.ctc_loss(fx, _foo(targets), *map(_foo, lengths), blank=2, reduction=reduction,
                            zero_infinity=zero_infinity)
        (actual,) = torch.autograd.grad(f_loss, fx, _foo(grad_out))
    assert f_loss.device.type == "foo" and actual.device.type == "foo"
    torch.testing.assert_close(f_loss.cpu(), loss, **_tol(dtype))
    # Without zero_infinity the impossible element's loss is inf and its gradient NaN, as the CPU's.
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **_tol(dtype))
    if zero_infinity:
        assert torch.isfinite(actual.cpu()).all() and (actual.cpu()[:, 2] == 0).all()


def test_empty_inputs_and_targets():
    """An element with no time steps: loss 0 for an empty target, inf otherwise."""
    log_probs = torch.randn(6, 3, 4).log_softmax(2)
    targets = torch.tensor([[1, 2], [1, 1], [3, 1]])
    for il, tl in (([0, 6, 0], [0, 2, 1]), ([6, 0, 3], [2, 0, 0])):
        expected = torch._ctc_loss(log_probs, targets, il, tl)
        with foo_kernels_only():
            actual = torch._ctc_loss(_foo(log_probs), _foo(targets), il, tl)
        torch.testing.assert_close(actual[0].cpu(), expected[0])
    # No time steps at all: the CPU refuses, and so does foo.
    empty = torch.randn(0, 2, 4).log_softmax(2)
    with pytest.raises(RuntimeError, match="log_probs tensor must not be empty"):
        torch._ctc_loss(empty, targets[:2], [0, 0], [0, 1])
    with foo_kernels_only(), pytest.raises(RuntimeError, match="log_probs tensor must not be empty"):
        torch._ctc_loss(_foo(empty), _foo(targets[:2]), [0, 0], [0, 1])


def test_noncontiguous_log_probs_and_batch_first_view():
    log_probs, targets, il, tl = _problem(N=4)
    batch_first = log_probs.transpose(0, 1).contiguous()  # (N, T, C) storage, a (T, N, C) view
    x = batch_first.transpose(0, 1).requires_grad_()
    loss = F.ctc_loss(x, targets, il, tl, reduction="sum")
    (expected,) = torch.autograd.grad(loss, x)
    fx = _foo(batch_first).transpose(0, 1).requires_grad_()
    with foo_kernels_only():
        f_loss = F.ctc_loss(fx, _foo(targets[:, ::1]), il, tl, reduction="sum")
        (actual,) = torch.autograd.grad(f_loss, fx)
    torch.testing.assert_close(f_loss.cpu(), loss, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-5, atol=1e-5)


def test_strided_concatenated_targets_read_as_their_values():
    """A non-contiguous 1-D targets view: foo reads element b's targets at offset * stride, i.e.
    the values the view holds. The CPU adds the unscaled offset to the view's data pointer and so
    reads other elements; foo matches the CPU on a contiguous copy."""
    log_probs, targets, il, tl = _problem(N=4)
    flat = _concatenated(targets, tl)
    spread = torch.zeros(2 * flat.numel(), dtype=flat.dtype)
    spread[::2] = flat
    expected = torch._ctc_loss(log_probs, spread[::2].contiguous(), il, tl)
    with foo_kernels_only():
        actual = torch._ctc_loss(_foo(log_probs), _foo(spread)[::2], il, tl)
    torch.testing.assert_close(actual[0].cpu(), expected[0], rtol=1e-5, atol=1e-5)


def test_more_positions_and_labels_than_threads():
    """2 * 150 + 1 extended positions and 260 labels: each thread of a block (256) takes several
    positions of a row and several (t, label) pairs of the gradient."""
    log_probs, targets, il, tl = _problem(T=310, N=3, C=260, S=150, seed=4)
    x = log_probs.clone().requires_grad_()
    loss = F.ctc_loss(x, targets, il, tl, reduction="sum")
    (expected,) = torch.autograd.grad(loss, x)
    fx = _foo(log_probs).requires_grad_()
    with foo_kernels_only():
        f_loss = F.ctc_loss(fx, _foo(targets), il, tl, reduction="sum")
        (actual,) = torch.autograd.grad(f_loss, fx)
    torch.testing.assert_close(f_loss.cpu(), loss, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-5, atol=1e-5)


def test_unbatched_input():
    log_probs = torch.randn(9, 5).log_softmax(1)
    target = torch.tensor([1, 3, 3, 2])
    x = log_probs.clone().requires_grad_()
    loss = F.ctc_loss(x, target, torch.tensor(9), torch.tensor(4))
    loss.backward()
    fx = _foo(log_probs).requires_grad_()
    with foo_kernels_only():
        f_loss = F.ctc_loss(fx, _foo(target), _foo(torch.tensor(9)), _foo(torch.tensor(4)))
        f_loss.backward()
    torch.testing.assert_close(f_loss.cpu(), loss, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fx.grad.cpu(), x.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_gradcheck_float64(layout):
    """Through log_softmax, as the OpInfo: the CPU's gradient formula (and so foo's) assumes
    normalised log_probs (the gradient of exp(lp) sums to one over the labels)."""
    log_probs, targets, il, tl = _problem(T=6, N=3, C=4, S=2, dtype=torch.float64)
    if layout == "concatenated":
        targets = _concatenated(targets, tl)
    ft = _foo(targets)
    with foo_kernels_only():
        assert torch.autograd.gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), ft, il, tl, reduction="none"),
                                        (_foo(torch.randn(6, 3, 4, dtype=torch.float64)).requires_grad_(),))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_tensor_length_overloads_match_cpu(dtype):
    """_ctc_loss.Tensor and _ctc_loss_backward.Tensor (what a tensor subclass or a dispatch mode
    reaches; plain F.ctc_loss turns length tensors into lists first) with foo length tensors."""
    log_probs, targets, il, tl = _problem(impossible=True, dtype=dtype)
    x = log_probs.clone().requires_grad_()
    nll, _ = torch._ctc_loss(x, targets, torch.tensor(il), torch.tensor(tl), 0, True)
    grad_out = torch.randn(nll.shape, dtype=dtype)
    (expected,) = torch.autograd.grad(nll, x, grad_out)
    fx = _foo(log_probs).requires_grad_()
    with foo_kernels_only():
        f_nll, _ = torch._ctc_loss(fx, _foo(targets), _foo(torch.tensor(il)), _foo(torch.tensor(tl)), 0, True)
        (actual,) = torch.autograd.grad(f_nll, fx, _foo(grad_out))
    torch.testing.assert_close(f_nll.cpu(), nll, **_tol(dtype))
    torch.testing.assert_close(actual.cpu(), expected, **_tol(dtype))


def test_a_ctc_model_trains_natively():
    torch.manual_seed(3)
    cpu = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 6))
    foo = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 6))
    foo.load_state_dict(cpu.state_dict())
    foo = foo.to("foo")
    feats = torch.randn(12, 4, 8)
    targets = torch.randint(1, 6, (4, 5))
    il, tl = torch.tensor([12, 11, 9, 12]), torch.tensor([5, 3, 4, 2])
    ctc = torch.nn.CTCLoss(zero_infinity=True)
    for model, dev in ((cpu, "cpu"), (foo, "foo")):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            with foo_kernels_only():
                out = model(feats.to(dev)).log_softmax(2)
                ctc(out, targets.to(dev), il.to(dev), tl.to(dev)).backward()
            opt.step()
    for (name, a), (_, b) in zip(cpu.state_dict().items(), foo.state_dict().items()):
        torch.testing.assert_close(b.cpu(), a, rtol=1e-5, atol=1e-5, msg=name)


@pytest.mark.parametrize("bad", ["2d_log_probs", "3d_targets", "blank", "input_lengths_size", "input_too_long",
                                 "negative_target_length", "padded_too_short", "concatenated_size",
                                 "float_targets", "half_log_probs"])
def test_bad_arguments_raise_the_cpus_errors(bad):
    log_probs, targets, il, tl = _problem(T=8, N=3, C=5, S=3)
    blank = 0
    if bad == "2d_log_probs":
        log_probs = log_probs[0]
    elif bad == "3d_targets":
        targets = targets[None]
    elif bad == "blank":
        blank = 5
    elif bad == "input_lengths_size":
        il = il[:2]
    elif bad == "input_too_long":
        il = [9] + il[1:]
    elif bad == "negative_target_length":
        tl = [-1] + tl[1:]
    elif bad == "padded_too_short":
        targets = targets[:, :2]
    elif bad == "concatenated_size":
        targets = _concatenated(targets, tl)[1:]
    elif bad == "float_targets":
        targets = targets.float()
    else:
        log_probs = log_probs.half()
    with pytest.raises((RuntimeError, NotImplementedError)) as cpu_error:
        torch._ctc_loss(log_probs, targets, il, tl, blank)
    with foo_kernels_only(), pytest.raises(type(cpu_error.value)) as foo_error:
        torch._ctc_loss(_foo(log_probs), _foo(targets), il, tl, blank)
    if bad == "half_log_probs":  # foo's dtype wording (kernel_dtype.h)
        assert "\"ctc_loss\" not implemented for 'Half'" in str(foo_error.value)
        return
    first_line = lambda e: re.sub(r"got \S+ instead", "got <type> instead", str(e.value).split("\n")[0])  # noqa: E731
    assert first_line(foo_error) == first_line(cpu_error)


def test_no_host_synchronisation_with_host_lengths():
    """Lengths as lists or CPU tensors live on the host: forward and backward, every reduction,
    never wait for the device. Length tensors on foo are read back first (ATen's composite
    ctc_loss copies them to the host, as for CUDA): a synchronisation."""
    log_probs, targets, il, tl = _problem(impossible=True)
    fx, ft = _foo(log_probs).requires_grad_(), _foo(targets)
    torch.foo.synchronize()
    try:
        torch.foo.set_sync_debug_mode("error")
        with foo_kernels_only():
            for lengths in ((il, tl), (torch.tensor(il), torch.tensor(tl))):
                for reduction in ("none", "mean", "sum"):
                    loss = F.ctc_loss(fx, ft, *lengths, reduction=reduction, zero_infinity=True)
                    torch.autograd.grad(loss.sum(), fx)
        torch.foo.set_sync_debug_mode("warn")
        with foo_kernels_only(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            F.ctc_loss(fx, ft, _foo(torch.tensor(il)), _foo(torch.tensor(tl)))
        assert any("synchronizing" in str(w.message) for w in caught)
    finally:
        torch.foo.set_sync_debug_mode("default")


def test_on_the_second_device(two_devices):
    log_probs, targets, il, tl = _problem(N=3)
    x = log_probs.clone().requires_grad_()
    loss = F.ctc_loss(x, targets, il, tl)
    (expected,) = torch.autograd.grad(loss, x)
    fx = log_probs.to("foo:1").requires_grad_()
    with foo_kernels_only():
        f_loss = F.ctc_loss(fx, targets.to("foo:1"), torch.tensor(il), torch.tensor(tl))
        (actual,) = torch.autograd.grad(f_loss, fx)
    assert f_loss.device == torch.device("foo:1") and actual.device == torch.device("foo:1")
    torch.testing.assert_close(f_loss.cpu(), loss, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-5, atol=1e-5)
