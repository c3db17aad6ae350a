"""torch.foo.MemPool / use_mem_pool, as torch.cuda's: allocations inside the block take the pool's
own blocks, the common cache never hands them out, the pool's snapshot shows them, and releasing
the pool returns its cached memory to the driver."""

import gc
import threading

import pytest
import torch

NBYTES = 1 << 20  # float32 elements below: 1 MiB blocks, a size no other test of this file keeps


def _ptr(n=NBYTES // 4):
    return torch.empty(n, device="foo")


def test_pool_blocks_are_its_own():
    torch.foo.empty_cache()
    pool = torch.foo.MemPool()
    assert pool.id[0] == 0 and pool.id[1] > 0
    assert pool.use_count() == 1
    with torch.foo.use_mem_pool(pool):
        assert pool.use_count() == 2
        inside = _ptr()
        inside_ptr = inside.data_ptr()
    assert pool.use_count() == 1
    del inside  # back to the pool's cache, not the common one
    outside = _ptr()
    assert outside.data_ptr() != inside_ptr  # the common cache does not hand out the pool's block
    with torch.foo.use_mem_pool(pool):
        again = _ptr()
    assert again.data_ptr() == inside_ptr  # the pool reuses its own block
    segments = pool.snapshot()
    assert [s["address"] for s in segments] == [inside_ptr]
    assert segments[0]["segment_pool_id"] == pool.id
    assert all(tuple(s["segment_pool_id"]) == (0, 0) for s in torch.foo.memory_snapshot() if s["address"] == outside.data_ptr())
    del again, outside


def test_values_computed_in_a_pool_are_right():
    x = torch.randn(300, 40)
    pool = torch.foo.MemPool()
    with torch.foo.use_mem_pool(pool):
        y = (x.to("foo") * 2).softmax(-1).sum(0)
    torch.testing.assert_close(y.cpu(), (x * 2).softmax(-1).sum(0))
    assert y.device == torch.device("foo:0") and y.dtype == torch.float32


def test_releasing_the_pool_frees_its_cached_memory():
    torch.foo.empty_cache()
    reserved = torch.foo.memory_reserved()
    pool = torch.foo.MemPool()
    with torch.foo.use_mem_pool(pool):
        t = _ptr(4 * NBYTES)
    del t
    assert torch.foo.memory_reserved() >= reserved + 4 * NBYTES  # cached in the pool
    del pool
    gc.collect()
    assert torch.foo.memory_reserved() == reserved


def test_a_block_outliving_its_pool_is_freed_by_empty_cache():
    torch.foo.empty_cache()
    reserved = torch.foo.memory_reserved()
    pool = torch.foo.MemPool()
    with torch.foo.use_mem_pool(pool):
        t = _ptr(2 * NBYTES)
    del pool
    gc.collect()
    t.fill_(1.0)  # still usable
    assert t.sum().item() == 2 * NBYTES
    del t
    torch.foo.empty_cache()
    assert torch.foo.memory_reserved() == reserved


def test_only_the_calling_thread_is_routed():
    pool = torch.foo.MemPool()
    seen = {}

    def other():
        seen["ptr"] = _ptr(3 * NBYTES // 4).data_ptr()
        seen["pool"] = [s for s in pool.snapshot()]

    with torch.foo.use_mem_pool(pool):
        mine = _ptr(3 * NBYTES // 4)
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert [s["address"] for s in pool.snapshot()] == [mine.data_ptr()]
    assert seen["ptr"] != mine.data_ptr()


def test_nesting_and_misuse():
    a, b = torch.foo.MemPool(), torch.foo.MemPool()
    with torch.foo.use_mem_pool(a):
        with torch.foo.use_mem_pool(b):
            tb = _ptr(5 * NBYTES // 8)
        ta = _ptr(5 * NBYTES // 8)
    assert [s["address"] for s in b.snapshot()] == [tb.data_ptr()]
    assert [s["address"] for s in a.snapshot()] == [ta.data_ptr()]
    with pytest.raises(RuntimeError, match="must end in the order they began"):
        torch_foo_c = __import__("torch_foo")._C
        torch_foo_c._mem_pool_end(0, a.id[1])
