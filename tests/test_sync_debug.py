"""torch.foo.set_sync_debug_mode, as torch.cuda's: an op that makes the host wait for the device
warns ("warn") or raises ("error"); work that only queues, and an asked-for torch.foo.synchronize(),
do not. The mode is what finds a program's hidden synchronisations (docs/performance.md)."""

import warnings

import pytest
import torch

SYNC = "called a synchronizing foo operation"


@pytest.fixture(autouse=True)
def _mode_restored():
    yield
    torch.foo.set_sync_debug_mode("default")


def test_modes_by_name_and_number():
    assert torch.foo.get_sync_debug_mode() == 0
    for name, number in (("warn", 1), ("error", 2), ("default", 0)):
        torch.foo.set_sync_debug_mode(name)
        assert torch.foo.get_sync_debug_mode() == number
        torch.foo.set_sync_debug_mode(number)
        assert torch.foo.get_sync_debug_mode() == number
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        torch.foo.set_sync_debug_mode("loud")
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        torch.foo.set_sync_debug_mode(3)


def test_a_scalar_read_warns_and_raises():
    x = torch.arange(6.0, device="foo")
    torch.foo.set_sync_debug_mode("warn")
    with pytest.warns(UserWarning, match=SYNC + ": a foo scalar read on the host"):
        assert x.sum().item() == 15.0
    torch.foo.set_sync_debug_mode("error")
    with pytest.raises(RuntimeError, match=SYNC + ": a foo scalar read on the host"):
        x.sum().item()
    with pytest.raises(RuntimeError, match=SYNC):
        bool(x.sum() > 0)
    torch.foo.set_sync_debug_mode("default")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # off: not a word
        assert x.max().item() == 5.0


def test_queued_work_and_asked_for_waits_pass_in_error_mode():
    x = torch.randn(64, 64)
    torch.foo.set_sync_debug_mode("error")
    d = x.to("foo")  # pageable host -> foo: the driver stages the bytes, the host does not wait
    y = torch.nn.functional.softmax(d @ d * 2 + 1, dim=-1).sum(0)
    z = y.cumsum(0).sqrt_()
    torch.foo.synchronize()  # asked for
    pinned = torch.empty(64, pin_memory=True, device="cpu")
    pinned.copy_(z, non_blocking=True)  # into pinned memory, non_blocking: stays in flight
    torch.foo.synchronize()
    torch.foo.set_sync_debug_mode("default")
    expected = torch.nn.functional.softmax(x @ x * 2 + 1, dim=-1).sum(0).cumsum(0).sqrt()
    torch.testing.assert_close(pinned, expected, rtol=1e-4, atol=1e-4)


def test_blocking_copies_and_stream_synchronize_report():
    d = torch.ones(8, device="foo")
    torch.foo.set_sync_debug_mode("error")
    with pytest.raises(RuntimeError, match=SYNC + ": a blocking copy between the host and foo"):
        d.cpu()
    with pytest.raises(RuntimeError, match=SYNC + r": Stream.synchronize\(\)"):
        torch.foo.current_stream().synchronize()


def test_the_hidden_synchronisations_of_ops_are_found():
    """The ops that still read a count or a flag back before returning: a data-dependent output
    size, as masked_select's, stays (as on CUDA). The index ops, nll_loss/cross_entropy,
    binary_cross_entropy, the margin losses and bernoulli_(p tensor) check their input on the
    device instead (issue 21, test_device_errors.py)."""
    x = torch.randn(5, 4, device="foo")
    idx = torch.tensor([0, 3, 1], device="foo")
    torch.foo.set_sync_debug_mode("error")
    x.index_select(0, idx)
    x[idx]
    torch.nn.functional.embedding(idx, x)
    x.gather(0, idx.view(3, 1).expand(3, 4))
    torch.nn.functional.cross_entropy(x, idx.new_tensor([0, 3, 1, 2, 0]))
    torch.nn.functional.binary_cross_entropy(x.sigmoid(), x.sigmoid())
    torch.nn.functional.multi_margin_loss(x, idx.new_tensor([0, 3, 1, 2, 0]))
    torch.nn.functional.multilabel_margin_loss(x, idx.new_tensor([[0, 3, -1, 0]] * 5))
    torch.empty_like(x).bernoulli_(x.sigmoid())
    with pytest.raises(RuntimeError, match=SYNC + ": the count of selected elements sizes the result"):
        x.masked_select(x > 0)
