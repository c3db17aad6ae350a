"""torch.compile's default backend, Inductor, for the foo device (docs/compile.md).

``register(common)`` runs when the program first imports ``torch._inductor.codegen.common``
(``torch_foo._compile``): it registers foo's scheduling (fusion and kernel generation,
``kernel.py``), its wrapper code generator (``wrapper.py``) and its device calls
(``device_op_overrides.py``). The scheduling and wrapper modules import Inductor's code
generators, so they load when Inductor first asks for them, not inside Inductor's own imports.
"""


class _Scheduling:
    """Inductor wants a class (it asks issubclass of it); making one makes foo's real scheduling."""

    def __new__(cls, scheduler):
        from torch_foo._inductor.kernel import FooScheduling

        return FooScheduling(scheduler)


class _Wrapper:
    """Inductor reads ``supports_caching`` before it makes a wrapper with ``create``."""

    supports_caching = True  # the generated module is plain Python + a disk-cached library

    @staticmethod
    def create(*args, **kwargs):
        from torch_foo._inductor.wrapper import FooWrapperCodegen

        return FooWrapperCodegen.create(*args, **kwargs)


def register(common):
    from torch_foo._inductor.device_op_overrides import FooDeviceOpOverrides

    common.register_backend_for_device("foo", _Scheduling, _Wrapper)
    common.register_device_op_overrides("foo", FooDeviceOpOverrides())


def foo_backend(gm, example_inputs, **kwargs):
    """The Dynamo backend ``"foo"``: Inductor, generating foo kernels for foo tensors (the OpenReg
    convention of a backend named after the device); ``torch.compile(fn)`` gets the same."""
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs, **kwargs)
