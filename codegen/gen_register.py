"""RegisterFoo_<i>.cpp: unboxed aten wrappers (device check + guard) and their PrivateUse1
registration, split over REGISTER_SHARDS files by kernel. One file took ~17 s of CPU to compile and
every manifest edit changed it; a shard is an eighth of that, and adding an op changes one shard
(the others keep their content, so Ninja does not recompile them). CMake reads REGISTER_SHARDS
from this file.

Structured entries also get torchgen's set_output subclasses and structured wrappers in their
shard (structured.py); pointwise entries with a generated implementation register in their own
generated/pointwise/<kernel>.cpp and appear in no shard.
"""

from __future__ import annotations

import dataclasses
import zlib

from . import structured
from .cpp_wrapper import wrapper
from .gen_header import kernel_header
from .render import render, stamp
from .resolve import AtenOp, Plan

REGISTER_SHARDS = 8


def register_shard(kernel: str) -> int:
    """The shard of a kernel's registrations: fixed by its name alone, so it never moves."""
    return zlib.crc32(kernel.encode()) % REGISTER_SHARDS


def aten_wrapper(op: AtenOp):
    return wrapper(op.f, op.kernel_f, op.kernel, op.kind, "aten", op.guard)


def structured_definitions(plan: Plan, ops: list[AtenOp]) -> list[str]:
    kernels = {k.name: k for k in plan.kernels}
    return [structured.definitions(kernels[op.kernel].group, op.kernel, op.f) for op in ops if op.kind == "structured"]


def gen_register_shards(plan: Plan) -> dict[str, str]:
    """File name -> content of every shard (a shard without ops registers nothing)."""
    generated = {k.name for k in plan.kernels if k.generated}
    shards: list[list] = [[] for _ in range(REGISTER_SHARDS)]
    for op in plan.aten:
        if op.kernel not in generated:
            shards[register_shard(op.kernel)].append(op)
    return {
        f"RegisterFoo_{i}.cpp": gen_register(dataclasses.replace(plan, aten=tuple(ops)))
        for i, ops in enumerate(shards)
    }


def gen_register(plan: Plan) -> str:
    wrappers = [aten_wrapper(op) for op in plan.aten]
    names = [w.name for w in wrappers]
    assert len(names) == len(set(names)), f"wrapper name clash: {names}"
    headers = list(dict.fromkeys(kernel_header(op.kernel) for op in plan.aten))
    return render(
        "RegisterFoo.cpp.j2", stamp=stamp(plan.manifest_path), wrappers=wrappers, headers=headers,
        structured=structured_definitions(plan, list(plan.aten)),
    )
