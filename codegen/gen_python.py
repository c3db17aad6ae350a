"""FooPythonOps.cpp: PythonArgParser bindings of the custom ops, like torch's generated torch.* ones."""

from __future__ import annotations

from torchgen.api import cpp, python, translate
from torchgen.api.types import DispatcherSignature
from torchgen.context import native_function_manager
from torchgen.model import NativeFunction

from .render import cpp_string, render, stamp
from .resolve import CustomOp, Plan


def overload_groups(custom: tuple[CustomOp, ...]) -> dict[str, list[NativeFunction]]:
    """Python name -> its overloads, in manifest order."""
    groups: dict[str, list[NativeFunction]] = {}
    for c in custom:
        groups.setdefault(str(c.f.func.name.name), []).append(c.f)
    return groups


def _case(f: NativeFunction) -> dict:
    with native_function_manager(f):
        ps = python.signature_from_schema(f.func, category_override=None, method=False)
        lambda_exprs = python.dispatch_lambda_exprs(ps, f)
        ds = DispatcherSignature.from_schema(f.func)
        cpp_args = cpp.arguments(
            f.func.arguments, faithful=False, symint=True, method=False, cpp_no_default_args=f.cpp_no_default_args
        )
        return {
            "schema": f"foo::{f.func}",
            "signature": cpp_string(ps.signature_str(symint=True)),
            "nargs": ps.arguments_count(),
            "op_name": f"foo::{f.func.name.name}",
            "overload": f.func.name.overload_name,
            "op_type": ds.type(),
            "inits": [line for init in lambda_exprs.inits for line in init.rstrip().split("\n")],
            "lambda_params": ", ".join(f"{a.type_str} {a.name}" for a in python.dispatch_lambda_args(ps, f)),
            "lambda_args": ", ".join(lambda_exprs.exprs),
            "returns": python.dispatch_lambda_return_str(f),
            "op_args": ", ".join(e.expr for e in translate.translate(cpp_args, ds.arguments(), method=False)),
        }


def gen_python(plan: Plan) -> str:
    functions = []
    for name, fs in overload_groups(plan.custom).items():
        cases = [_case(f) for f in fs]
        functions.append({"name": name, "cases": cases, "nargs": max(c["nargs"] for c in cases)})
    return render("FooPythonOps.cpp.j2", stamp=stamp(plan.manifest_path), functions=functions)
