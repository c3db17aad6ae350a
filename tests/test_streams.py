"""Streams and events: identity, current-stream context, ordering between streams, timing.

Ordering is asserted through values (work queued on a side stream is visible
after the default stream waits for it), never through timing.
"""

import threading

import pytest
import torch

from conftest import assert_foo_equal
from runtime_helpers import held

BIG = 16 * 1024 * 1024  # float32 elements: a 64 MiB foo -> foo copy takes a while
POOL = 8  # streams per device and priority (kPoolSize in csrc/runtime/stream.cpp)


def _block_state(ptr):
    """The allocator's state of the block at `ptr`, from torch.foo.memory_snapshot()."""
    for segment in torch.foo.memory_snapshot():
        for block in segment["blocks"]:
            if block["address"] == ptr:
                return block["state"]
    return None


def _big_source():
    x = torch.arange(BIG, dtype=torch.float32)
    return x, x.to("foo")


def _small_source():
    x = torch.arange(1000, dtype=torch.float32)
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
    cpu, src = _small_source()
    default, side = torch.foo.current_stream(), torch.foo.Stream()
    side.wait_stream(default)  # src was written on the default stream
    with held(side):  # the side stream's work is still queued while the default stream's is queued
        with torch.foo.stream(side):
            dst = src * 2
        default.wait_stream(side)
        after = dst + 1  # on the default stream: without the wait it would read dst unwritten
    assert_foo_equal(after, cpu * 2 + 1)


def test_event_orders_side_work():
    cpu, src = _small_source()
    side = torch.foo.Stream()
    ready = torch.foo.Event()
    side.wait_stream(torch.foo.current_stream())
    with held(side):
        with torch.foo.stream(side):
            dst = src * 2
            ready.record(side)
        assert ready.query() is False
        torch.foo.current_stream().wait_event(ready)
        after = dst + 1
    assert_foo_equal(after, cpu * 2 + 1)
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
    """Asynchrony, not only ordering: a kernel launched on a stream that cannot run yet returns at
    once (a synchronous launch would wait for the held stream: the helper's watchdog fails it), and
    its result is visible once the default stream waits for the side stream."""
    import torch_foo

    x, src = _small_source()
    side = torch.foo.Stream()
    side.wait_stream(torch.foo.current_stream())
    with held(side):
        with torch.foo.stream(side):
            out = torch_foo.ops.axpby(src, src, a=2.0, b=1.0)
        assert side.query() is False
        torch.foo.current_stream().wait_stream(side)
    assert_foo_equal(out, 3 * x)
    assert side.query() is True


# --- torch.Stream on foo, as PyTorch's OpenReg backend tests it (test_streams.py there) ----------


def test_generic_stream_uses_the_current_device(two_devices):
    assert torch.Stream("foo").device == torch.device("foo:0")  # was "invalid device index -1"
    with torch.foo.device(1):
        s = torch.Stream(device="foo")
        assert s.device_index == 1 == torch.accelerator.current_device_index()
    assert torch.Stream(device="foo:1").device_index == 1
    assert torch.Stream(1).device == torch.device("foo:1")  # an int: the accelerator's index
    s = torch.Stream(device="foo:1")
    rebuilt = torch.Stream(stream_id=s.stream_id, device_type=s.device_type, device_index=s.device_index)
    assert rebuilt == s and hash(rebuilt) == hash(s)
    assert "torch.Stream device_type=foo, device_index=1" in repr(s)


def test_accelerator_set_stream_switches_device_and_stream(two_devices):
    s0, s1 = torch.Stream(device="foo:0"), torch.Stream(device="foo:1")
    torch.accelerator.set_stream(s0)
    assert torch.accelerator.current_stream() == s0
    torch.accelerator.set_stream(s1)
    assert torch.accelerator.current_stream() == s1 and torch.accelerator.current_device_index() == 1
    assert torch.foo.current_stream(0) == s0  # current streams are per device
    torch.accelerator.set_stream(torch.foo.default_stream(1))
    torch.accelerator.set_stream(torch.foo.default_stream(0))
    assert torch.foo.current_stream(0) == torch.foo.default_stream(0)


def test_stream_contexts_restore_device_and_stream_on_exceptions(two_devices):
    default0, default1 = torch.foo.default_stream(0), torch.foo.default_stream(1)
    s1 = torch.foo.Stream(1)
    for context in (lambda: torch.foo.stream(s1), lambda: s1):  # torch.foo.stream and torch.Stream's own
        with pytest.raises(ValueError, match="inside"):
            with context():
                assert torch.foo.current_device() == 1 and torch.foo.current_stream() == s1
                raise ValueError("raised inside the block")
        assert torch.foo.current_device() == 0
        assert torch.foo.current_stream(0) == default0 and torch.foo.current_stream(1) == default1
    s0 = torch.foo.Stream(0)
    with pytest.raises(RuntimeError, match="nested"):
        with torch.foo.stream(s0):
            with torch.foo.stream(s1):
                raise RuntimeError("nested")
    assert torch.foo.current_stream(0) == default0 and torch.foo.current_stream(1) == default1


def test_current_stream_is_per_thread():
    main_side = torch.foo.Stream()
    seen = {}

    def worker():
        seen["initial"] = torch.foo.current_stream()
        side = torch.foo.Stream()
        torch.foo.set_stream(side)
        seen["set"] = torch.foo.current_stream() == side

    with torch.foo.stream(main_side):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert torch.foo.current_stream() == main_side  # the thread's set_stream did not leak here
    assert seen == {"initial": torch.foo.default_stream(), "set": True}


def test_stream_pools_by_priority():
    low = [torch.foo.Stream() for _ in range(POOL)]
    high = [torch.foo.Stream(priority=-1) for _ in range(POOL)]
    assert len({s.stream_id for s in low}) == POOL and len({s.stream_id for s in high}) == POOL
    assert not {s.stream_id for s in low} & {s.stream_id for s in high}
    assert torch.foo.default_stream().stream_id not in {s.stream_id for s in low + high}
    # Handed out round-robin: creating streams never exhausts the device (as torch.cuda's pools).
    again = [torch.foo.Stream() for _ in range(POOL)]
    assert {s.stream_id for s in again} == {s.stream_id for s in low}


def test_foo_stream_handle_and_external_stream(two_devices):
    side = torch.foo.Stream(1)
    assert isinstance(side.foo_stream, int) and side.foo_stream != 0
    assert side.foo_stream != torch.foo.default_stream(1).foo_stream
    assert torch.foo.current_stream(1).foo_stream == torch.foo.default_stream(1).foo_stream
    ext = torch.foo.ExternalStream(side.foo_stream, device=1)
    assert ext.device == torch.device("foo:1") and ext.foo_stream == side.foo_stream
    # The same driver stream: work queued through one is ordered with the other.
    with held(side):
        with torch.foo.stream(ext):
            y = torch.ones(1000, device="foo:1") * 3
        assert ext.query() is False and side.query() is False
    ext.synchronize()
    assert side.query() is True
    assert_foo_equal(y, torch.full((1000,), 3.0), device="foo:1")
    with pytest.raises(RuntimeError, match="device 1"):
        torch.foo.ExternalStream(side.foo_stream, device=0)


def test_record_stream_keeps_a_block_from_reuse_until_the_other_stream_is_done():
    side = torch.foo.Stream()
    x = torch.ones(1 << 16, device="foo")  # allocated and filled on the default stream
    ptr = x.data_ptr()
    side.wait_stream(torch.foo.current_stream())  # side reads x only after its fill
    with held(side):
        with torch.foo.stream(side):
            y = x * 2  # queued on side, reads x
        x.record_stream(side)
        del x
        z = torch.empty(1 << 16, device="foo")  # same size, same (default) stream
        assert z.data_ptr() != ptr  # side has not read x yet: its block must not be handed out
        assert _block_state(ptr) == "active_pending_free"
    side.synchronize()
    w = torch.empty(1 << 16, device="foo")
    assert w.data_ptr() == ptr  # side passed its event: the block is back in the cache
    torch.foo.current_stream().wait_stream(side)
    assert_foo_equal(y, torch.full((1 << 16,), 2.0))
    del z


def test_without_record_stream_the_block_is_reused_at_once():
    # The control for the test above: the cache does hand the block out on its own stream.
    x = torch.ones(1 << 16, device="foo")
    ptr = x.data_ptr()
    del x
    assert torch.empty(1 << 16, device="foo").data_ptr() == ptr


def test_cross_device_wait_orders_work(two_devices):
    src = torch.arange(1 << 16, dtype=torch.float32, device="foo:0")
    producer, consumer = torch.foo.Stream(0), torch.foo.Stream(1)
    producer.wait_stream(torch.foo.current_stream(0))
    with held(producer):
        with torch.foo.stream(producer):
            data = src + 1  # queued on device 0, behind the hold
            ready = producer.record_event()
        consumer.wait_event(ready)  # a device-1 stream waits for a device-0 event
        with torch.foo.stream(consumer):
            after = consumer.record_event()
            copied = data.to("foo:1")  # cross-device copy: ordered by events, no host wait
        assert ready.query() is False and after.query() is False and consumer.query() is False
    consumer.synchronize()
    assert ready.query() is True and after.query() is True
    assert_foo_equal(copied, torch.arange(1 << 16, dtype=torch.float32) + 1, device="foo:1")


def test_cross_device_copy_waits_for_both_devices(two_devices):
    # As torch.cuda: the copy waits for work queued before it on the source's and the
    # destination's current streams, without blocking the host.
    src = torch.zeros(1 << 16, device="foo:0")
    dst = torch.zeros(1 << 16, device="foo:1")
    with held(torch.foo.current_stream(0)), held(torch.foo.current_stream(1)):
        src.fill_(5.0)  # queued on device 0, behind its hold
        dst.copy_(src)  # returns at once: nothing runs yet
        assert torch.foo.current_stream(1).query() is False
    assert_foo_equal(dst, torch.full((1 << 16,), 5.0), device="foo:1")
