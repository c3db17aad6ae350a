"""torch.equal on foo's kernels (eq, all, one host read): the CPU's answers, and istft, which checks
its window with it, stays on foo."""

import pytest
import torch

import torch_foo  # noqa: F401 - registers the device
from conftest import foo_kernels_only

NAN = float("nan")

# (name, a, b): CPU tensors; foo must answer as the CPU does.
CASES = [
    ("same", torch.arange(12.0).view(3, 4), torch.arange(12.0).view(3, 4)),
    ("one_differs", torch.arange(12.0), torch.arange(12.0).index_fill(0, torch.tensor([11]), -1.0)),
    ("other_shape", torch.ones(2, 3), torch.ones(3, 2)),
    ("broadcastable_is_unequal", torch.ones(2, 3), torch.ones(3)),
    ("nan", torch.tensor([1.0, NAN]), torch.tensor([1.0, NAN])),
    ("signed_zero", torch.tensor([0.0]), torch.tensor([-0.0])),
    ("empty", torch.empty(0, 3), torch.empty(0, 3)),
    ("empty_other_shape", torch.empty(0, 3), torch.empty(0, 2)),
    ("zero_dim", torch.tensor(2.5), torch.tensor(2.5)),
    ("int_vs_float", torch.ones(4, dtype=torch.int64), torch.ones(4)),
    ("bool", torch.tensor([True, False]), torch.tensor([True, True])),
    ("half", torch.randn(33).half(), None),
    ("transposed", torch.arange(6.0).view(2, 3).t(), torch.arange(6.0).view(2, 3).t().contiguous()),
]


@pytest.mark.parametrize("name,a,b", CASES, ids=[c[0] for c in CASES])
def test_matches_cpu(name, a, b):
    b = a.clone() if b is None else b
    with foo_kernels_only():
        actual = torch.equal(a.to("foo"), b.to("foo"))
    assert type(actual) is bool
    assert actual == torch.equal(a, b), name


def test_a_nan_tensor_is_not_equal_to_itself():
    x = torch.tensor([NAN], device="foo")
    with foo_kernels_only():
        assert torch.equal(x, x) is False


def test_other_device_is_refused():
    with pytest.raises(RuntimeError, match="device"):
        torch.equal(torch.ones(2, device="foo"), torch.ones(2))


def test_sync_debug_mode_names_the_wait():
    x = torch.ones(3, device="foo")
    torch.foo.set_sync_debug_mode("error")
    try:
        with pytest.raises(RuntimeError, match="torch.equal reads its answer on the host"):
            torch.equal(x, x)
    finally:
        torch.foo.set_sync_debug_mode(0)


def test_istft_runs_on_foo():
    torch.manual_seed(0)
    x = torch.randn(400)
    window = torch.hann_window(64)
    spec = torch.stft(x, 64, window=window, return_complex=True)
    with foo_kernels_only():
        y = torch.istft(spec.to("foo"), 64, window=window.to("foo"), length=400)
    assert y.device.type == "foo" and y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), torch.istft(spec, 64, window=window, length=400), rtol=1e-5, atol=1e-5)
