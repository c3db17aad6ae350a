"""torch_foo/ops.pyi: typed stubs of the custom-op bindings."""

from __future__ import annotations

import re

from torchgen.api import python

from .gen_python import overload_groups
from .render import render, stamp
from .resolve import Plan

# Names the stub bodies may use -> the module they come from (only the used ones are imported).
_IMPORTS = {
    "Sequence": "collections.abc",
    "overload": "typing",
    "Generator": "torch", "SymInt": "torch", "Tensor": "torch", "memory_format": "torch",
    "contiguous_format": "torch", "strided": "torch",
    "DeviceLikeType": "torch._prims_common",
    **{n: "torch.types" for n in (
        "_bool", "_complex", "_device", "_dtype", "_float", "_int", "_layout", "_qscheme", "_size",
        "Device", "Number", "Storage",
    )},
}


def gen_pyi(plan: Plan) -> str:
    stubs = []
    for fs in overload_groups(plan.custom).values():
        for f in fs:
            ps = python.signature_from_schema(f.func, category_override=None, method=False, pyi=True)
            prefix = "@overload\n" if len(fs) > 1 else ""
            stubs.append(prefix + ps.signature_str_pyi())
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(stubs)))
    modules: dict[str, list[str]] = {}
    for name, module in _IMPORTS.items():
        if name in words:
            modules.setdefault(module, []).append(name)
    imports = [f"from {m} import {', '.join(sorted(ns, key=str.lower))}" for m, ns in sorted(modules.items())]
    return render("ops.pyi.j2", stamp=stamp(plan.manifest_path), imports=imports, stubs=stubs)
