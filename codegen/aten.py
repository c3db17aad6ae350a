"""torchgen's model of ATen: the packaged native_functions.yaml and tags.yaml, loaded once."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import torchgen
from torchgen.gen import get_grouped_native_functions, parse_native_yaml, parse_tags_yaml
from torchgen.model import DispatchKey, NativeFunction, NativeFunctionsGroup


@dataclass(frozen=True)
class Aten:
    functions: dict[str, NativeFunction]  # "add.out" -> NativeFunction
    groups: dict[str, NativeFunctionsGroup]  # any member's name -> its group
    tags: frozenset[str]
    # Ops with a CUDA kernel of their own: for these a CompositeImplicitAutograd kernel only
    # serves backends without one (e.g. _fused_rms_norm), so a foo kernel is reached too.
    cuda_kernels: frozenset[str]
    # Ops with a CPU or CUDA kernel upstream: their `device_guard` flag describes a backend
    # kernel. An op upstream only has composite kernels says nothing about ours.
    device_kernels: frozenset[str]


def packaged_dir() -> str:
    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")


@functools.lru_cache(maxsize=1)
def load_aten() -> Aten:
    d = packaged_dir()
    parsed = parse_native_yaml(
        os.path.join(d, "native_functions.yaml"), os.path.join(d, "tags.yaml")
    )
    functions = {str(f.func.name): f for f in parsed.native_functions}
    groups: dict[str, NativeFunctionsGroup] = {}
    for g in get_grouped_native_functions(parsed.native_functions):
        if isinstance(g, NativeFunctionsGroup):
            for f in g.functions():
                groups[str(f.func.name)] = g
    tags = frozenset(parse_tags_yaml(os.path.join(d, "tags.yaml")))
    def with_kernel(key: DispatchKey) -> frozenset[str]:
        index = parsed.backend_indices[key]
        return frozenset(name for name, f in functions.items() if index.has_kernel(f))

    cuda_kernels = with_kernel(DispatchKey.CUDA)
    return Aten(functions, groups, tags, cuda_kernels, cuda_kernels | with_kernel(DispatchKey.CPU))
