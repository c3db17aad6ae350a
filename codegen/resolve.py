"""Resolve manifest entries against torchgen's model into a Plan: what to declare and register."""

from __future__ import annotations

import re
from dataclasses import dataclass

from torchgen.api import python
from torchgen.model import FunctionSchema, Location, NativeFunction

from .aten import Aten
from .manifest import CustomEntry, Manifest, ManifestError, did_you_mean

NAMESPACE = "foo"
_NS = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)::(.*)\Z", re.S)


@dataclass(frozen=True)
class AtenOp:
    """One aten registration: operator `f` calls foo::native::<kernel>, declared for `kernel_f`."""

    f: NativeFunction
    kernel_f: NativeFunction
    kernel: str
    kind: str  # "direct" | "functional" (undefined out) | "inplace" (self as out)


@dataclass(frozen=True)
class CustomOp:
    f: NativeFunction
    kernel: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Kernel:
    name: str
    f: NativeFunction


@dataclass(frozen=True)
class Plan:
    manifest_path: str
    kernels: tuple[Kernel, ...]
    aten: tuple[AtenOp, ...]
    custom: tuple[CustomOp, ...]


def resolve(m: Manifest, aten: Aten) -> Plan:
    ops: list[AtenOp] = []
    kernels: list[Kernel] = []
    claimed: dict[str, tuple[int, str]] = {}  # op name -> (line, entry op that registers it)
    for e in m.aten:
        f = _lookup(e.op, e.line, m.path, aten)
        derived = _derived(f, aten) if e.out_as_primary else []
        for name in [e.op] + [str(g.func.name) for g, _ in derived]:
            _claim(claimed, name, e.line, e.op, m.path)
        kernels.append(Kernel(e.kernel, f))
        ops.append(AtenOp(f, f, e.kernel, "direct"))
        ops.extend(AtenOp(g, f, e.kernel, kind) for g, kind in derived)
    custom = _custom_ops(m, aten)
    kernels.extend(Kernel(c.kernel, c.f) for c in custom)
    return Plan(m.path, tuple(kernels), tuple(ops), tuple(custom))


def _lookup(op: str, line: int, path: str, aten: Aten) -> NativeFunction:
    f = aten.functions.get(op)
    if f is None:
        overloads = sorted(n for n in aten.functions if n.startswith(op + "."))[:5]
        hint = (
            "it has overloads: " + ", ".join(f"'{n}'" for n in overloads) + "; name one of them"
            if overloads
            else did_you_mean(op, aten.functions, "see torchgen/packaged/ATen/native/native_functions.yaml")
        )
        raise ManifestError(path, line, f"unknown aten op '{op}'", hint)
    if f.has_composite_implicit_autograd_kernel and op not in aten.cuda_kernels:
        raise ManifestError(
            path, line,
            f"aten op '{op}' is CompositeImplicitAutograd: it decomposes into other ops before reaching the foo backend",
            "list the ops it decomposes into instead (TORCH_SHOW_DISPATCH_TRACE=1 shows them)",
        )
    return f


def _derived(f: NativeFunction, aten: Aten) -> list[tuple[NativeFunction, str]]:
    """For an out= overload: the functional and in-place overloads of its group (not decomposing ones)."""
    g = aten.groups.get(str(f.func.name))
    if not f.func.is_out_fn() or g is None or g.out is not f:
        return []
    found = [(g.functional, "functional")]
    if g.inplace is not None and len(f.func.arguments.out) == 1:
        found.append((g.inplace, "inplace"))
    # A functional overload with arguments the out= kernel never sees (a factory's dtype, device...)
    # cannot be served by it; it keeps its own (usually composite) kernel. A CompositeImplicitAutograd
    # overload decomposes, except one that is also a structured delegate of this out= op
    # (silu_backward): its math kernel only serves backends without a kernel of the group, and
    # CPU/CUDA register the structured kernel instead, so we do too.
    seen = {a.name for a in f.func.arguments.flat_all}
    return [
        (h, kind)
        for h, kind in found
        if (not h.has_composite_implicit_autograd_kernel or h.structured_delegate == f.func.name)
        and {a.name for a in h.func.arguments.flat_all} <= seen
    ]


def _claim(claimed: dict, name: str, line: int, entry_op: str, path: str) -> None:
    if name not in claimed:
        claimed[name] = (line, entry_op)
        return
    first_line, first_op = claimed[name]
    if name == entry_op and name == first_op:
        raise ManifestError(
            path, line, f"duplicate entry for aten op '{name}' (already listed at line {first_line})", "remove one of them"
        )
    if name == entry_op:
        raise ManifestError(
            path, line,
            f"aten op '{name}' is already registered by the out-as-primary entry '{first_op}' at line {first_line}",
            f"remove this entry, or set 'out_as_primary: false' on the entry at line {first_line}",
        )
    raise ManifestError(
        path, line,
        f"out-as-primary entry '{entry_op}' also registers '{name}', already listed at line {first_line}",
        "remove that entry, or set 'out_as_primary: false' here",
    )


def _custom_ops(m: Manifest, aten: Aten) -> list[CustomOp]:
    seen: dict[str, int] = {}
    out = []
    for e in m.custom:
        f = _parse_custom(e, m.path, aten)
        name = str(f.func.name)
        if name in seen:
            raise ManifestError(
                m.path, e.line,
                f"duplicate custom op '{NAMESPACE}::{name}' (already declared at line {seen[name]})",
                "remove one, or give this one another overload name ('name.overload')",
            )
        seen[name] = e.line
        out.append(CustomOp(f, e.kernel, e.tags))
    return out


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _parse_custom(e: CustomEntry, path: str, aten: Aten) -> NativeFunction:
    match = _NS.match(e.schema)
    if match is None or match.group(1) != NAMESPACE:
        got = f"namespace '{match.group(1)}'" if match else "no namespace"
        raise ManifestError(
            path, e.line, f"custom op schema must be in the '{NAMESPACE}' namespace (got {got})",
            f"write it as '{NAMESPACE}::<name>(<args>) -> <returns>'",
        )
    try:
        FunctionSchema.parse(match.group(2).strip())
    except Exception as err:  # torchgen raises AssertionError/RuntimeError with the reason
        raise ManifestError(
            path, e.line, f"malformed custom op schema: {_one_line(err)}",
            "use the native_functions.yaml schema syntax, e.g. 'foo::axpby(Tensor x, Tensor y, float a=1) -> Tensor'",
        ) from None
    for tag in e.tags:
        if tag not in aten.tags:
            raise ManifestError(
                path, e.line, f"unknown tag '{tag}'", did_you_mean(tag, aten.tags, "use a torch.Tag name from tags.yaml")
            )
    entry = {"func": f"{NAMESPACE}::{match.group(2).strip()}", "tags": list(e.tags),
             # torchgen's model wants a dispatch entry for factory-like ops; we register kernels ourselves.
             "dispatch": {"CompositeExplicitAutograd": e.kernel}}
    try:
        f, _ = NativeFunction.from_yaml(entry, Location(path, e.line), set(aten.tags))
        python.dispatch_lambda_return_str(f)
    except Exception as err:
        raise ManifestError(
            path, e.line, f"unsupported custom op schema: {_one_line(err)}",
            "change the schema (see docs/codegen.md for what the bindings support)",
        ) from None
    return f
