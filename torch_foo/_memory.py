"""Caching-allocator statistics of ``torch.foo``, named as in ``torch.cuda``.

All numbers are bytes and come from ``_C._memory_stats(i)``:
``allocated`` (held by live tensors), ``reserved`` (held by the allocator,
>= allocated) and their peaks since the last ``reset_peak_memory_stats``.
"""

from torch_foo import _C
from torch_foo._utils import _device_index


def _stats(device):
    return _C._memory_stats(_device_index(device))


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


def empty_cache():
    """Return the allocator's unused cached blocks (on every device) to the driver."""
    _C._empty_cache()


def memory_stats(device=None):
    """The allocator's counters, with torch.cuda.memory_stats' key names so tools reading those work."""
    s = _stats(device)
    return {
        "allocated_bytes.all.current": int(s["allocated"]),
        "allocated_bytes.all.peak": int(s["peak_allocated"]),
        "reserved_bytes.all.current": int(s["reserved"]),
        "reserved_bytes.all.peak": int(s["peak_reserved"]),
    }
