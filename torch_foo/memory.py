"""``torch.foo.memory``: the allocator's statistics and tools, as ``torch.cuda.memory``.

Besides the statistics (also on ``torch.foo``), memory history for PyTorch's memory visualiser:

    torch.foo.memory._record_memory_history()          # start: stacks and events
    ...                                                 # run the code to inspect
    torch.foo.memory._dump_snapshot("snapshot.pickle")  # drop it on pytorch.org/memory_viz
    torch.foo.memory._record_memory_history(enabled=None)  # stop

The allocator (csrc/runtime/allocator.cpp) records, per device, alloc / free_requested /
free_completed / segment_alloc / segment_free / oom events with the Python stack (torch's
CapturedTraceback, symbolized when a snapshot is taken), and the stack of each live block.
"""

import pickle
import sys

from torch_foo import _C
from torch_foo._memory import (  # noqa: F401  (re-exported)
    MemPool,
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    get_per_process_memory_fraction,
    host_memory_stats,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    use_mem_pool,
)

__all__ = [
    "MemPool",
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "empty_cache",
    "get_per_process_memory_fraction",
    "host_memory_stats",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_snapshot",
    "memory_stats",
    "memory_summary",
    "reset_accumulated_memory_stats",
    "reset_max_memory_allocated",
    "reset_peak_memory_stats",
    "set_per_process_memory_fraction",
    "use_mem_pool",
]


def _record_memory_history(
    enabled="all",
    context="all",
    stacks="all",
    max_entries=sys.maxsize,
    device=None,
    clear_history=False,
):
    """Record allocation stacks and events on every foo device, as
    torch.cuda.memory._record_memory_history.

    Args:
        enabled: ``None`` stops recording (what was recorded stays until ``clear_history``);
            ``"state"`` keeps the stack of each live block; ``"all"`` also a history of every
            alloc/free event.
        context: which stacks are kept: ``None``, ``"state"`` (live blocks), ``"alloc"`` (also
            alloc events), ``"all"`` (also free events).
        stacks: ``"python"`` (Python and TorchScript frames) or ``"all"`` (also C++ frames, much
            slower to symbolize).
        max_entries: the most events kept per device (the newest).
        device: accepted for torch.cuda's signature; recording covers every device.
        clear_history: drop what was recorded before.
    """
    if isinstance(enabled, bool):  # torch.cuda's legacy form: _record_memory_history(True)
        enabled = "all" if enabled else None
    _C._lazy_init()
    _C._record_memory_history(enabled, context, stacks, int(max_entries), bool(clear_history))


def _snapshot(device=None):
    """The allocator's state and recorded history, in torch.cuda.memory._snapshot()'s format:
    ``{"segments": [...], "device_traces": [[event, ...] per device]}``; each segment's blocks
    and each event have ``frames`` ({"filename", "line", "name"}, innermost first) when recorded."""
    if not _C._is_initialized() or _C._is_in_bad_fork():
        return {"segments": [], "device_traces": []}
    snapshot = dict(_C._memory_history_snapshot(_C._device_count()))
    snapshot["allocator_settings"] = {}
    return snapshot


def _dump_snapshot(filename="dump_snapshot.pickle"):
    """Pickle _snapshot() to ``filename`` (what pytorch.org/memory_viz and
    ``python -m torch.cuda._memory_viz`` read)."""
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


def _save_segment_usage(filename="output.svg", snapshot=None):
    from torch.cuda._memory_viz import segment_plot

    with open(filename, "w") as f:
        f.write(segment_plot(_snapshot() if snapshot is None else snapshot))


def _save_memory_usage(filename="output.svg", snapshot=None):
    from torch.cuda._memory_viz import memory as _memory

    with open(filename, "w") as f:
        f.write(_memory(_snapshot() if snapshot is None else snapshot))

