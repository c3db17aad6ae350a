"""torch.compile on foo (docs/compile.md, docs/torch-foo-vs-cuda.md §10).

- Dynamo gets foo's device interface (device switching, streams, events, synchronize,
  properties): it traces code that uses them and asks it about the device.
- Inductor, the default backend, gets foo's code generator (``torch_foo._inductor``): fused
  kernels in the CUDA C++ dialect of csrc/kernels, compiled for sim (and cuda with nvcc) and
  launched on foo's current stream; ops it does not generate (matmul, convolution, attention)
  call foo's own aten kernels. ``backend="foo"`` names the same backend (the OpenReg convention).
- ``backend="aot_eager"`` (or any backend that runs the captured graph with eager ops) runs the
  graph's ops, forward and backward, on foo's own kernels.

The registrations run when the program first imports Dynamo or Inductor (``_import_hooks``),
not at ``import torch``.
"""

import torch

from torch_foo import _C, _import_hooks
from torch_foo import device as _foo


class InductorUnsupportedError(RuntimeError):
    """Kept for compatibility: Inductor refused foo graphs before torch_foo had a code generator.
    Nothing raises it any more except ``raise_if_triton_unavailable`` (foo kernels are not Triton)."""


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
            # Asked only by Triton-based code paths: foo's Inductor backend generates no Triton.
            raise InductorUnsupportedError("the foo device runs no Triton kernels: torch.compile's Inductor "
                                           "backend generates foo kernels (docs/compile.md)")

    device_interface.register_interface_for_device("foo", FooInterface)


def _index(device):
    if isinstance(device, int):
        return device
    device = torch.device(device)
    return _foo.current_device() if device.index is None else device.index


def _register_inductor(common):
    # Only small modules here: the hook runs in the middle of Inductor's own imports.
    from torch_foo import _inductor

    _inductor.register(common)


def _register_dynamo_backend(registry):
    from torch_foo._inductor import foo_backend

    registry.register_backend(foo_backend, name="foo")


def install():
    _import_hooks.after_import("torch._dynamo.device_interface", _register_device_interface)
    _import_hooks.after_import("torch._inductor.codegen.common", _register_inductor)
    _import_hooks.after_import("torch._dynamo.backends.registry", _register_dynamo_backend)
