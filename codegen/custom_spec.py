"""A custom entry's `pointwise:`, `derivatives:` and `reference:` checked against its schema.

A custom pointwise op is functional (one new Tensor) and builds one of the standard iterators,
whose shape, dtype and stride rules the generated fake implementation reproduces
(torch_foo/_fake_rules.py). Derivatives and the reference are Python expressions (they run in
torch_foo/_custom_ops.py and tests/ops/test_custom_ops.py): their syntax and the names they use
are checked here, so that a typo stops codegen at its manifest line instead of failing in a
backward pass.
"""

from __future__ import annotations

import ast
import builtins
import keyword
from dataclasses import dataclass

from torchgen.model import BaseTy, BaseType, NativeFunction

from .manifest import CustomEntry, Formula, ManifestError, did_you_mean
from .pointwise_spec import COMPLEX, FLOATING, Pointwise

# Iterators a custom pointwise op may name: the ones with a standard shape/dtype rule, which the
# fake implementation reproduces (torch_foo/_fake_rules.py; promotion kind of each).
CUSTOM_ITERATORS = ("unary_op", "unary_float_op", "binary_op", "binary_float_op", "comparison_op")
# Names every Python formula may use besides the op's arguments.
PYTHON_NAMES = ("torch", "math")
GRAD, RESULT = "grad", "result"


@dataclass(frozen=True)
class Derivative:
    """The gradient of one input: `formula` evaluated in the backward pass."""

    name: str  # the argument
    index: int  # its position among the schema's arguments
    formula: str
    line: int


def tensor_args(f: NativeFunction) -> list[str]:
    return [a.name for a in f.func.arguments.flat_all if a.type == BaseType(BaseTy.Tensor)]


def arg_names(f: NativeFunction) -> list[str]:
    return [a.name for a in f.func.arguments.flat_all]


def check_custom_pointwise(f: NativeFunction, spec: Pointwise, error) -> None:
    """A custom pointwise op: functional, one Tensor result, a standard iterator."""
    if f.func.arguments.out or len(f.func.returns) != 1 or f.func.returns[0].type != BaseType(BaseTy.Tensor) \
            or any(a.annotation is not None and a.annotation.is_write for a in f.func.arguments.flat_all):
        error(spec.line, "a custom pointwise op must be functional: it takes tensors and returns one new Tensor",
              "write its schema as 'foo::name(Tensor x, ...) -> Tensor'; an in-place or out= variant needs a kernel in csrc/aten")
    if spec.output and (spec.iterator, spec.output) != ("comparison_op", "bool"):
        error(spec.line_of("output"), "a custom pointwise op's result dtype is its iterator's (the promoted dtype, bool for comparison_op)",
              "remove 'output:'" + (" or write 'output: bool'" if spec.iterator == "comparison_op" else ""))
    if spec.iterator not in CUSTOM_ITERATORS:
        what = f"iterator '{spec.iterator}' has no standard shape rule" if spec.iterator else "the spec names no iterator"
        error(spec.line_of("iterator"), f"{what}, so its fake implementation cannot be generated",
              "add 'iterator:' with one of " + ", ".join(CUSTOM_ITERATORS) + " (binary_op: broadcast and promote, "
              "*_float_op: integers compute in the default float dtype)")


def differentiable_output(f: NativeFunction, spec: Pointwise | None) -> str:
    """'' when the op's result can carry a gradient, else why not."""
    if len(f.func.returns) != 1 or f.func.returns[0].type != BaseType(BaseTy.Tensor):
        return f"it returns {', '.join(str(r.type) for r in f.func.returns) or 'nothing'}, not one Tensor"
    if spec is None:
        return ""
    if spec.output and spec.output not in FLOATING + COMPLEX + ("real", "complex"):
        return f"its result is {spec.output}"
    if spec.iterator == "comparison_op":
        return "its result is bool (iterator: comparison_op)"
    claimed = {d for c in spec.cases for d in c.dtypes}
    if not claimed & set(FLOATING + COMPLEX) and spec.iterator not in ("unary_float_op", "binary_float_op"):
        return f"it computes only in {', '.join(sorted(claimed))}, which have no gradients"
    return ""


def _python_names(text: str, line: int, path: str, label: str, what: str) -> set[str]:
    """The free names of a Python expression (a syntax error is a manifest error at its line)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise ManifestError(path, line, f"{label}: the {what} is not a Python expression: {err.msg}",
                            "write it with torch ops, e.g. 'grad * torch.sigmoid(x)'") from None
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return used - bound - set(dir(builtins))


def _check_names(text: str, line: int, known: list[str], path: str, label: str, what: str) -> None:
    for name in sorted(_python_names(text, line, path, label, what)):
        if name not in known:
            raise ManifestError(
                path, line, f"{label}: the {what} uses '{name}', which is not an argument of the op",
                did_you_mean(name, known, "names: " + ", ".join(known)),
            )


def check_python_names(f: NativeFunction, e: CustomEntry, path: str, label: str) -> None:
    """Argument names become Python parameters of the generated fake and autograd functions."""
    for name in arg_names(f) + [GRAD, RESULT]:
        if keyword.iskeyword(name) and (e.pointwise is not None or e.derivatives or e.reference is not None):
            raise ManifestError(path, e.line, f"{label}: argument '{name}' is a Python keyword",
                                "rename it in the schema (the generated Python functions take it as a parameter)")
    for name in (GRAD, RESULT):
        if name in arg_names(f) and e.derivatives:
            raise ManifestError(path, e.line, f"{label}: argument '{name}' shadows the derivative formulas' '{name}'",
                                "rename the argument in the schema")


def check_derivatives(f: NativeFunction, e: CustomEntry, path: str, label: str) -> tuple[Derivative, ...]:
    if not e.derivatives:
        return ()
    why = differentiable_output(f, e.pointwise)
    if why:
        raise ManifestError(path, e.derivatives_line, f"{label}: 'derivatives:' on an output that is not differentiable ({why})",
                            "remove 'derivatives:' (autograd then treats the result as a constant)")
    args = arg_names(f)
    tensors = tensor_args(f)
    known = args + [GRAD, RESULT] + list(PYTHON_NAMES)
    out = []
    for name, formula in e.derivatives:
        if name not in args:
            raise ManifestError(path, formula.line, f"{label}: 'derivatives:' names '{name}', which is not an argument of the op",
                                did_you_mean(name, tensors, "differentiable arguments: " + (", ".join(tensors) or "none")))
        if name not in tensors:
            ty = next(str(a.type) for a in f.func.arguments.flat_all if a.name == name)
            raise ManifestError(path, formula.line, f"{label}: '{name}' is a {ty} argument, not differentiable",
                                "only Tensor arguments have derivatives; remove this one" + (
                                    f" (differentiable: {', '.join(tensors)})" if tensors else ""))
        if name in [a.name for a in f.func.arguments.flat_kwarg_only]:
            raise ManifestError(path, formula.line, f"{label}: '{name}' is keyword-only: register_autograd differentiates positional inputs only",
                                f"move '{name}' before the '*' of the schema")
        _check_names(formula.text, formula.line, known, path, label, f"derivative for '{name}'")
        out.append(Derivative(name, args.index(name), formula.text, formula.line))
    return tuple(out)


def check_reference(f: NativeFunction, reference: Formula | None, path: str, label: str) -> None:
    if reference is not None:
        _check_names(reference.text, reference.line, arg_names(f) + list(PYTHON_NAMES), path, label, "reference")
