"""Streams and events of ``torch.foo``, with torch.cuda's names.

They are PyTorch's generic ``torch.Stream`` / ``torch.Event`` (the C++ device
guard implements them); the subclasses here bind the device to ``foo``, accept an
int device as torch.cuda does, and add ``foo_stream`` (the driver handle, like
``torch.cuda.Stream.cuda_stream``).

Current streams are per thread and per device, as in CUDA: ``set_stream`` and
``with stream(s)`` change the calling thread's current stream of ``s``'s device.
"""

import torch

from torch_foo import _C
from torch_foo._utils import _device_index

# c10's DeviceType value of PrivateUse1 (= foo), for torch.Stream's unpacked form.
_FOO_DEVICE_TYPE = torch._C._autograd.DeviceType.PrivateUse1.value


def _foo_device(device):
    return torch.device("foo", _device_index(device))


class Stream(torch.Stream):
    """A stream of a foo device (default: the current one), from a per-device pool.

    ``priority`` < 0 takes a high-priority stream, as in torch.cuda. Usable as a
    context manager (``with s:`` makes it current on its device).
    """

    def __new__(cls, device=None, *, priority=0, **unpacked):
        if unpacked:  # Stream(stream_id=, device_index=, device_type=): rebuild an existing stream
            return super().__new__(cls, priority=priority, **unpacked)
        return super().__new__(cls, device=_foo_device(device), priority=priority)

    @property
    def foo_stream(self):
        """The driver's stream handle as an int (the ``cudaStream_t`` on the cuda driver)."""
        return _C._stream_handle(self.stream_id, self.device_index)


def _wrap(stream):
    """A generic torch.Stream of foo as a torch.foo.Stream (same stream, same equality and hash)."""
    return Stream(stream_id=stream.stream_id, device_index=stream.device_index, device_type=_FOO_DEVICE_TYPE)


class ExternalStream(Stream):
    """A stream made outside torch_foo, by its driver handle (torch.cuda.ExternalStream).

    On the cuda driver ``stream_ptr`` is a ``cudaStream_t`` of ``device``; torch_foo
    never destroys it, so it must outlive every use. On sim only torch_foo's own
    streams exist (``Stream().foo_stream``).
    """

    def __new__(cls, stream_ptr, device=None):
        index = _device_index(device)
        stream_id = _C._external_stream(int(stream_ptr), index)
        return super().__new__(cls, stream_id=stream_id, device_index=index, device_type=_FOO_DEVICE_TYPE)


class _EventType(type):
    # torch.Event's C++ methods (elapsed_time) accept exact torch.Event objects only, so
    # Event() returns one; this keeps isinstance(e, torch.foo.Event) true for foo events.
    def __instancecheck__(cls, obj):
        return isinstance(obj, torch.Event) and obj.device.type == "foo"


class Event(metaclass=_EventType):
    """An event of foo (torch.cuda.Event): record, wait, query, synchronize, elapsed_time.

    Returns a ``torch.Event``. ``device`` is accepted for symmetry with torch.Event;
    as in CUDA the event belongs to the device of the stream it is first recorded on
    (``record()`` without a stream: the current device's current stream).
    ``elapsed_time`` needs ``enable_timing=True`` on both events.
    """

    def __new__(cls, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        return torch.Event(
            device=_foo_device(device),
            enable_timing=enable_timing,
            blocking=blocking,
            interprocess=interprocess,
        )


def current_stream(device=None):
    """The stream ops on ``device`` are queued to, in this thread."""
    return _wrap(torch._C._accelerator_getStream(_device_index(device)))


def default_stream(device=None):
    """The default stream of ``device`` (c10 gives it the id 0)."""
    return Stream(stream_id=0, device_index=_device_index(device), device_type=_FOO_DEVICE_TYPE)


def set_stream(stream):
    """Make ``stream`` current on its device, and its device current (as torch.cuda.set_stream)."""
    if stream is not None:
        torch._C._accelerator_setStream(stream)


class StreamContext:
    """Select ``stream`` inside the block; restore the previous streams and device after,
    also when the block raises.

    Same logic as torch.cuda.StreamContext: the current stream of the stream's own
    device is restored as well as the caller's, because set_stream changes both
    the current device and that device's current stream.
    """

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is None:
            return None
        self.src_prev = current_stream()
        self.dst_prev = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        if self.dst_prev.device_index != self.src_prev.device_index:
            set_stream(self.dst_prev)
        set_stream(self.src_prev)
        return False


def stream(stream):
    """``with torch.foo.stream(s):`` queues the block's work on ``s`` (None: no change)."""
    return StreamContext(stream)
