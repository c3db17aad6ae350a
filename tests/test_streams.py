"""Streams and events: identity, current-stream context, ordering between streams, timing.

Ordering is asserted through values (work queued on a side stream is visible
after the default stream waits for it), never through timing.
"""

import torch

from conftest import assert_foo_equal

BIG = 16 * 1024 * 1024  # float32 elements: a 64 MiB foo -> foo copy takes a while


def _big_source():
    x = torch.arange(BIG, dtype=torch.float32)
    return x, x.to("foo")


def test_new_stream_differs_from_default():
    default = torch.foo.default_stream()
    side = torch.foo.Stream()
    assert isinstance(side, torch.Stream)
    assert side != default
    assert side.device == default.device == torch.device("foo:0")
    assert torch.foo.current_stream() == default
    assert torch.foo.current_stream(0) == torch.foo.default_stream("foo:0")


def test_stream_on_second_device(two_devices):
    s = torch.foo.Stream(1)
    assert s.device == torch.device("foo:1")
    assert torch.foo.default_stream(1).device == torch.device("foo:1")
    assert torch.Stream(device="foo:1").device == torch.device("foo:1")


def test_stream_context_sets_and_restores(two_devices):
    default0 = torch.foo.current_stream(0)
    s = torch.foo.Stream(0)
    with torch.foo.stream(s):
        assert torch.foo.current_stream() == s
    assert torch.foo.current_stream() == default0
    s1 = torch.foo.Stream(1)
    with torch.foo.stream(s1):  # switches device too, like torch.cuda.stream
        assert torch.foo.current_device() == 1 and torch.foo.current_stream() == s1
    assert torch.foo.current_device() == 0
    assert torch.foo.current_stream(1) == torch.foo.default_stream(1)
    with torch.foo.stream(None):
        assert torch.foo.current_stream() == default0
    with s:  # torch.Stream is a context manager itself
        assert torch.foo.current_stream() == s
    assert torch.foo.current_stream() == default0


def test_wait_stream_orders_side_work():
    cpu, src = _big_source()
    default, side = torch.foo.current_stream(), torch.foo.Stream()
    side.wait_stream(default)  # src was written on the default stream
    with torch.foo.stream(side):
        dst = src.clone()  # queued on side
    default.wait_stream(side)
    assert_foo_equal(dst, cpu)  # .cpu() runs on the default stream


def test_event_orders_side_work():
    cpu, src = _big_source()
    side = torch.foo.Stream()
    ready = torch.foo.Event()
    side.wait_stream(torch.foo.current_stream())
    with torch.foo.stream(side):
        dst = src.clone()
        ready.record(side)
    torch.foo.current_stream().wait_event(ready)
    assert_foo_equal(dst, cpu)
    ready.synchronize()
    assert ready.query() is True


def test_query_after_synchronize():
    _, src = _big_source()
    side = torch.foo.Stream()
    side.wait_stream(torch.foo.current_stream())
    with torch.foo.stream(side):
        dst = src.clone()
    assert isinstance(side.query(), bool)  # may or may not be done yet: no assertion on which
    side.synchronize()
    assert side.query() is True
    torch.foo.synchronize()
    assert torch.foo.default_stream().query() is True
    assert dst.shape == (BIG,) and dst.device == torch.device("foo:0")


def test_event_elapsed_time():
    _, src = _big_source()
    start, end = torch.foo.Event(enable_timing=True), torch.foo.Event(enable_timing=True)
    start.record()
    dst = src.clone()
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0
    assert dst.device == torch.device("foo:0")


def test_launch_returns_before_the_work_is_done():
    """Asynchrony, not only ordering: a kernel over 16M elements (tens of ms on the sim device,
    whose emulated threads run one after another) is still queued when the launch returns, and
    its result is visible once the default stream waits for the side stream."""
    import torch_foo

    if torch_foo.driver() != "sim":
        import pytest

        pytest.skip("on a GPU the kernel may finish before query() runs")
    x, src = _big_source()
    side = torch.foo.Stream()
    side.wait_stream(torch.foo.current_stream())
    with torch.foo.stream(side):
        out = torch_foo.ops.axpby(src, src, a=2.0, b=1.0)
    assert side.query() is False
    torch.foo.current_stream().wait_stream(side)
    assert_foo_equal(out, 3 * x)
    assert side.query() is True
