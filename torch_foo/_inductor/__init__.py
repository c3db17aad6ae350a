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


def _code_version():
    """A digest of this package's code: it enters Inductor's FX graph cache key (through the
    device pass's uuid), so a cached wrapper written by an older code generator is not reused."""
    import hashlib
    import os

    digest = hashlib.sha256()
    here = os.path.dirname(__file__)
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()[:16]


def register(common):
    # Only small modules here: the hook runs in the middle of Inductor's own imports.
    from torch._inductor.custom_graph_pass import CustomGraphModulePass

    from torch_foo._inductor.device_op_overrides import FooDeviceOpOverrides

    class CodeVersion(CustomGraphModulePass):
        """Changes no graph; Inductor runs a device's pass on its graphs and keys its cache on
        the pass's uuid."""

        def __call__(self, gm):
            return None

        def uuid(self):
            return f"torch_foo.inductor.{_code_version()}"

    common.register_backend_for_device("foo", _Scheduling, _Wrapper, device_custom_pass=CodeVersion())
    common.register_device_op_overrides("foo", FooDeviceOpOverrides())


def foo_backend(gm, example_inputs, **kwargs):
    """The Dynamo backend ``"foo"``: Inductor, generating foo kernels for foo tensors (the OpenReg
    convention of a backend named after the device); ``torch.compile(fn)`` gets the same."""
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs, **kwargs)
