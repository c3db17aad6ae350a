"""FooNativeFunctions.h: the kernel declarations (torchgen native API, no SymInt)."""

from __future__ import annotations

from .cpp_wrapper import native_decl
from .render import render, stamp
from .resolve import Plan


def gen_header(plan: Plan) -> str:
    also: dict[str, list[str]] = {}
    for op in plan.aten:
        if op.kind != "direct":
            also.setdefault(str(op.kernel_f.func.name), []).append(str(op.f.func.name))
    custom = {id(c.f) for c in plan.custom}
    decls = []
    for k in plan.kernels:
        name = str(k.f.func.name)
        ns = "foo" if id(k.f) in custom else "aten"
        note = f" (also registered for {', '.join(also[name])})" if name in also else ""
        decls.append({"comment": f"{ns}::{k.f.func}{note}", "decl": native_decl(k.f, k.name)})
    return render("FooNativeFunctions.h.j2", stamp=stamp(plan.manifest_path), decls=decls)
