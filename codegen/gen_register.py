"""RegisterFoo.cpp: unboxed aten wrappers (device check + guard) and their PrivateUse1 registration.

Structured entries also get torchgen's set_output subclasses and structured wrappers here
(structured.py); pointwise entries with a generated implementation live in generated/pointwise/.
"""

from __future__ import annotations

from . import structured
from .cpp_wrapper import wrapper
from .render import render, stamp
from .resolve import AtenOp, Plan


def aten_wrapper(op: AtenOp):
    return wrapper(op.f, op.kernel_f, op.kernel, op.kind, "aten", op.guard)


def structured_definitions(plan: Plan, ops: list[AtenOp]) -> list[str]:
    kernels = {k.name: k for k in plan.kernels}
    return [structured.definitions(kernels[op.kernel].group, op.kernel, op.f) for op in ops if op.kind == "structured"]


def gen_register(plan: Plan) -> str:
    generated = {k.name for k in plan.kernels if k.generated}
    ops = [op for op in plan.aten if op.kernel not in generated]
    return render(
        "RegisterFoo.cpp.j2",
        stamp=stamp(plan.manifest_path),
        structured=structured_definitions(plan, ops),
        wrappers=[aten_wrapper(op) for op in ops],
    )
