"""Helpers for the runtime tests (streams, events, pinned memory)."""

import contextlib
import threading

import torch


@contextlib.contextmanager
def held(stream=None, timeout=60.0):
    """Stop `stream` (default: the current foo stream) at this point of its queue for the block,
    so work queued inside the block is deterministically still in flight there.

    Nothing in the block may wait for that stream: code that does (a bug under test) would hang,
    so a watchdog releases the stream after `timeout` seconds and the block then fails instead.
    """
    import torch_foo

    stream = stream if stream is not None else torch.foo.current_stream()
    release = torch_foo._C._hold_stream(stream.stream_id, stream.device_index)
    fired = threading.Event()

    def watchdog():
        fired.set()
        release()

    timer = threading.Timer(timeout, watchdog)
    timer.daemon = True
    timer.start()
    try:
        yield stream
    finally:
        timer.cancel()
        release()
    assert not fired.is_set(), f"something waited for the held stream {stream} (released after {timeout} s)"
