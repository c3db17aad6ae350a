"""torch_foo/_custom_ops.py: what the custom ops' manifest entries say beyond their kernel, in Python.

- a fake (meta) implementation for every pointwise custom op: its iterator's shape, dtype and
  stride rule (torch_foo/_fake_rules.py), which torch.compile and torch.library.opcheck trace with;
- autograd from the entry's `derivatives:` (one Python expression per differentiable input, as in
  PyTorch's derivatives.yaml), registered with torch.library.register_autograd.

Why Python and not an Autograd-key kernel in C++: register_autograd is the route torch documents
for custom operators; AOTAutograd (torch.compile) and opcheck's autograd_registration and
aot_dispatch tests trace it through the Python dispatcher like any torch op, and the formulas
are torch expressions that run on foo through the native aten kernels (docs/codegen.md).
"""

from __future__ import annotations

import ast

from .custom_spec import GRAD, RESULT, arg_names, tensor_args
from .render import render, stamp
from .resolve import CustomOp, Plan


def python_default(text: str) -> str:
    """A schema default as Python source (schema defaults are Python literals: 1, True, None, "tanh")."""
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return repr(text)


def _params(c: CustomOp) -> list[str]:
    out, kw_only = [], c.f.func.arguments.flat_kwarg_only
    for a in c.f.func.arguments.flat_positional:
        out.append(a.name if a.default is None else f"{a.name}={python_default(a.default)}")
    if kw_only:
        out.append("*")
        out += [a.name if a.default is None else f"{a.name}={python_default(a.default)}" for a in kw_only]
    return out


def _uses(text: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)}


def _autograd(c: CustomOp) -> dict:
    positional = [a.name for a in c.f.func.arguments.flat_positional]
    kw_only = [a.name for a in c.f.func.arguments.flat_kwarg_only]
    tensors = set(tensor_args(c.f))
    used = set().union(*(_uses(d.formula) for d in c.derivatives)) & (set(arg_names(c.f)) | {RESULT})
    saved = [n for n in arg_names(c.f) if n in used and n in tensors] + ([RESULT] if RESULT in used else [])
    kept = [n for n in arg_names(c.f) if n in used and n not in tensors]  # non-tensor arguments
    formulas = {d.name: d.formula for d in c.derivatives}
    grads = []  # one per positional argument: its gradient when autograd asks for it
    for i, name in enumerate(positional):
        if name in formulas:
            grads.append(f"_grad_of({c.name!r}, {name!r}, {formulas[name]}, *ctx.meta_{name}) if ctx.needs_input_grad[{i}] else None")
        elif name in tensors:
            grads.append(f"_no_derivative({c.name!r}, {name!r}) if ctx.needs_input_grad[{i}] else None")
        else:
            grads.append("None")
    return {
        "positional": positional, "kw_only": kw_only, "saved": saved, "kept": kept,
        "metas": [n for n in positional if n in formulas], "grads": grads, "grad": GRAD,
    }


def _op(c: CustomOp) -> dict:
    key = str(c.f.func.name).replace(".", "_")
    fake = None
    if c.pointwise is not None:
        fake = {"iterator": c.pointwise.iterator, "operands": [o.name for o in c.pointwise.cases[0].inputs]}
    return {"name": c.name, "key": key, "params": ", ".join(_params(c)), "fake": fake,
            "autograd": _autograd(c) if c.derivatives else None}


def gen_custom_py(plan: Plan) -> str:
    ops = [_op(c) for c in plan.custom if c.pointwise is not None or c.derivatives]
    return render("custom_ops.py.j2", stamp=stamp(plan.manifest_path), ops=ops)
