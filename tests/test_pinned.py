"""Pinned host memory for foo: the host allocator (csrc/runtime/host_allocator.cpp), non_blocking
copies from and to it, its reuse rules, and DataLoader(pin_memory=True).

In-flight states are made deterministic with runtime_helpers.held (the stream stops until the
block ends); a copy that wrongly waits for the stream fails the test through held's watchdog.
"""

import warnings

import pytest
import torch

from conftest import assert_foo_equal
from runtime_helpers import held

N = 1 << 14


def test_pin_memory_and_is_pinned():
    x = torch.randn(10)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu" and torch.equal(p, x)
    assert p[2:5].is_pinned() and p.view(2, 5).t().is_pinned()  # views of pinned memory
    assert torch.empty(3, pin_memory=True).is_pinned()
    assert torch.zeros(4).pin_memory().pin_memory().is_pinned()


def test_pinned_storages():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage and the device argument are deprecated
        untyped = torch.randn(10).untyped_storage()
        assert not untyped.is_pinned("foo")
        assert untyped.pin_memory("foo").is_pinned("foo")
        typed = torch.randn(10).storage()
        assert not typed.is_pinned("foo") and typed.pin_memory("foo").is_pinned("foo")
        assert torch.randn(4).pin_memory("foo").is_pinned("foo")
    pinned = torch.randn(10).pin_memory()
    rewrapped = torch.tensor((), dtype=torch.float32).set_(
        pinned.untyped_storage()[2:], size=(5,), stride=(1,), storage_offset=0
    )
    assert rewrapped.is_pinned() and rewrapped.data_ptr() != pinned.data_ptr()


def test_non_blocking_upload_from_pinned_memory_is_asynchronous():
    x = torch.arange(N, dtype=torch.float32).pin_memory()
    with held() as stream:
        y = x.to("foo", non_blocking=True)  # returns although the stream cannot run the copy
        assert stream.query() is False
    torch.foo.synchronize()
    assert_foo_equal(y, torch.arange(N, dtype=torch.float32))


def test_non_blocking_upload_from_pageable_memory_is_staged():
    x = torch.arange(N, dtype=torch.float32)  # pageable: the driver copies it before returning
    with held():
        y = x.to("foo", non_blocking=True)
        x.fill_(-1.0)  # so changing the source afterwards cannot reach the device
    assert_foo_equal(y, torch.arange(N, dtype=torch.float32))


def test_non_blocking_download_into_pinned_memory_is_asynchronous():
    y = torch.arange(N, dtype=torch.float32, device="foo")
    with held() as stream:
        z = y.to("cpu", non_blocking=True)  # torch gives a non_blocking download a pinned result
        assert z.is_pinned() and stream.query() is False
    torch.foo.synchronize()
    assert torch.equal(z, torch.arange(N, dtype=torch.float32))


def test_non_blocking_download_into_pageable_memory_is_complete_on_return():
    y = torch.arange(N, dtype=torch.float32, device="foo")
    z = torch.empty(N)
    z.copy_(y, non_blocking=True)  # as CUDA: no pinned buffer, so the copy is synchronous
    assert torch.equal(z, torch.arange(N, dtype=torch.float32))


def test_pinned_block_is_not_reused_while_a_copy_reads_it():
    x = torch.arange(N, dtype=torch.float32).pin_memory()
    ptr = x.data_ptr()
    with held():
        y = x.to("foo", non_blocking=True)
        del x  # freed while the copy from it is still queued
        other = torch.empty(N).pin_memory()
        assert other.data_ptr() != ptr  # the allocator waits for the copy's event
        other.fill_(-1.0)
    torch.foo.synchronize()
    assert_foo_equal(y, torch.arange(N, dtype=torch.float32))
    again = torch.empty(N).pin_memory()
    assert again.data_ptr() == ptr  # the copy is done: the block is back in the cache


def test_pinned_block_is_reused_at_once_without_copies():
    # The control for the test above.
    x = torch.empty(N).pin_memory()
    ptr = x.data_ptr()
    del x
    assert torch.empty(N).pin_memory().data_ptr() == ptr


def test_host_memory_stats():
    x = torch.empty(N).pin_memory()
    stats = torch.foo.host_memory_stats()
    assert stats["allocations.current"] >= 1 and stats["allocated_bytes.current"] >= N * 4
    del x


@pytest.mark.skipif(not hasattr(torch.accelerator, "empty_host_cache"),
                    reason="this torch has no torch.accelerator.empty_host_cache (torch 2.11 has no "
                    "device-generic way to empty a host cache; 2.13 has)")
def test_empty_host_cache():
    x = torch.empty(N).pin_memory()
    del x
    freed_before = torch.foo.host_memory_stats()["num_host_free"]
    torch.accelerator.empty_host_cache()
    after = torch.foo.host_memory_stats()
    assert after["num_host_free"] > freed_before and after["allocations.current"] == 0


def test_dataloader_pin_memory():
    data = torch.arange(32, dtype=torch.float32).view(16, 2)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=4, pin_memory=True)
    seen = []
    for (batch,) in loader:
        assert batch.is_pinned()
        seen.append(batch.to("foo", non_blocking=True))
    torch.foo.synchronize()
    assert_foo_equal(torch.cat(seen), data)


@pytest.mark.parametrize("dtype", [torch.float16, torch.int64, torch.bool])
def test_pinned_round_trip_dtypes(dtype):
    x = torch.arange(100).to(dtype).pin_memory()
    y = x.to("foo", non_blocking=True)
    z = torch.empty(100, dtype=dtype).pin_memory()
    z.copy_(y, non_blocking=True)
    torch.foo.current_stream().synchronize()
    assert torch.equal(z, x)
