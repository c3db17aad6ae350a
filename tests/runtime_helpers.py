"""Helpers for the runtime tests (streams, events, pinned memory)."""

import contextlib

import torch


@contextlib.contextmanager
def held(stream=None):
    """Stop `stream` (default: the current foo stream) at this point of its queue for the block,
    so work queued inside the block is deterministically still in flight there. Nothing in the
    block may wait for that stream (synchronize, .cpu(), empty_cache)."""
    import torch_foo

    stream = stream if stream is not None else torch.foo.current_stream()
    release = torch_foo._C._hold_stream(stream.stream_id, stream.device_index)
    try:
        yield stream
    finally:
        release()
