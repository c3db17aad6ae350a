"""torch.compile on foo (docs/torch-foo-vs-cuda.md §10).

- Dynamo gets foo's device interface (device switching, streams, events, synchronize,
  properties): it traces code that uses them and asks it about the device.
- ``backend="aot_eager"`` (or any backend that runs the captured graph with eager ops) runs the
  graph's ops, forward and backward, on foo's own kernels.
- Inductor, the default backend, has no code generator for foo: it writes Triton kernels for GPUs
  or C++/OpenMP loops over CPU memory, and neither runs on foo (on the cuda driver foo memory is
  GPU memory; on sim it belongs to the simulated device and is only coherent at its streams'
  synchronisation points). A foo-specific Inductor backend is a project of its own, so Inductor
  refuses foo graphs before lowering them, with an error that says to use aot_eager.

Both registrations run when the program first imports Dynamo or Inductor (``_import_hooks``),
not at ``import torch``.
"""

import torch

from torch_foo import _C, _import_hooks
from torch_foo import device as _foo

INDUCTOR_UNSUPPORTED = (
    "torch.compile's default backend, Inductor, cannot compile for the foo device: it generates "
    "Triton kernels for GPUs or C++/OpenMP loops over CPU memory, and neither runs on foo. "
    'Use torch.compile(..., backend="aot_eager"): it captures the same graph (forward, backward, '
    "dynamic shapes) and runs it with foo's own kernels."
)


class InductorUnsupportedError(RuntimeError):
    """torch.compile with Inductor (the default backend) was given a graph that uses foo."""


def _register_device_interface(device_interface):
    class FooInterface(device_interface.DeviceInterface):
        """Dynamo's view of the foo runtime: torch.foo's functions under the names Dynamo uses."""

        device = _foo.device
        Stream = _foo.Stream
        Event = torch.Event  # Dynamo needs the class; torch.foo.Event() returns these objects

        class Worker:
            """Device facts for compile workers, which must not start the device themselves:
            read once in the parent (as for cuda) and cached."""

            @staticmethod
            def set_device(device):
                device_interface.caching_worker_current_devices["foo"] = device

            @staticmethod
            def current_device():
                cached = device_interface.caching_worker_current_devices
                return cached["foo"] if "foo" in cached else _foo.current_device()

            @staticmethod
            def get_device_properties(device=None):
                index = FooInterface.Worker.current_device() if device is None else _index(device)
                cache = device_interface.caching_worker_device_properties
                if "foo" not in cache:
                    cache["foo"] = [_foo.get_device_properties(i) for i in range(_foo.device_count())]
                return cache["foo"][index]

        current_device = staticmethod(_foo.current_device)
        set_device = staticmethod(_foo.set_device)
        device_count = staticmethod(_foo.device_count)
        is_available = staticmethod(_foo.is_available)
        synchronize = staticmethod(_foo.synchronize)
        stream = staticmethod(_foo.stream)
        current_stream = staticmethod(_foo.current_stream)
        set_stream = staticmethod(_foo.set_stream)
        get_device_properties = staticmethod(_foo.get_device_properties)
        memory_allocated = staticmethod(_foo.memory_allocated)
        is_bf16_supported = staticmethod(_foo.is_bf16_supported)

        @staticmethod
        def exchange_device(device):
            return _C._exchange_device(device)

        @staticmethod
        def maybe_exchange_device(device):
            return _C._exchange_device(device) if device >= 0 else -1

        @staticmethod
        def _set_stream_by_id(stream_id, device_index, device_type):
            _foo.set_stream(torch.Stream(stream_id=stream_id, device_index=device_index, device_type=device_type))

        @staticmethod
        def get_raw_stream(device_idx):
            # Python sees streams by their c10 id; the driver handle stays in C++.
            return _foo.current_stream(device_idx).stream_id

        @staticmethod
        def get_compute_capability(device=None):
            major, minor = _foo.get_device_capability(device)
            return major * 10 + minor

        @staticmethod
        def raise_if_triton_unavailable(device=None):
            raise InductorUnsupportedError(INDUCTOR_UNSUPPORTED)

    device_interface.register_interface_for_device("foo", FooInterface)


def _index(device):
    if isinstance(device, int):
        return device
    device = torch.device(device)
    return _foo.current_device() if device.index is None else device.index


def _refuse_foo_graphs(gm):
    raise InductorUnsupportedError(INDUCTOR_UNSUPPORTED)


def _register_inductor_refusal(common):
    # Only this small module: the hook runs in the middle of Inductor's own imports.
    from torch._inductor.custom_graph_pass import CustomGraphModulePass

    class RefuseFooGraphs(CustomGraphModulePass):
        """Inductor runs a device's custom pass on every graph with inputs or outputs on the
        device, after AOT autograd and before lowering: the earliest point Inductor offers."""

        def __call__(self, gm):
            _refuse_foo_graphs(gm)

        def uuid(self):
            return "torch_foo.refuse_inductor.v1"

    class NoCodegen:
        """Inductor's code generators for foo: there are none. A graph whose foo tensors are
        only intermediates (CPU inputs and outputs) skips the pass above and reaches this while
        lowering. Inductor reads class flags (supports_caching) before making one."""

        supports_caching = False

        def __init__(self, *args, **kwargs):
            raise InductorUnsupportedError(INDUCTOR_UNSUPPORTED)

        @classmethod
        def create(cls, *args, **kwargs):
            raise InductorUnsupportedError(INDUCTOR_UNSUPPORTED)

    common.register_backend_for_device("foo", NoCodegen, NoCodegen, device_custom_pass=RefuseFooGraphs())
    # Looked up just before the wrapper is made; the base class generates nothing.
    common.register_device_op_overrides("foo", common.DeviceOpOverrides())


def install():
    _import_hooks.after_import("torch._dynamo.device_interface", _register_device_interface)
    _import_hooks.after_import("torch._inductor.codegen.common", _register_inductor_refusal)
