"""torch.Event / torch.foo.Event on foo: the equivalents of PyTorch's OpenReg event tests, plus
what torch.cuda users rely on (Event.wait, timing errors, cross-device waits).

"In flight" is made deterministic with runtime_helpers.held, which stops a stream until the
block ends; nothing here asserts on timing except elapsed_time's sign.
"""

import pytest
import torch

from conftest import assert_foo_equal
from runtime_helpers import held

N = 1 << 16


def test_event_creation_and_ids(two_devices):
    for event in (torch.Event(device="foo"), torch.Event(device="foo:1"), torch.foo.Event()):
        # As in CUDA, an event has no device until its first record.
        assert event.device.type == "foo" and event.device.index is None and event.event_id == 0
    event = torch.Stream(device="foo:1").record_event()
    assert event.device == torch.device("foo:1") and event.event_id != 0
    assert isinstance(torch.foo.Event(), torch.foo.Event) and not isinstance(torch.Event("cpu"), torch.foo.Event)


def test_each_record_event_is_a_new_event():
    stream = torch.foo.Stream()
    first, second = stream.record_event(), stream.record_event()
    assert first.event_id != 0 and second.event_id != 0 and first.event_id != second.event_id


def test_query_and_synchronize():
    assert torch.foo.Event().query() is True  # never recorded: nothing to wait for
    stream = torch.foo.Stream()
    with held(stream):
        event = stream.record_event()
        assert event.query() is False
    event.synchronize()
    assert event.query() is True and stream.query() is True


def test_rerecording_moves_the_event():
    stream = torch.foo.Stream()
    event = torch.foo.Event()
    event.record(stream)
    stream.synchronize()
    assert event.query() is True
    with held(stream):
        event.record(stream)  # the same event, recorded again behind the hold
        assert event.query() is False
    stream.synchronize()
    assert event.query() is True


def test_record_without_a_stream_uses_the_current_stream(two_devices):
    side = torch.foo.Stream(1)
    with torch.foo.stream(side), held(side):
        event = torch.foo.Event()
        event.record()
        assert event.device == torch.device("foo:1") and event.query() is False
    event.synchronize()


def test_elapsed_time():
    stream = torch.foo.Stream()
    start, end = torch.foo.Event(enable_timing=True), torch.foo.Event(enable_timing=True)
    x = torch.ones(N, device="foo")
    with torch.foo.stream(stream):
        start.record()
        for _ in range(4):
            x = x * 1.5
        end.record()
    stream.synchronize()
    assert start.elapsed_time(end) > 0.0
    assert isinstance(start.elapsed_time(end), float)


def test_elapsed_time_errors():
    a, b = torch.foo.Event(enable_timing=False), torch.foo.Event(enable_timing=False)
    stream = torch.foo.Stream()
    a.record(stream)
    b.record(stream)
    stream.synchronize()
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'"):
        a.elapsed_time(b)
    start, end = torch.foo.Event(enable_timing=True), torch.foo.Event(enable_timing=True)
    start.record(stream)
    with pytest.raises(ValueError, match="Both events must be recorded"):
        start.elapsed_time(end)
    with held(stream):
        end.record(stream)
        with pytest.raises(RuntimeError, match="must be completed"):
            start.elapsed_time(end)
    stream.synchronize()
    assert start.elapsed_time(end) >= 0.0


def test_event_wait_orders_a_consumer_stream():
    producer, consumer = torch.foo.Stream(), torch.foo.Stream()
    src = torch.arange(N, dtype=torch.float32, device="foo")
    producer.wait_stream(torch.foo.current_stream())
    with held(producer):
        with torch.foo.stream(producer):
            data = src * 2
            ready = torch.foo.Event()
            ready.record()
        ready.wait(consumer)  # Event.wait: the consumer stream waits, the host does not
        with torch.foo.stream(consumer):
            out = data + 1
            done = consumer.record_event()
        assert done.query() is False
    done.synchronize()
    torch.foo.current_stream().wait_stream(consumer)
    assert_foo_equal(out, torch.arange(N, dtype=torch.float32) * 2 + 1)


def test_several_streams_wait_on_one_event():
    first, second, third = torch.foo.Stream(), torch.foo.Stream(), torch.foo.Stream()
    assert len({first.stream_id, second.stream_id, third.stream_id}) == 3
    x = torch.full((64, 64), 0.5, device="foo")
    first.wait_stream(torch.foo.current_stream())
    with held(first):
        with torch.foo.stream(first):
            x.mul_(2)  # queued behind the hold
        event = first.record_event()
        second.wait_event(event)
        third.wait_event(event)
        with second:
            z2 = x @ x
        with third:
            z3 = x @ x
        assert second.query() is False and third.query() is False
    torch.accelerator.synchronize()
    assert event.query() is True
    expected = torch.full((64, 64), 64.0)  # (x * 2) @ (x * 2) with x = 0.5
    assert_foo_equal(z2, expected)
    assert_foo_equal(z3, expected)


def test_events_on_two_devices(two_devices):
    e0, e1 = torch.foo.Event(), torch.foo.Event()
    e0.record(torch.foo.Stream(0))
    e1.record(torch.foo.Stream(1))
    assert e0.device == torch.device("foo:0") and e1.device == torch.device("foo:1")
    # A recorded event stays on its device, as in CUDA.
    with pytest.raises(RuntimeError, match="does not match"):
        e0.record(torch.foo.Stream(1))


def test_device_synchronize_keeps_the_device(two_devices):
    torch.accelerator.set_device_index(1)
    x = torch.ones(32, 32, device="foo")
    z = x @ x
    torch.accelerator.synchronize()
    assert torch.accelerator.current_device_index() == 1
    assert_foo_equal(z.sum(), torch.tensor(32.0 * 32 * 32), device="foo:1")


def test_event_and_stream_agree_on_completion():
    # The marker completes the event and counts its stream past it under one lock: a
    # synchronized event means a stream with nothing after it is idle, and vice versa.
    stream = torch.foo.Stream()
    for _ in range(300):
        event = stream.record_event()
        event.synchronize()
        assert stream.query() is True
        event = stream.record_event()
        stream.synchronize()
        assert event.query() is True
