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


def test_broadcasts_and_promotes_like_torch():
    """On the pointwise route axpby is a TensorIterator op: shapes broadcast and dtypes promote as
    in `a * x + b * y` (the hand-written kernel it replaced refused both)."""
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(4, 1, 3, generator=g), torch.randn(3, generator=g, dtype=torch.float64)
    out = torch_foo.ops.axpby(x.to("foo"), y.to("foo"), a=2.0, b=-1.0)
    _check(out, 2 * x - y)
    with pytest.raises(RuntimeError, match="foo::axpby.*Int"):
        torch_foo.ops.axpby(torch.ones(2, dtype=torch.int32, device="foo"), torch.ones(2, dtype=torch.int32, device="foo"))


def test_gradients_from_the_manifest():
    """`derivatives: {x: "grad * a", y: "grad * b"}`, y broadcast: its gradient is summed."""
    x = torch.randn(4, 3, device="foo", requires_grad=True)
    y = torch.randn(3, device="foo", requires_grad=True)
    torch_foo.ops.axpby(x, y, a=2.0, b=0.5).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), torch.full((4, 3), 2.0))
    torch.testing.assert_close(y.grad.cpu(), torch.full((3,), 2.0))
