"""The manifest's custom op foo::axpby, through the generated binding and torch.ops."""

import pytest
import torch

import torch_foo


def _pair(device="foo:0", dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(5, 7, generator=g, dtype=dtype), torch.randn(5, 7, generator=g, dtype=dtype)
    return x, y, x.to(device), y.to(device)


def _check(out, expected, device="foo:0"):
    assert out.device == torch.device(device)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    torch.testing.assert_close(out.cpu(), expected)  # fma on a GPU may differ by an ulp


def test_binding_with_scalars():
    x, y, fx, fy = _pair()
    _check(torch_foo.ops.axpby(fx, fy, a=2.0, b=3.0), 2 * x + 3 * y)
    _check(torch_foo.ops.axpby(fx, fy, 2.0, 3.0), 2 * x + 3 * y)


def test_binding_defaults():
    x, y, fx, fy = _pair()
    _check(torch_foo.ops.axpby(fx, fy), x + y)
    _check(torch_foo.ops.axpby(fx, fy, b=-1.0), x - y)


def test_torch_ops_path_agrees():
    x, y, fx, fy = _pair()
    boxed = torch.ops.foo.axpby(fx, fy, 2.0, 3.0)
    fast = torch_foo.ops.axpby(fx, fy, a=2.0, b=3.0)
    _check(boxed, 2 * x + 3 * y)
    assert torch.equal(boxed.cpu(), fast.cpu())  # same kernel either way
    assert "axpby" in torch_foo.ops.__all__


def test_runs_on_second_device(two_devices):
    x, y, fx, fy = _pair("foo:1")
    _check(torch_foo.ops.axpby(fx, fy, a=0.5), 0.5 * x + y, device="foo:1")


def test_cpu_argument_rejected():
    x, y, fx, _ = _pair()
    with pytest.raises(RuntimeError, match="axpby"):
        torch_foo.ops.axpby(fx, y)
    with pytest.raises(RuntimeError, match="axpby"):
        torch.ops.foo.axpby(fx, y)


def test_wrong_argument_types():
    _, _, fx, fy = _pair()
    with pytest.raises(TypeError):
        torch_foo.ops.axpby(fx, "y")
    with pytest.raises(TypeError):
        torch_foo.ops.axpby(fx, fy, a="two")
    with pytest.raises(TypeError):
        torch_foo.ops.axpby(fx)


def test_opcheck():
    """torch.library.opcheck: schema, fake impl, autograd registration and AOT dispatch agree."""
    x, y, fx, fy = _pair()
    torch.library.opcheck(torch.ops.foo.axpby.default, (fx, fy), {"a": 2.0, "b": -0.5})
