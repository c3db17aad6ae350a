"""Multi-tensor (_foreach_*) and fused optimizer kernels against the CPU.

Every _foreach_* / _fused_* manifest entry is compared with the CPU on a list of tensors of mixed
sizes (an empty one, one spanning several kernel chunks), with nothing falling back; one launch
covers a whole list; torch.optim's Adam, AdamW and SGD (foreach=True and fused=True), Adagrad (fused=True) and
clip_grad_norm_ take 5 steps on foo and on the CPU from the same weights.
"""

import copy

import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import torch_foo
from conftest import foo_kernels_only, needs_kineto_device_kernels

SIZES = [(3, 5), (0,), (4099,), (7,), (2, 3, 4)]  # 4099: more than one 4096-element chunk


def _lists(n, dtype=torch.float32, positive=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        ts = [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in SIZES]
        out.append([t.abs() + 0.5 if positive else t for t in ts])
    return out


def _to_foo(lists):
    return [[t.to("foo") for t in ts] for ts in lists]


def _check(foo_result, cpu_result, dtype):
    # bfloat16: a sum that cancels may differ by one unit of its inputs' last place (7.8e-3 at 1).
    tol = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12), torch.bfloat16: (1.6e-2, 8e-3)}[dtype]
    kw = dict(rtol=tol[0], atol=tol[1])
    assert len(foo_result) == len(cpu_result)
    for a, b in zip(foo_result, cpu_result):
        assert a.device.type == "foo" and a.dtype == b.dtype and a.shape == b.shape
        torch.testing.assert_close(a.cpu(), b, **kw)


# name, number of lists, call(lists) -> result list (in-place ops return their first list)
CASES = {
    "add_.Scalar": (1, lambda l: (torch._foreach_add_(l[0], 0.25), l[0])[1]),
    "add.Scalar": (1, lambda l: torch._foreach_add(l[0], -1.5)),
    "add_.List": (2, lambda l: (torch._foreach_add_(l[0], l[1], alpha=0.3), l[0])[1]),
    "add.List": (2, lambda l: torch._foreach_add(l[0], l[1], alpha=2)),
    "sub_.Scalar": (1, lambda l: (torch._foreach_sub_(l[0], 0.75), l[0])[1]),
    "sub_.List": (2, lambda l: (torch._foreach_sub_(l[0], l[1], alpha=0.5), l[0])[1]),
    "mul_.Scalar": (1, lambda l: (torch._foreach_mul_(l[0], 0.9), l[0])[1]),
    "mul.Scalar": (1, lambda l: torch._foreach_mul(l[0], -3.0)),
    "mul_.List": (2, lambda l: (torch._foreach_mul_(l[0], l[1]), l[0])[1]),
    "mul_.Tensor": (1, lambda l: (torch._foreach_mul_(l[0], torch.tensor(0.37, device=l[0][0].device)), l[0])[1]),
    "div_.Scalar": (1, lambda l: (torch._foreach_div_(l[0], 3.0), l[0])[1]),
    "div_.ScalarList": (1, lambda l: (torch._foreach_div_(l[0], [1.5, 2.0, -0.5, 3.0, 7.0]), l[0])[1]),
    "div_.List": (2, lambda l: (torch._foreach_div_(l[0], l[1]), l[0])[1]),
    "sqrt": (1, lambda l: torch._foreach_sqrt(l[0])),
    "sqrt_": (1, lambda l: (torch._foreach_sqrt_(l[0]), l[0])[1]),
    "neg": (1, lambda l: torch._foreach_neg(l[0])),
    "zero_": (1, lambda l: (torch._foreach_zero_(l[0]), l[0])[1]),
    "lerp_.Scalar": (2, lambda l: (torch._foreach_lerp_(l[0], l[1], 0.1), l[0])[1]),
    "addcmul_.Scalar": (3, lambda l: (torch._foreach_addcmul_(l[0], l[1], l[2], 0.01), l[0])[1]),
    "addcdiv_.Scalar": (3, lambda l: (torch._foreach_addcdiv_(l[0], l[1], l[2], -0.2), l[0])[1]),
    "addcdiv_.ScalarList": (3, lambda l: (torch._foreach_addcdiv_(l[0], l[1], l[2], [0.1, 1.0, -2.0, 0.5, 3.0]), l[0])[1]),
    "maximum_.List": (2, lambda l: (torch._foreach_maximum_(l[0], l[1]), l[0])[1]),
    "norm.Scalar-2": (1, lambda l: torch._foreach_norm(l[0])),
    "norm.Scalar-1": (1, lambda l: torch._foreach_norm(l[0], 1)),
    # The CPU refuses the infinity norm of an empty tensor (no identity): the empty one is left out.
    "norm.Scalar-inf": (1, lambda l: torch._foreach_norm([t for t in l[0] if t.numel()], float("inf"))),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("name", list(CASES))
def test_foreach_op_matches_cpu_without_fallback(name, dtype):
    n, call = CASES[name]
    positive = name.startswith(("sqrt", "div_.List", "addcdiv"))
    cpu_lists = _lists(n, dtype, positive)
    foo_lists = _to_foo(cpu_lists)
    expected = call(cpu_lists)
    with foo_kernels_only():
        actual = call(foo_lists)
    _check(actual, expected, dtype)


@needs_kineto_device_kernels()
def test_one_launch_covers_the_list():
    tensors = [torch.randn(s, device="foo") for s in [(5,), (4099,), (3, 3), (0,), (9000,)]]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        torch._foreach_mul_(tensors, 2.0)
        torch._foreach_norm(tensors)
        torch.foo.synchronize()
    names = [e.name for e in prof.events() if e.device_type == DeviceType.PrivateUse1]
    assert names.count("foreach_pointwise") == 1, names
    assert names.count("foreach_norm_partials") == 1, names


def test_slow_route_for_mixed_dtypes_and_strides():
    a = [torch.randn(4, 6), torch.randn(6, 4).t(), torch.randn(3).double()]
    b = [torch.randn(4, 6), torch.randn(4, 6), torch.randn(3).double()]
    fa, fb = [t.to("foo") for t in a], [t.to("foo") for t in b]
    expected = torch._foreach_add(a, b, alpha=0.5)
    with foo_kernels_only():
        actual = torch._foreach_add(fa, fb, alpha=0.5)
    _check(actual, expected, torch.float32)


def test_infinity_norm_of_an_empty_tensor_is_an_error():
    with pytest.raises(RuntimeError, match="infinity norm on an empty tensor"):
        torch._foreach_norm([torch.ones(3, device="foo"), torch.ones(0, device="foo")], float("inf"))


def test_list_length_mismatch_is_an_error():
    a = [torch.randn(3, device="foo")] * 2
    with pytest.raises(RuntimeError, match="same number of tensors"):
        torch._foreach_add_(a, a[:1])


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def _steps(model, opt_factory, device, clip=None):
    model = copy.deepcopy(model).to(device)
    opt = opt_factory(model.parameters())
    x = torch.randn(8, 6, generator=torch.Generator().manual_seed(1)).to(device)
    y = torch.randn(8, 3, generator=torch.Generator().manual_seed(2)).to(device)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip, foreach=True)
        opt.step()
        losses.append(loss.detach().cpu())
    return losses, [p.detach().cpu() for p in model.parameters()]


OPTIMIZERS = {
    "adamw-foreach": lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1, foreach=True),
    "adamw-foreach-amsgrad-maximize": lambda p: torch.optim.AdamW(p, lr=1e-2, amsgrad=True, maximize=True, foreach=True),
    "adam-foreach-wd": lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=0.05, foreach=True),
    "adamw-fused": lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1, fused=True),
    "adam-fused-amsgrad": lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True, fused=True),
    "sgd-foreach-momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=0.01, foreach=True),
    "sgd-foreach-nesterov": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, foreach=True),
    "sgd-foreach-plain": lambda p: torch.optim.SGD(p, lr=0.1, foreach=True),
    "sgd-fused-momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01, fused=True),
    "sgd-fused-nesterov-maximize": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, maximize=True, fused=True),
    "sgd-fused-plain": lambda p: torch.optim.SGD(p, lr=0.1, fused=True),
    "adagrad-fused": lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.05, fused=True),
    "adagrad-fused-maximize": lambda p: torch.optim.Adagrad(p, lr=0.1, initial_accumulator_value=0.2, maximize=True, fused=True),
}


@pytest.mark.parametrize("clip", [None, 0.5])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_five_steps_match_cpu(name, clip):
    if clip is not None and name not in ("adamw-foreach", "sgd-foreach-momentum"):
        pytest.skip("clipping is checked with two optimizers")
    model = _model()
    cpu_losses, cpu_params = _steps(model, OPTIMIZERS[name], "cpu", clip)
    with foo_kernels_only():
        foo_losses, foo_params = _steps(model, OPTIMIZERS[name], "foo", clip)
    torch.testing.assert_close(torch.stack(foo_losses), torch.stack(cpu_losses), rtol=1e-5, atol=1e-6)
    for a, b in zip(foo_params, cpu_params):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_fused_adam_grad_scale_and_found_inf():
    params = [torch.randn(10), torch.randn(4097)]
    grads = [torch.randn_like(p) * 4 for p in params]
    def run(device, found):
        ps = [p.clone().to(device) for p in params]
        gs = [g.clone().to(device) for g in grads]
        m = [torch.zeros_like(p) for p in ps]
        v = [torch.zeros_like(p) for p in ps]
        steps = [torch.ones((), device=device) for _ in ps]
        torch._fused_adamw_(ps, gs, m, v, [], steps, lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.1,
                            eps=1e-8, amsgrad=False, maximize=False,
                            grad_scale=torch.tensor(4.0, device=device), found_inf=torch.tensor(found, device=device))
        return [t.cpu() for t in ps + gs + m + v]
    for found in (0.0, 1.0):
        for a, b in zip(run("foo", found), run("cpu", found)):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["sgd", "adagrad"])
def test_fused_sgd_adagrad_grad_scale_and_found_inf(op):
    params = [torch.randn(10), torch.randn(4097)]
    grads = [torch.randn_like(p) * 4 for p in params]
    def run(device, found):
        ps = [p.clone().to(device) for p in params]
        gs = [g.clone().to(device) for g in grads]
        state = [torch.full_like(p, 0.5) for p in ps]
        scale = dict(grad_scale=torch.tensor(4.0, device=device), found_inf=torch.tensor(found, device=device))
        if op == "sgd":
            torch._fused_sgd_(ps, gs, state, weight_decay=0.1, momentum=0.9, lr=0.01, dampening=0.0, nesterov=True,
                              maximize=False, is_first_step=False, **scale)
        else:
            steps = [torch.full((), 3.0, device=device) for _ in ps]
            torch._fused_adagrad_(ps, gs, state, steps, lr=0.01, lr_decay=0.1, weight_decay=0.1, eps=1e-10,
                                  maximize=False, **scale)
        return [t.cpu() for t in ps + gs + state]
    with foo_kernels_only():
        for found in (0.0, 1.0):
            for a, b in zip(run("foo", found), run("cpu", found)):
                torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_fused_adam_rejects_integer_params():
    p = [torch.ones(3, dtype=torch.int32, device="foo")]
    with pytest.raises(RuntimeError, match="_fused_adam_"):
        torch._fused_adam_(p, p, p, p, [], [torch.ones((), device="foo")], lr=0.1, beta1=0.9, beta2=0.99,
                           weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
