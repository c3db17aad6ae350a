"""Resolve manifest entries against torchgen's model into a Plan: what to declare and register."""

from __future__ import annotations

import re
from dataclasses import dataclass

from torchgen.api import python
from torchgen.model import BaseTy, BaseType, FunctionSchema, Location, NativeFunction, NativeFunctionsGroup, OptionalType

from . import structured
from .aten import Aten
from .cpp_wrapper import needs_guard
from .custom_spec import Derivative, check_custom_pointwise, check_derivatives, check_python_names, check_reference
from .manifest import AtenEntry, CustomEntry, Manifest, ManifestError, did_you_mean
from .names import CPP_KEYWORDS
from .pointwise_spec import Case, Operand, Pointwise

NAMESPACE = "foo"
_NS = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)::(.*)\Z", re.S)


@dataclass(frozen=True)
class AtenOp:
    """One aten registration: operator `f`, served by the entry's kernel (declared for `kernel_f`).

    kind: "direct" (calls the kernel), "functional" (passes an undefined out), "inplace" (self as
    out), or "structured" (torchgen's structured wrapper around the entry's structured class).
    """

    f: NativeFunction
    kernel_f: NativeFunction
    kernel: str
    kind: str
    line: int  # of the manifest entry
    guard: bool = True  # a DeviceGuard around the call (torchgen's device_guard; see needs_guard)


@dataclass(frozen=True)
class CustomOp:
    f: NativeFunction
    kernel: str
    tags: tuple[str, ...]
    pointwise: PointwiseKernel | None = None  # generated kernel and fake implementation
    derivatives: tuple[Derivative, ...] = ()  # generated autograd (torch_foo/_custom_ops.py)
    line: int = 0

    @property
    def name(self) -> str:
        return f"{NAMESPACE}::{self.f.func.name}"


@dataclass(frozen=True)
class Scalar:
    """A non-tensor argument the formula reads: converted on the host, passed in PointwiseArgs."""

    name: str
    conversion: str  # compute | element | int64
    optional: bool


@dataclass(frozen=True)
class PointwiseKernel:
    """An entry's pointwise spec checked against its schema."""

    spec: Pointwise
    op_name: str  # for messages: "add"
    cases: tuple[Case, ...]  # inputs resolved (never None)
    scalars: tuple[Scalar, ...]
    iterator: str  # "" = structured (ATen's meta function builds the iterator)


@dataclass(frozen=True)
class Kernel:
    """What one manifest entry declares: a function, or a structured class (group set)."""

    name: str
    f: NativeFunction
    line: int
    group: NativeFunctionsGroup | None = None  # structured: the class implements impl()
    pointwise: PointwiseKernel | None = None  # generated from the manifest's formula
    custom: bool = False

    @property
    def structured(self) -> bool:
        return self.group is not None

    @property
    def generated(self) -> bool:
        """Implemented by generated code (generated/pointwise/), not by csrc/aten."""
        return self.pointwise is not None and self.pointwise.iterator != "manual"


@dataclass(frozen=True)
class Plan:
    manifest_path: str
    kernels: tuple[Kernel, ...]
    aten: tuple[AtenOp, ...]
    custom: tuple[CustomOp, ...]

    def ops_of(self, kernel: Kernel) -> list[AtenOp]:
        return [op for op in self.aten if op.kernel == kernel.name and op.kernel_f is kernel.f]


def resolve(m: Manifest, aten: Aten) -> Plan:
    ops: list[AtenOp] = []
    kernels: list[Kernel] = []
    claimed: dict[str, tuple[int, str]] = {}  # op name -> (line, entry op that registers it)
    names: dict[str, int] = {}  # kernel name -> line of the entry that declares it
    for e in m.aten:
        f = _lookup(e.op, e.line, m.path, aten)
        group = _structured_group(f, e, aten)
        derived = _derived(f, aten) if e.out_as_primary else []
        for name in [e.op] + [str(g.func.name) for g, _ in derived]:
            _claim(claimed, name, e.line, e.op, m.path)
        _claim_kernel(names, e.kernel, e.line, e.kernel_line or e.line, m.path)
        pointwise = _pointwise(e, f, group, m.path) if e.pointwise else None
        kernels.append(Kernel(e.kernel, f, e.line, group, pointwise))
        for g, kind in [(f, "direct")] + derived:
            kind = "structured" if group is not None else kind
            ops.append(AtenOp(g, f, e.kernel, kind, e.line, needs_guard(g, aten.device_kernels)))
            if group is not None:
                _check_structured(group, e, g, m.path)
    custom = _custom_ops(m, aten)
    for c, e in zip(custom, m.custom):
        _claim_kernel(names, c.kernel, e.line, e.kernel_line or e.line, m.path)
        kernels.append(Kernel(c.kernel, c.f, e.line, pointwise=c.pointwise, custom=True))
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


def _structured_group(f: NativeFunction, e: AtenEntry, aten: Aten) -> NativeFunctionsGroup | None:
    """The group whose structured class the entry implements: an out= entry of a structured group
    (out-as-primary), as CPU and CUDA implement it. Other entries keep a plain kernel."""
    g = aten.groups.get(str(f.func.name))
    if e.out_as_primary and g is not None and g.structured and g.out is f:
        return g
    return None


def _check_structured(group: NativeFunctionsGroup, e: AtenEntry, f: NativeFunction, path: str) -> None:
    """torchgen generates the structured classes; a group it cannot handle is an error of this
    entry, not a traceback (results are cached, so generating again later is free)."""
    try:
        structured.class_declaration(group, e.kernel)
        structured.definitions(group, e.kernel, f)
    except Exception as err:  # torchgen raises AssertionError/RuntimeError with the reason
        raise ManifestError(
            path, e.line, f"torchgen cannot generate the structured kernel of '{f.func.name}': {_one_line(err)}",
            "set 'out_as_primary: false' to implement this overload as a plain kernel",
        ) from None


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


def _claim_kernel(names: dict[str, int], kernel: str, entry_line: int, kernel_line: int, path: str) -> None:
    """One kernel name, one entry: a second definition would clash at link time."""
    if kernel in names:
        raise ManifestError(
            path, kernel_line, f"kernel '{kernel}' is already the kernel of the entry at line {names[kernel]}",
            "give each entry its own kernel name (a kernel may call another one)",
        )
    names[kernel] = entry_line


# ---- pointwise specs ------------------------------------------------------------------------

_SCALAR_TYPES = {
    BaseType(BaseTy.Scalar), BaseType(BaseTy.float), BaseType(BaseTy.int), BaseType(BaseTy.bool),
}
_UNARY_ITERATORS = ("unary_op", "unary_float_op", "no_promotion")
_BINARY_ITERATORS = ("binary_op", "binary_float_op", "comparison_op")
MAX_SCALARS = 4  # kernels/core/pointwise.h kMaxPointwiseScalars
MAX_INPUTS = 3  # kernels/core/geometry.h kMaxOperands, less the output


def _scalar_type(t) -> tuple[bool, bool]:
    """(is a scalar the formula can read, is optional)."""
    if isinstance(t, OptionalType) and t.elem in _SCALAR_TYPES:
        return True, True
    return t in _SCALAR_TYPES, False


def _pointwise(e: AtenEntry | CustomEntry, f: NativeFunction, group: NativeFunctionsGroup | None, path: str) -> PointwiseKernel:
    spec = e.pointwise
    line = spec.line
    label = e.op if isinstance(e, AtenEntry) else f"{NAMESPACE}::{f.func.name}"

    def error(at: int, what: str, suggestion: str):
        raise ManifestError(path, at, f"{label}: {what}", suggestion)

    if isinstance(e, CustomEntry):
        check_custom_pointwise(f, spec, error)

    outs = f.func.arguments.out
    if len(outs) > 1 or len(f.func.returns) != 1:
        error(line, "a pointwise formula computes one output", "implement ops with several outputs in csrc/aten")
    if group is not None:
        if spec.iterator:
            error(spec.line_of("iterator"), f"'{label}' is structured: ATen's meta function builds its iterator",
                  "remove 'iterator:'")
        if group.out.structured_inherits != "TensorIteratorBase":
            error(line, f"'{label}' is structured, but its meta function builds no TensorIterator",
                  "implement its impl() in csrc/aten instead (docs/adding-an-op.md)")
    elif not spec.iterator:
        error(line, f"'{label}' has no structured meta function, so the spec must say how to build the iterator",
              "add 'iterator:' (" + ", ".join(("unary_op", "binary_op", "comparison_op", "no_promotion", "manual")) + ", ...)")
    args = list(f.func.arguments.flat_non_out)
    arg_names = [a.name for a in args]
    tensors = [a.name for a in args if a.type == BaseType(BaseTy.Tensor)]
    default_inputs = spec.inputs or tuple(Operand(n) for n in tensors)
    cases = tuple(
        Case(c.when, c.dtypes, c.formula, c.inputs or default_inputs, c.line) for c in spec.cases
    )
    operand_names = {o.name for c in cases for o in c.inputs}
    scalar_args = []
    for a in args:
        ok, optional = _scalar_type(a.type)
        if ok and a.name not in operand_names:
            scalar_args.append((a.name, optional))
    conversions = dict(spec.scalars)
    for name in conversions:
        if name not in dict(scalar_args):
            error(spec.line_of("scalars"), f"'{name}' is not a scalar argument of the formula",
                  did_you_mean(name, [n for n, _ in scalar_args] or arg_names, "scalar arguments: " + (", ".join(n for n, _ in scalar_args) or "none")))
    int_args = {a.name for a in args if a.type in (BaseType(BaseTy.int), OptionalType(BaseType(BaseTy.int)))}
    for name, conversion in conversions.items():
        if conversion == "int64" and name not in int_args:
            error(spec.line_of("scalars"), f"'{name}' is not an int argument: only those can be int64",
                  "use compute or element")
    if len(scalar_args) > MAX_SCALARS:
        error(line, f"the formula reads {len(scalar_args)} scalars, more than {MAX_SCALARS}", "raise kMaxPointwiseScalars (kernels/core/pointwise.h)")
    for c in cases:
        if len(c.inputs) > MAX_INPUTS:
            error(c.line, f"the formula reads {len(c.inputs)} tensor inputs, more than the elementwise launcher's {MAX_INPUTS}",
                  "pass the extra tensors as scalars where they are 0-dim, or write a kernel (docs/adding-an-op.md, route 1c)")
        for o in c.inputs:
            if o.name in CPP_KEYWORDS:
                error(c.line, f"operand '{o.name}' is a C++ keyword", "rename it in 'inputs:'")
        if spec.iterator and spec.iterator != "manual":
            want = 1 if spec.iterator in _UNARY_ITERATORS else 2
            if len(c.inputs) != want:
                error(c.line, f"iterator '{spec.iterator}' takes {want} input(s), the formula names {len(c.inputs)}",
                      "fix 'inputs:' or 'iterator:'")
            for o in c.inputs:
                if o.name not in tensors:
                    error(c.line, f"operand '{o.name}' is not a tensor argument of '{label}'",
                          did_you_mean(o.name, tensors, "tensor arguments: " + ", ".join(tensors)))
    for name, _ in spec.wrapped_numbers:
        if name not in operand_names:
            error(spec.line_of("wrapped_numbers"), f"'{name}' is not a tensor operand of the formula",
                  did_you_mean(name, sorted(operand_names), "operands: " + ", ".join(sorted(operand_names))))
    scalars = tuple(Scalar(n, conversions.get(n, "compute"), opt) for n, opt in scalar_args)
    for c in cases:
        known = {o.name for o in c.inputs} | {n for n, _ in scalar_args} | {f"has_{n}" for n, opt in scalar_args if opt}
        for _, text, at in c.formula:
            _check_formula_names(text, known, lambda what, hint, at=at: error(at, what, hint))
    op_name = f.func.name.name.base if isinstance(e, AtenEntry) else label
    return PointwiseKernel(spec, op_name, cases, scalars, spec.iterator)


# Names a formula may use besides its operands and scalars: the compute and element types, the
# output type, and C++ words. Anything reached through `math::` or `.` is left to the compiler.
_FORMULA_WORDS = frozenset({"M", "T", "Out"}) | CPP_KEYWORDS
_FORMULA_NAME = re.compile(r"(?<![\w.:>])([A-Za-z_]\w*)(?!\s*(?:::|\w))")
_FORMULA_LOCAL = re.compile(r"\b(?:M|T|auto|bool|float|double|int64_t|int)\s+([A-Za-z_]\w*)\s*=")


def _check_formula_names(text: str, known: set[str], error) -> None:
    """A formula naming something that is neither an operand, a scalar, `has_<scalar>` nor a local
    it declares would fail in the compiler, far from the manifest; say so here."""
    code = re.sub(r"//[^\n]*", "", text)
    allowed = known | _FORMULA_WORDS | set(_FORMULA_LOCAL.findall(code))
    for name in _FORMULA_NAME.findall(code):
        if name not in allowed:
            error(f"the formula uses '{name}', which is not an operand, scalar argument or local of the formula",
                  did_you_mean(name, known, "operands and scalars: " + (", ".join(sorted(known)) or "none")
                               + "; functions are math::<name> (kernels/core/math.cuh, kernels/core/formulas.cuh)"))


# ---- custom ops -----------------------------------------------------------------------------


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
        label = f"{NAMESPACE}::{name}"
        check_python_names(f, e, m.path, label)
        pointwise = _pointwise(e, f, None, m.path) if e.pointwise else None
        derivatives = check_derivatives(f, e, m.path, label)
        check_reference(f, e.reference, m.path, label)
        out.append(CustomOp(f, e.kernel, e.tags, pointwise, derivatives, e.line))
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
    for i, tag in enumerate(e.tags):
        if tag not in aten.tags:
            at = e.tag_lines[i] if i < len(e.tag_lines) else e.line
            raise ManifestError(
                path, at, f"unknown tag '{tag}'", did_you_mean(tag, aten.tags, "use a torch.Tag name from tags.yaml")
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
