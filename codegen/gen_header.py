"""FooNativeFunctions.h: what csrc/aten implements by hand, one declaration per manifest entry.

- a plain kernel: its torchgen native C++ signature (no SymInt);
- a structured kernel: the class `structured_<kernel>` (structured.py) whose impl() it defines;
- a pointwise entry with `iterator: manual`: the hand-written kernel, plus the generated
  launcher `run_<kernel>` it calls on the iterator it builds (gen_pointwise.py).
Entries whose code is generated entirely (pointwise formulas) declare nothing here.
"""

from __future__ import annotations

from . import structured
from .cpp_wrapper import native_decl
from .gen_pointwise import launcher_decl
from .render import render, stamp
from .resolve import Kernel, Plan


def kernel_declaration(plan: Plan, k: Kernel) -> dict:
    """The comment and C++ declaration of one kernel (one block of the header)."""
    ns = "foo" if k.custom else "aten"
    registered = [str(op.f.func.name) for op in plan.ops_of(k) if op.f is not k.f]
    note = f" (also registered for {', '.join(registered)})" if registered else ""
    comment = f"{ns}::{k.f.func}{note}"
    if k.structured:
        decl = structured.class_declaration(k.group, k.name).rstrip("\n")
        comment += "; structured: define impl() with TORCH_IMPL_FUNC(" + k.name + ")"
    else:
        decl = native_decl(k.f, k.name)
    if k.pointwise is not None:  # iterator: manual
        decl += "\n" + launcher_decl(k) + ";"
    return {"comment": comment, "decl": decl}


def gen_header(plan: Plan) -> str:
    written = [k for k in plan.kernels if not k.generated]
    decls = [kernel_declaration(plan, k) for k in written]
    headers = sorted({structured.meta_header(k.group) for k in written if k.structured})
    return render("FooNativeFunctions.h.j2", stamp=stamp(plan.manifest_path), decls=decls, headers=headers)
