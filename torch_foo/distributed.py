"""``fooccl``: torch.distributed on the foo device.

Importing torch_foo registers the c10d backend ``fooccl`` for the ``foo`` device, so
``init_process_group("cpu:gloo,foo:fooccl")``, ``init_process_group(backend="fooccl")`` and a plain
``init_process_group()`` (foo is the accelerator) all run foo tensors' collectives through it, as
``nccl`` runs cuda tensors'. The backend is C++ (``csrc/distributed``); underneath it runs an
existing collective engine, chosen per process group (docs/distributed.md):

* ``gloo``: foo tensors are staged through pinned host memory on the group's stream and Gloo runs
  on the host copies (the sim driver; the cuda driver when torch has no NCCL);
* ``nccl``: NCCL runs on the foo tensors' device memory (the cuda driver with a torch built with
  NCCL and a visible GPU).

``TORCH_FOO_DIST_ENGINE`` = ``auto`` (default) | ``gloo`` | ``nccl`` overrides the choice.

Two forms a cuda user writes need more than the registration, because torch's group creation only
knows its own backends' devices (``_complete_group`` below, run for every group torch creates):
``init_process_group("gloo")`` gets a fooccl backend over a Gloo engine of its own for foo tensors, as
Gloo takes cuda tensors; ``init_process_group()`` with foo as the accelerator (torch 2.11-2.13 name
Gloo the default backend of a group that has only fooccl) gets fooccl as its default, which DDP reads.
"""

import os

import torch
import torch.distributed as dist

from torch_foo import _C

BACKEND_NAME = "fooccl"
_ENGINES = ("auto", "gloo", "nccl")


def _nccl_usable():
    """Why NCCL cannot run foo collectives here, or None when it can."""
    from torch_foo import driver

    if driver() != "cuda":
        return f"the foo driver is {driver()!r}, not 'cuda'"
    if not dist.is_nccl_available():
        return "this torch is built without NCCL"
    if not torch.cuda.is_available():
        return "torch.cuda sees no GPU"
    return None


def engine():
    """The collective engine a new fooccl process group uses: ``"gloo"`` or ``"nccl"``."""
    choice = os.environ.get("TORCH_FOO_DIST_ENGINE", "auto")
    if choice not in _ENGINES:
        raise ValueError(f"TORCH_FOO_DIST_ENGINE must be one of {_ENGINES}, got {choice!r}")
    why_not_nccl = _nccl_usable() if choice != "gloo" else "not asked for"
    if choice == "nccl" and why_not_nccl:
        raise RuntimeError(f"TORCH_FOO_DIST_ENGINE=nccl, but NCCL cannot run foo collectives: {why_not_nccl}")
    return "nccl" if choice == "nccl" or (choice == "auto" and not why_not_nccl) else "gloo"


def _check_cuda_stream_ids():
    # The NCCL engine hands its foo stream to torch.cuda by the cudaStream_t, as the id torch.cuda
    # gives an external stream (csrc/distributed/nccl_engine.cpp). Fail clearly if that changes.
    handle = torch.foo.Stream().foo_stream
    stream_id = torch.cuda.ExternalStream(handle).stream_id
    if stream_id != handle:
        raise RuntimeError(
            f"fooccl: torch {torch.__version__} names external CUDA streams by id {stream_id:#x}, not by "
            f"their handle {handle:#x}; the NCCL engine cannot order NCCL after foo streams. "
            "Use TORCH_FOO_DIST_ENGINE=gloo."
        )


def _create_backend(dist_options, backend_options):
    """register_backend's creator (extended API): a fooccl backend over a new engine group."""
    kind = engine()
    store = dist.PrefixStore(f"{BACKEND_NAME}/{kind}/", dist_options.store)
    rank, size, timeout = dist_options.group_rank, dist_options.group_size, dist_options.timeout
    if kind == "nccl":
        _check_cuda_stream_ids()
        options = dist.ProcessGroupNCCL.Options()
        options._timeout = timeout
        inner = dist.ProcessGroupNCCL(store, rank, size, options)
    else:
        inner = dist.ProcessGroupGloo(store, rank, size, timeout)
    return _C._distributed.FooBackend(inner, kind, rank, size, timeout)


def _complete_group(pg):
    """Make a new process group serve foo tensors the way it serves cuda tensors (module docstring)."""
    devices = {device.type for device in pg._device_types}
    if "foo" in devices:
        if "cpu" not in devices and pg._get_backend_name() == dist.Backend.GLOO:
            pg._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)  # the default must exist
        return
    if "cpu" not in devices or not isinstance(pg._get_backend(torch.device("cpu")), dist.ProcessGroupGloo):
        return
    # A Gloo engine of foo's own: sharing the cpu one would let a foo collective, issued when the
    # group's stream reaches it, take Gloo's next tag before a cpu collective called earlier.
    store = dist.PrefixStore(f"{BACKEND_NAME}/gloo/", dist.distributed_c10d._world.pg_map[pg][1])
    timeout = pg._get_backend(torch.device("cpu")).options._timeout
    inner = dist.ProcessGroupGloo(store, pg.rank(), pg.size(), timeout)
    backend = _C._distributed.FooBackend(inner, "gloo", pg.rank(), pg.size(), timeout)
    pg._register_backend(torch.device("foo"), dist.ProcessGroup.BackendType.CUSTOM, backend)


def _hook_group_creation():
    # torch registers every group it creates by name once its backends are registered
    # (distributed_c10d._register_process_group, looked up at call time in 2.11-2.14).
    c10d = dist.distributed_c10d
    register = c10d._register_process_group

    def _register_process_group(group_name, pg):
        _complete_group(pg)
        return register(group_name, pg)

    c10d._register_process_group = _register_process_group


def _register():
    if not dist.is_available() or BACKEND_NAME.upper() in dist.Backend._plugins:
        return
    dist.Backend.register_backend(BACKEND_NAME, _create_backend, extended_api=True, devices=["foo"])
    _hook_group_creation()


_register()

FooWork = _C._distributed.FooWork
FooBackend = _C._distributed.FooBackend

__all__ = ["BACKEND_NAME", "FooBackend", "FooWork", "engine"]
