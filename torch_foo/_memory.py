"""Memory statistics of ``torch.foo``, named as in ``torch.cuda``.

The device allocator (csrc/runtime/allocator.cpp) keeps torch's own counters
(``c10::CachingDeviceAllocator::DeviceStats``), so ``memory_stats`` is what
``torch.accelerator.memory_stats`` flattens, with torch.cuda's key names. All
numbers are bytes unless they count allocations or segments. ``allocated``:
held by live tensors; ``reserved``: held by the allocator (>= allocated).
"""

import contextlib

import torch

from torch_foo import _C
from torch_foo._utils import _device_index


def _stats(device):
    return _C._memory_stats(_device_index(device))


def _accelerator_device(device):
    return torch.device("foo", _device_index(device))


def memory_allocated(device=None):
    return int(_stats(device)["allocated"])


def memory_reserved(device=None):
    return int(_stats(device)["reserved"])


def max_memory_allocated(device=None):
    return int(_stats(device)["peak_allocated"])


def max_memory_reserved(device=None):
    return int(_stats(device)["peak_reserved"])


def reset_peak_memory_stats(device=None):
    _C._reset_peak_memory_stats(_device_index(device))


def reset_max_memory_allocated(device=None):
    """Deprecated alias of reset_peak_memory_stats, as in torch.cuda."""
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None):
    """Zero the allocated/freed totals and event counters (current values and peaks stay)."""
    torch.accelerator.reset_accumulated_memory_stats(_accelerator_device(device))


def empty_cache():
    """Return the allocator's unused cached blocks (on every device) to the driver."""
    _C._empty_cache()


def memory_stats(device=None):
    """The allocator's counters with torch.cuda.memory_stats' keys (``allocated_bytes.all.current``,
    ``reserved_bytes.large_pool.peak``, ``num_ooms``, ...); empty before foo is initialised."""
    return torch.accelerator.memory_stats(_accelerator_device(device))


def mem_get_info(device=None):
    """(free, total) bytes of the device, as torch.cuda.mem_get_info (free counts other users too)."""
    return tuple(_C._mem_get_info(_device_index(device)))


def memory_snapshot():
    """Every block the allocator holds on every device, in torch.cuda.memory_snapshot's segment
    format (``address``, ``total_size``, ``allocated_size``, ``segment_type``, ``blocks``, ...)."""
    if not _C._is_initialized() or _C._is_in_bad_fork():
        return []
    return [seg for i in range(_C._device_count()) for seg in _C._memory_snapshot(i)]


def host_memory_stats():
    """The pinned-memory allocator's counters (``allocations.current``, ``allocated_bytes.peak``,
    ``num_host_alloc``, ...), as torch.cuda.host_memory_stats."""
    return dict(_C._host_memory_stats())


def _format_bytes(n):
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            break
        value /= 1024
    return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"


def memory_summary(device=None, abbreviated=False):
    """A printable table of memory_stats, laid out like torch.cuda.memory_summary."""
    index = _device_index(device)
    stats = memory_stats(index)
    rows = [
        ("Allocated memory", "allocated_bytes", _format_bytes),
        ("Active memory", "active_bytes", _format_bytes),
        ("Requested memory", "requested_bytes", _format_bytes),
        ("Reserved memory", "reserved_bytes", _format_bytes),
        ("Allocations", "allocation", str),
        ("Active allocs", "active", str),
        ("Reserved segments", "segment", str),
    ]
    pools = ("all",) if abbreviated else ("all", "large_pool", "small_pool")
    header = f"| {'Metric':<23} |" + "".join(f" {m:>11} |" for m in ("Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"))
    width = len(header)
    line = "|" + "-" * (width - 2) + "|"
    out = ["|" + "=" * (width - 2) + "|", "|" + f" foo memory summary, device ID {index} ".center(width - 2) + "|"]
    out += [line, header, line]
    for title, key, fmt in rows:
        for pool in pools:
            label = title if pool == "all" else f"      from {pool.replace('_pool', '')} pool"
            values = [fmt(int(stats.get(f"{key}.{pool}.{m}", 0))) for m in ("current", "peak", "allocated", "freed")]
            out.append(f"| {label:<23} |" + "".join(f" {v:>11} |" for v in values))
        out.append(line)
    counters = (
        f"Device allocs: {stats.get('num_device_alloc', 0)}  frees: {stats.get('num_device_free', 0)}  "
        f"retries: {stats.get('num_alloc_retries', 0)}  OOMs: {stats.get('num_ooms', 0)}"
    )
    out.append(f"| {counters:<{width - 4}} |")
    out.append("|" + "=" * (width - 2) + "|")
    return "\n".join(out) + "\n"


def set_per_process_memory_fraction(fraction, device=None):
    """Cap the memory the caching allocator reserves on ``device`` at ``fraction`` of its total
    memory, as torch.cuda.set_per_process_memory_fraction: an allocation past the cap raises
    ``torch.OutOfMemoryError`` naming it (after the allocator frees its cache and retries)."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    _C._set_memory_fraction(fraction, _device_index(device))


def get_per_process_memory_fraction(device=None):
    """The fraction set by set_per_process_memory_fraction (1.0 when never set)."""
    return float(_C._get_memory_fraction(_device_index(device)))


def _stream_handle(stream):
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream  # a driver handle, as torch.cuda accepts a cudaStream_t
    return int(_C._stream_handle(stream.stream_id, stream.device_index))


def caching_allocator_alloc(size, device=None, stream=None):
    """A block of ``size`` bytes from the caching allocator on ``device``, for ``stream`` (a
    torch.foo.Stream / torch.Stream or a driver handle; default: the device's current stream),
    as an int pointer; free it with caching_allocator_delete. As torch.cuda.caching_allocator_alloc."""
    if device is None:
        device = stream.device_index if stream is not None and not isinstance(stream, int) else None
    index = _device_index(device)
    return int(_C._caching_allocator_alloc(int(size), index, _stream_handle(stream)))


def caching_allocator_delete(mem_ptr):
    """Return a block from caching_allocator_alloc to the allocator (cached for its stream)."""
    _C._caching_allocator_delete(int(mem_ptr))


class MemPool:
    """A private pool of foo's caching allocator, as torch.cuda.MemPool: allocations made on this
    thread inside ``use_mem_pool(pool)`` take blocks cached for this pool only, and freed ones go
    back to it, not to the common cache. When the last reference goes (the pool and the blocks
    using it), its cached blocks return to the driver; blocks still live then are freed to the
    driver by a later empty_cache(). ``id`` is ``(0, n)``, as a user-created cuda pool's."""

    def __init__(self):
        _C._lazy_init()
        self._id = (0, int(_C._mem_pool_create()))

    @property
    def id(self):
        return self._id

    def use_count(self):
        """The pool's references: the pool itself and each use_mem_pool block using it."""
        return _C._mem_pool_use_count(self._id[1])

    def snapshot(self):
        """The segments of memory_snapshot() that belong to this pool."""
        return [seg for seg in memory_snapshot() if tuple(seg["segment_pool_id"]) == self._id]

    def __del__(self):
        _id = getattr(self, "_id", None)
        if _id is not None and _C is not None:
            _C._mem_pool_release(_id[1])


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    """Route this thread's allocations on ``device`` (default: the current one) to ``pool`` for the
    block, as torch.cuda.use_mem_pool. Other threads (autograd's backward threads included) keep
    the common cache."""
    index = _device_index(device)
    _C._mem_pool_begin(index, pool.id[1])
    try:
        yield
    finally:
        _C._mem_pool_end(index, pool.id[1])
