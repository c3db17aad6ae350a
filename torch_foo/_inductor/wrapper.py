"""The Python wrapper Inductor generates for a foo graph, and the device calls it makes.

Inductor's own Python wrapper (``PythonWrapperCodegen``) allocates buffers (with the device's
allocator: ``empty_strided(..., device='foo')``), calls extern kernels (foo's aten ops) and frees
what is dead. What foo adds: the graph's kernels are collected while the scheduler generates
them and written, before the graph's ``call``, as one library (``compiler.load_module``: one
compile per graph, cached on disk); each kernel is then a module-level callable that launches on
the current foo stream and returns at once.
"""

from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen

from torch_foo._inductor.compiler import preamble


class FooWrapperCodegen(PythonWrapperCodegen):
    def __init__(self):
        super().__init__()
        self.foo_kernels = {}  # kernel name -> (source, ctypes signature)

    @staticmethod
    def create(is_subgraph, subgraph_name=None, parent_wrapper=None, partition_signatures=None):
        if is_subgraph:
            return FooSubgraphWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return FooWrapperCodegen()

    def add_foo_kernel(self, name, source, signature):
        self.foo_kernels[name] = (source, signature)

    def generate(self, is_inference):
        # Called once the scheduler has generated every kernel; the header precedes `call`.
        self._write_foo_module()
        return super().generate(is_inference)

    def _write_foo_module(self):
        if self.foo_kernels:
            source = preamble() + "\n" + "\n".join(src for src, _ in self.foo_kernels.values())
            assert "'''" not in source, "the kernel source must fit a raw ''' string"
            signatures = {name: sig for name, (_, sig) in self.foo_kernels.items()}
            self.header.writeline("from torch_foo._inductor.compiler import load_module as foo_load_module")
            self.header.writeline("foo_module = foo_load_module(r'''")
            for line in source.splitlines():
                self.header.writeline(line)
            self.header.writeline(f"''', {signatures!r})")
            for name in self.foo_kernels:
                self.header.writeline(f"{name} = foo_module.{name}")


class FooSubgraphWrapperCodegen(SubgraphPythonWrapperCodegen):
    """A subgraph's kernels (control flow, invoke_subgraph) join the parent graph's library."""

    def add_foo_kernel(self, name, source, signature):
        self.parent_wrapper.add_foo_kernel(name, source, signature)
