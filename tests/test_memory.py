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
    torch.accelerator.reset_peak_memory_stats(0)
    assert torch.accelerator.max_memory_allocated(0) == torch.foo.memory_allocated(0)
    y = _alloc(2 * MIB, "foo:0")
    del y
    assert torch.accelerator.max_memory_allocated(0) == torch.foo.max_memory_allocated(0) >= 3 * MIB
    assert torch.accelerator.max_memory_reserved(0) == torch.foo.max_memory_reserved(0)
    torch.accelerator.reset_accumulated_memory_stats(0)
    assert torch.foo.memory_stats(0)["allocation.all.allocated"] == 0
    del x
    torch.accelerator.empty_cache()
    assert torch.foo.memory_reserved(0) == torch.foo.memory_allocated(0)  # nothing cached


# --- torch.cuda's statistics, snapshot and summary; OpenReg's allocator tests --------------------


def test_memory_stats_keys_and_pools():
    torch.foo.reset_accumulated_memory_stats()
    before = torch.foo.memory_stats()
    small = _alloc(64 << 10, "foo:0")  # small pool (< 1 MiB), as torch.cuda splits them
    large = _alloc(4 * MIB, "foo:0")
    s = torch.foo.memory_stats()
    assert s["allocation.all.current"] == before["allocation.all.current"] + 2
    assert s["allocation.small_pool.allocated"] >= 1 and s["allocation.large_pool.allocated"] >= 1
    assert s["allocated_bytes.large_pool.current"] >= before["allocated_bytes.large_pool.current"] + 4 * MIB
    assert s["requested_bytes.all.current"] <= s["allocated_bytes.all.current"] <= s["reserved_bytes.all.current"]
    assert s["active_bytes.all.current"] == s["allocated_bytes.all.current"]  # nothing pending
    assert s["segment.all.current"] >= s["allocation.all.current"]  # blocks are never split
    for key in ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free", "inactive_split.all.current"):
        assert key in s
    del small, large
    after = torch.foo.memory_stats()
    assert after["allocation.all.freed"] == s["allocation.all.freed"] + 2
    assert after == torch.accelerator.memory_stats(0)


def test_out_of_memory_is_counted_and_recoverable():
    before = torch.foo.memory_stats()
    too_big = torch.foo.get_device_properties().total_memory + 1
    with pytest.raises(torch.OutOfMemoryError, match="out of memory on device 0"):
        torch.empty(too_big, dtype=torch.uint8, device="foo")
    s = torch.foo.memory_stats()
    assert s["num_ooms"] == before["num_ooms"] + 1 and s["num_alloc_retries"] == before["num_alloc_retries"] + 1
    assert torch.ones(4, device="foo").sum().item() == 4.0  # the device still works


def test_memory_snapshot_tracks_blocks():
    x = _alloc(2 * MIB, "foo:0")
    ptr = x.data_ptr()

    def segment():
        return next((s for s in torch.foo.memory_snapshot() if s["address"] == ptr), None)

    seg = segment()
    assert seg["device"] == 0 and seg["segment_type"] == "large" and seg["total_size"] >= 2 * MIB
    assert seg["allocated_size"] == seg["total_size"] and seg["blocks"][0]["state"] == "active_allocated"
    assert seg["requested_size"] == 2 * MIB and seg["stream"] == torch.foo.current_stream().foo_stream
    del x
    seg = segment()
    assert seg["allocated_size"] == 0 and seg["blocks"][0]["state"] == "inactive"  # cached
    torch.foo.empty_cache()
    assert segment() is None


def test_memory_summary_reads_like_torch_cuda():
    x = _alloc(MIB, "foo:0")
    summary = torch.foo.memory_summary()
    for row in ("Allocated memory", "Reserved memory", "Allocations", "from large pool", "OOMs"):
        assert row in summary
    assert "device ID 0" in summary
    assert "from large pool" not in torch.foo.memory_summary(abbreviated=True)
    del x


def test_shallow_copy_between_cpu_and_foo():
    # What nn.Module.to relies on (test_module_identity.py trains with it).
    cpu, foo = torch.randn(4, 4), torch.randn(4, 4, device="foo")
    assert torch._has_compatible_shallow_copy_type(cpu, foo)
    assert torch._has_compatible_shallow_copy_type(foo, cpu)
    assert not torch._has_compatible_shallow_copy_type(foo, torch.randn(4, 4).to_sparse())
    target = torch.randn(4, 4)
    target.data = foo
    assert target.device == foo.device and target.data_ptr() == foo.data_ptr()
    target = torch.randn(4, 4, device="foo")
    target.data = cpu
    assert target.device.type == "cpu" and target.data_ptr() == cpu.data_ptr()


def test_in_place_ops_views_and_resize_keep_storage():
    x = torch.ones(100, device="foo")
    ptr = x.data_ptr()
    x.add_(1)
    x.mul_(2)
    assert x.data_ptr() == ptr and torch.equal(x.cpu(), torch.full((100,), 4.0))
    y = x.view(10, 10)
    y.fill_(5.0)
    assert y.data_ptr() == ptr and torch.equal(x.cpu(), torch.full((100,), 5.0))
    x.resize_(50)
    assert x.data_ptr() == ptr and x.numel() == 50
    x.resize_(200)
    assert x.numel() == 200 and torch.equal(x[:50].cpu(), torch.full((50,), 5.0))
    z = torch.empty(2, 3, 4, 4, device="foo", memory_format=torch.channels_last)
    assert z.is_contiguous(memory_format=torch.channels_last)


def test_no_leak_over_alloc_free_cycles(two_devices):
    base = [torch.foo.memory_allocated(d) for d in (0, 1)]
    for i in range(200):
        x = torch.randn(100 + i, device=f"foo:{i % 2}")
        y = (x.cpu().to(x.device) + 1).view(-1)[::2]
        del x, y
    gc.collect()
    assert [torch.foo.memory_allocated(d) for d in (0, 1)] == base
    tensors0 = [torch.empty(1000, device="foo:0") for _ in range(10)]
    tensors1 = [torch.empty(1000, device="foo:1") for _ in range(10)]
    assert not {t.data_ptr() for t in tensors0} & {t.data_ptr() for t in tensors1}
