"""Caching-allocator statistics: torch.foo.memory_* per device."""

import gc

import pytest
import torch

MIB = 1 << 20


@pytest.fixture(autouse=True)
def _collect():
    # Garbage of earlier tests freed mid-test would move the counters under us.
    gc.collect()
    torch.foo.synchronize()


def _alloc(nbytes, device):
    return torch.empty(nbytes // 4, dtype=torch.float32, device=device)


def test_allocated_rises_and_falls():
    before = torch.foo.memory_allocated(0)
    x = _alloc(4 * MIB, "foo:0")
    assert x.device == torch.device("foo:0") and x.dtype == torch.float32
    during = torch.foo.memory_allocated(0)
    assert during >= before + 4 * MIB
    assert torch.foo.memory_reserved(0) >= during
    del x
    assert torch.foo.memory_allocated(0) == before
    assert torch.foo.memory_reserved(0) >= before  # the cache may keep the block


def test_device_arguments_agree():
    x = _alloc(MIB, "foo:0")
    values = {
        torch.foo.memory_allocated(),
        torch.foo.memory_allocated(0),
        torch.foo.memory_allocated("foo:0"),
        torch.foo.memory_allocated(torch.device("foo", 0)),
    }
    assert len(values) == 1 and values.pop() >= MIB
    del x


def test_devices_are_independent(two_devices):
    before0, before1 = torch.foo.memory_allocated(0), torch.foo.memory_allocated(1)
    y = _alloc(2 * MIB, "foo:1")
    assert y.device == torch.device("foo:1")
    assert torch.foo.memory_allocated(0) == before0
    assert torch.foo.memory_allocated(1) >= before1 + 2 * MIB
    del y
    assert torch.foo.memory_allocated(1) == before1


def test_peak_and_reset():
    torch.foo.reset_peak_memory_stats(0)
    base = torch.foo.memory_allocated(0)
    assert torch.foo.max_memory_allocated(0) == base
    x = _alloc(8 * MIB, "foo:0")
    del x
    peak = torch.foo.max_memory_allocated(0)
    assert peak >= base + 8 * MIB
    assert torch.foo.max_memory_reserved(0) >= peak
    assert torch.foo.memory_allocated(0) == base
    torch.foo.reset_peak_memory_stats(0)
    assert torch.foo.max_memory_allocated(0) == base


def test_memory_stats_and_empty_cache():
    x = _alloc(MIB, "foo:0")
    stats = torch.foo.memory_stats(0)
    assert stats["allocated_bytes.all.current"] == torch.foo.memory_allocated(0)
    assert stats["reserved_bytes.all.current"] == torch.foo.memory_reserved(0)
    assert stats["allocated_bytes.all.peak"] >= stats["allocated_bytes.all.current"]
    del x
    torch.foo.empty_cache()
    assert torch.foo.memory_reserved(0) >= torch.foo.memory_allocated(0)


def test_accelerator_memory_api_agrees():
    # torch.accelerator.memory_* reads the registered DeviceAllocator's stats.
    x = _alloc(MIB, "foo:0")
    assert torch.accelerator.memory_allocated(0) == torch.foo.memory_allocated(0)
    assert torch.accelerator.memory_reserved(0) == torch.foo.memory_reserved(0)
    del x
