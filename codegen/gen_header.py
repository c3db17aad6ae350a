"""The kernel declarations csrc/aten implements by hand: one header per kernel,
native/<kernel>.h, so that a manifest edit changes only the headers of the kernels it touches and
recompiles only the files that include them; FooNativeFunctions.h includes them all (for code
outside csrc/aten). A header declares, per manifest entry of its kernel:

- a plain kernel: its torchgen native C++ signature (no SymInt);
- a structured kernel: the class `structured_<kernel>` (structured.py) whose impl() it defines;
- a pointwise entry with `iterator: manual`: the hand-written kernel, plus the generated
  launcher `run_<kernel>` it calls on the iterator it builds (gen_pointwise.py).
Entries whose code is generated entirely (pointwise formulas) get no header.
"""

from __future__ import annotations

from . import structured
from .cpp_wrapper import native_decl
from .gen_pointwise import launcher_decl
from .render import render, stamp
from .resolve import Kernel, Plan

KERNEL_HEADER_DIR = "native"


def kernel_header(kernel: str) -> str:
    """The include path of kernel's declaration, relative to the generated directory."""
    return f"{KERNEL_HEADER_DIR}/{kernel}.h"


def kernel_declaration(plan: Plan, k: Kernel) -> dict:
    """The comment and C++ declaration of one kernel (one block of its header)."""
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


def _includes(k: Kernel) -> list[str]:
    """What a kernel's declarations need beyond ATen.h."""
    if k.structured:
        return ["ATen/TensorIterator.h", "ATen/TensorMeta.h", structured.meta_header(k.group)]
    return ["ATen/TensorIterator.h"] if k.pointwise is not None else []


def gen_headers(plan: Plan) -> dict[str, str]:
    """Relative path -> content: native/<kernel>.h per hand-written kernel, and FooNativeFunctions.h."""
    decls: dict[str, list[dict]] = {}
    includes: dict[str, list[str]] = {}
    for k in plan.kernels:
        if k.generated:
            continue
        decls.setdefault(k.name, []).append(kernel_declaration(plan, k))
        includes.setdefault(k.name, [])
        includes[k.name] += [h for h in _includes(k) if h not in includes[k.name]]
    s = stamp(plan.manifest_path)
    files = {
        kernel_header(name): render("kernel.h.j2", stamp=s, decls=d, includes=includes[name]) for name, d in decls.items()
    }
    files["FooNativeFunctions.h"] = render("FooNativeFunctions.h.j2", stamp=s, headers=list(files))
    return files
