"""RegisterFoo.cpp: unboxed aten wrappers (device check + guard) and their PrivateUse1 registration."""

from __future__ import annotations

from .cpp_wrapper import wrapper
from .render import render, stamp
from .resolve import Plan


def gen_register(plan: Plan) -> str:
    wrappers = [wrapper(op.f, op.kernel_f, op.kernel, op.kind, "aten") for op in plan.aten]
    names = [w.name for w in wrappers]
    assert len(names) == len(set(names)), f"wrapper name clash: {names}"
    return render("RegisterFoo.cpp.j2", stamp=stamp(plan.manifest_path), wrappers=wrappers)
