"""_weight_norm_interface and its backward (csrc/aten/ops/weight_norm.cpp, kernels/ops/weight_norm.cu):
nn.utils.weight_norm and parametrizations.weight_norm on foo against the CPU, for dim 0 (a norm
per output channel) and the last dim, forward and backward, with the CPU fallback forbidden.
No OpInfo covers these ops."""

import pytest
import torch
from torch import nn

from conftest import foo_kernels_only

FLOATS = [torch.float32, torch.float64, torch.bfloat16]


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else {}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", [((6, 5), 0), ((6, 5), 1), ((4, 3, 3, 3), 0), ((4, 3, 3, 3), 3),
                                       ((3, 2000), 0), ((2000, 3), 1), ((7,), 0)])
def test_interface_matches_cpu(dtype, shape, dim):
    torch.manual_seed(0)
    v = torch.randn(shape).to(dtype).requires_grad_()
    gshape = [1] * len(shape)
    gshape[dim] = shape[dim]
    g = torch.randn(gshape).to(dtype).requires_grad_()
    w, norms = torch._weight_norm_interface(v, g, dim)
    grad = torch.randn(shape).to(dtype)
    expected = torch.autograd.grad(w, (v, g), grad) if w.numel() else None
    fv, fg = (t.detach().to("foo").requires_grad_() for t in (v, g))
    with foo_kernels_only():
        fw, fnorms = torch._weight_norm_interface(fv, fg, dim)
        actual = torch.autograd.grad(fw, (fv, fg), grad.to("foo")) if fw.numel() else None
    assert fnorms.dtype == norms.dtype and fnorms.shape == norms.shape
    torch.testing.assert_close(fw.cpu(), w.detach(), **_tol(dtype))
    torch.testing.assert_close(fnorms.cpu(), norms.detach(), **_tol(norms.dtype))
    if expected is not None:
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a.cpu(), e, **_tol(dtype))


@pytest.mark.parametrize("dim", [0, 2])
def test_gradcheck_float64(dim):
    v = torch.randn(3, 4, 5, dtype=torch.float64, device="foo", requires_grad=True)
    gshape = [1, 1, 1]
    gshape[dim] = v.shape[dim]
    g = torch.randn(gshape, dtype=torch.float64, device="foo", requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: torch._weight_norm_interface(a, b, dim)[0], (v, g))


@pytest.mark.parametrize("api", ["utils", "parametrizations"])
def test_weight_normalised_conv_trains_natively(api):
    """A weight-normalised Conv1d (as in audio models: WaveNet, HiFi-GAN) steps on foo as on the CPU."""
    torch.manual_seed(1)
    make = nn.utils.weight_norm if api == "utils" else nn.utils.parametrizations.weight_norm
    cpu = make(nn.Conv1d(3, 8, 5, padding=2))
    foo = make(nn.Conv1d(3, 8, 5, padding=2))
    foo.load_state_dict(cpu.state_dict())
    foo = foo.to("foo")
    x = torch.randn(2, 3, 32)
    for model, inp in ((cpu, x), (foo, x.to("foo"))):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            if inp.device.type == "foo":
                with foo_kernels_only():
                    model(inp).square().mean().backward()
            else:
                model(inp).square().mean().backward()
            opt.step()
    for (name, a), (_, b) in zip(cpu.state_dict().items(), foo.state_dict().items()):
        torch.testing.assert_close(b.cpu(), a, rtol=1e-5, atol=1e-5, msg=name)


def test_other_dims_are_refused_as_on_the_cpu():
    v, g = torch.randn(3, 4, 5), torch.randn(1, 4, 1)
    with pytest.raises(RuntimeError, match="first or last dim"):
        torch._weight_norm_interface(v, g, 1)
    with foo_kernels_only(), pytest.raises(RuntimeError, match="first or last dim"):
        torch._weight_norm_interface(v.to("foo"), g.to("foo"), 1)
