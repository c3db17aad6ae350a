"""FooCustomOps.cpp: TORCH_LIBRARY(foo) schema definitions and their PrivateUse1 wrappers."""

from __future__ import annotations

from .cpp_wrapper import wrapper
from .gen_header import kernel_header
from .render import cpp_string, render, stamp
from .resolve import Plan


def gen_custom(plan: Plan) -> str:
    defs = [
        {"schema": cpp_string(str(c.f.func)), "tags": ", ".join(f"at::Tag::{t}" for t in c.tags)} for c in plan.custom
    ]
    # Pointwise custom ops register their kernel in their own generated/pointwise/<kernel>.cpp.
    by_hand = [c for c in plan.custom if c.pointwise is None]
    wrappers = [wrapper(c.f, c.f, c.kernel, "direct", "foo") for c in by_hand]
    headers = list(dict.fromkeys(kernel_header(c.kernel) for c in by_hand))
    return render("FooCustomOps.cpp.j2", stamp=stamp(plan.manifest_path), defs=defs, wrappers=wrappers, headers=headers)
