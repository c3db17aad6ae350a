"""Streams and events of ``torch.foo``.

They are PyTorch's generic ``torch.Stream`` / ``torch.Event`` (the C++ device
guard implements them); the subclasses here only bind the device to ``foo`` and
accept an int device, so ``torch.foo.Stream(1)`` works like ``torch.cuda.Stream(1)``.
"""

import torch

from torch_foo._utils import _device_index

# c10's DeviceType value of PrivateUse1 (= foo), for torch.Stream's unpacked form.
_FOO_DEVICE_TYPE = torch._C._autograd.DeviceType.PrivateUse1.value


def _foo_device(device):
    return torch.device("foo", _device_index(device))


class Stream(torch.Stream):
    """A new stream on a foo device (default: the current one); usable as a context manager."""

    def __new__(cls, device=None, *, priority=0, **unpacked):
        if unpacked:  # Stream(stream_id=, device_index=, device_type=): rebuild an existing stream
            return super().__new__(cls, priority=priority, **unpacked)
        return super().__new__(cls, device=_foo_device(device), priority=priority)


def Event(device=None, *, enable_timing=False, blocking=False, interprocess=False):
    """An event on a foo device (default: the current one).

    A factory, not a subclass: torch.Event's C++ methods (elapsed_time, wait) accept only
    exact torch.Event objects.
    """
    return torch.Event(
        device=_foo_device(device),
        enable_timing=enable_timing,
        blocking=blocking,
        interprocess=interprocess,
    )


def current_stream(device=None):
    """The stream ops on ``device`` are queued to, in this thread."""
    return torch._C._accelerator_getStream(_device_index(device))


def default_stream(device=None):
    # c10 gives a device's default stream the id 0 (c10::Stream::DEFAULT), and
    # Python has no generic getter for it, so it is rebuilt from its ids.
    return torch.Stream(stream_id=0, device_index=_device_index(device), device_type=_FOO_DEVICE_TYPE)


def set_stream(stream):
    """Make ``stream`` current on its device, and its device current (as torch.cuda.set_stream)."""
    if stream is not None:
        torch._C._accelerator_setStream(stream)


class StreamContext:
    """Select ``stream`` inside the block; restore the previous streams and device after.

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
            return
        if self.dst_prev.device_index != self.src_prev.device_index:
            set_stream(self.dst_prev)
        set_stream(self.src_prev)


def stream(stream):
    """``with torch.foo.stream(s):`` queues the block's work on ``s`` (None: no change)."""
    return StreamContext(stream)
