"""The kernel declarations (torchgen native API, no SymInt): one header per kernel,
native/<kernel>.h, so that a manifest edit changes only the headers of the kernels it touches and
recompiles only the files that include them; FooNativeFunctions.h includes them all (for code
outside csrc/aten)."""

from __future__ import annotations

from .cpp_wrapper import native_decl
from .render import render, stamp
from .resolve import Plan

KERNEL_HEADER_DIR = "native"


def kernel_header(kernel: str) -> str:
    """The include path of kernel's declaration, relative to the generated directory."""
    return f"{KERNEL_HEADER_DIR}/{kernel}.h"


def gen_headers(plan: Plan) -> dict[str, str]:
    """Relative path -> content: native/<kernel>.h per kernel name, and FooNativeFunctions.h."""
    also: dict[str, list[str]] = {}
    for op in plan.aten:
        if op.kind != "direct":
            also.setdefault(str(op.kernel_f.func.name), []).append(str(op.f.func.name))
    custom = {id(c.f) for c in plan.custom}
    by_kernel: dict[str, list[dict[str, str]]] = {}
    for k in plan.kernels:
        name = str(k.f.func.name)
        ns = "foo" if id(k.f) in custom else "aten"
        note = f" (also registered for {', '.join(also[name])})" if name in also else ""
        by_kernel.setdefault(k.name, []).append({"comment": f"{ns}::{k.f.func}{note}", "decl": native_decl(k.f, k.name)})
    s = stamp(plan.manifest_path)
    files = {kernel_header(k): render("kernel.h.j2", stamp=s, decls=decls) for k, decls in by_kernel.items()}
    files["FooNativeFunctions.h"] = render("FooNativeFunctions.h.j2", stamp=s, headers=list(files))
    return files
