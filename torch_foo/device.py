"""``torch.foo``: the device module, with torch.cuda's names.

Registered by ``torch_foo/__init__.py`` with ``torch._register_device_module``;
PyTorch itself calls some of it (``torch.load`` -> device_count, autocast ->
get_amp_supported_dtype, ``torch.manual_seed`` -> manual_seed_all, ...).

Device arguments accept an int, ``"foo"``, ``"foo:1"``, ``torch.device("foo", 1)``
or None (the current device). The current device is per thread, as in CUDA.
Nothing runs at import: the driver is selected on first use by the C++ runtime.
"""

import dataclasses

import torch

from torch_foo import _C
from torch_foo import memory  # noqa: F401  (torch.foo.memory, as torch.cuda.memory)
from torch_foo.memory import *  # noqa: F401,F403  (re-exported: memory.__all__, as torch.cuda's)
from torch_foo._random import (  # noqa: F401  (re-exported)
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from torch_foo._streams import (  # noqa: F401  (re-exported)
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)
from torch_foo.graphs import (  # noqa: F401  (re-exported)
    CUDAGraph,
    FooGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from torch_foo._utils import _device_index


def is_available():
    return device_count() > 0


def device_count():
    """Number of foo devices; 0 when the driver cannot start (never raises)."""
    return _C._device_count()


def is_initialized():
    """Whether this process started the driver (False in a child forked after the parent did)."""
    return _C._is_initialized() and not _C._is_in_bad_fork()


def _lazy_init():
    """Start the driver; in a child forked after the parent started it, raise naming 'spawn'."""
    _C._lazy_init()


def init():
    """Initialise the driver now instead of on first use."""
    _lazy_init()


def _is_in_bad_fork():
    """True in a child forked after the parent initialised foo: there foo raises, naming 'spawn'.

    torch.manual_seed (e.g. in every DataLoader worker) asks this before seeding foo, so
    CPU-only work in such a child keeps working.
    """
    return _C._is_in_bad_fork()


def current_device():
    return _C._current_device()


def set_device(device):
    """Make ``device`` current in this thread (a negative int is ignored, as in torch.cuda)."""
    if isinstance(device, int) and device < 0:
        return
    _C._set_device(_device_index(device))


class device:
    """Context manager selecting a foo device for the block, like torch.cuda.device.

    None or -1 leaves the current device unchanged.
    """

    def __init__(self, device):
        if device is None or (isinstance(device, int) and device < 0):
            self.idx = -1
        else:
            self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = _C._exchange_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _C._set_device(self.prev_idx)
        return False


class device_of(device):
    """Select the device of a tensor or storage for the block; no-op for non-foo objects."""

    def __init__(self, obj):
        dev = obj.device
        super().__init__(dev.index if dev.type == "foo" else -1)


def synchronize(device=None):
    """Wait for all work queued on every stream of ``device``."""
    _C._synchronize(_device_index(device))


_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode):
    """As torch.cuda.set_sync_debug_mode: ``"default"``/0 off, ``"warn"``/1 warns, ``"error"``/2
    raises when an op makes the host wait for the device (a scalar or error flag read back, a
    blocking copy between host and foo, Stream.synchronize()); torch.foo.synchronize() never."""
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _C._set_sync_debug_mode(debug_mode)


def get_sync_debug_mode():
    """The mode set_sync_debug_mode set: 0 (off), 1 (warn) or 2 (error)."""
    return _C._get_sync_debug_mode()


@dataclasses.dataclass(frozen=True)
class _DeviceProperties:
    """torch.cuda.get_device_properties' fields (sizes in bytes); see docs/torch-foo-vs-cuda.md."""

    name: str
    uuid: str
    total_memory: int
    multi_processor_count: int
    major: int
    minor: int
    warp_size: int
    max_threads_per_block: int
    max_threads_per_multi_processor: int
    max_shared_memory_per_block: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_multiprocessor: int
    regs_per_multiprocessor: int
    L2_cache_size: int
    is_integrated: bool
    is_multi_gpu_board: bool

    def __repr__(self):
        return (
            f"_FooDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
            f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)"
        )


def get_device_properties(device=None):
    """Properties of ``device`` (default: current); an invalid index raises naming the device count."""
    props = _C._device_properties(_device_index(device))
    # Take the documented fields only, so an extra key from C++ does not break this.
    return _DeviceProperties(**{f.name: props[f.name] for f in dataclasses.fields(_DeviceProperties)})


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation=True):
    return True


def get_amp_supported_dtype():
    """Dtypes autocast may cast to on foo."""
    return [torch.float16, torch.bfloat16]


def _get_generator(device):
    """The default generator of ``device`` (a torch.device), as torch.cuda._get_generator.

    AOT Autograd's graph-safe RNG asks ``torch.<device type>._get_generator`` by name.
    """
    return _C._default_generator(_device_index(device))


_default_generators = None


def __getattr__(name):
    # Module attributes computed on access (PEP 562), never at import: both need the driver.
    global _default_generators
    if name == "_initialized":
        # torch.utils.checkpoint reads `getattr(torch.<device>, "_initialized", False)` and
        # stashes and restores the device's RNG state only when it is true; without it a
        # checkpointed dropout recomputes with another mask (silently wrong gradients).
        # torch.cuda keeps a flag set by lazy init; the runtime knows the same thing.
        return is_initialized()
    if name == "default_generators":
        # Needs the device count, which starts the driver.
        if _default_generators is None:
            _default_generators = tuple(_C._default_generator(i) for i in range(device_count()))
        return _default_generators
    raise AttributeError(f"module 'torch.foo' has no attribute {name!r}")
