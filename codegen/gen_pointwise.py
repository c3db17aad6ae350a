"""generated/pointwise/<kernel>.{cu,cpp}: an op implemented from its manifest formula.

<kernel>.cu is compiled like csrc/kernels/ops/*.cu, for both targets: one functor per formula (case),
computing in opmath_t (float for 16-bit floats) and cast once to the output type, and the
launcher `pointwise_<kernel>` that dispatches the claimed dtypes to kernels/core/elementwise.cuh.

<kernel>.cpp is the host side. A structured op: the class `structured_<kernel>` and its impl(),
which runs on the op's own TensorIterator (the class is one: ATen's meta function built it, as for
CUDA's ufunc kernels); torchgen's set_output subclasses, the wrappers and their registration.
Other ops: the kernel builds the iterator the spec names (`iterator:`); with `iterator: manual`
only the launcher `run_<kernel>(iter, dtype, scalars...)` is generated, for csrc/aten to call.

Each op gets its own pair of files, so adding an op compiles two small files. They name their
entry by op, never by manifest line: an entry added above would otherwise change (and recompile)
every file below it. A C++ error in a formula is reported in the generated file, right after a
comment naming the entry and the formula's dtype branch.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchgen.api import structured as structured_api
from torchgen.api.types import NativeSignature
from torchgen.context import native_function_manager

from . import structured
from .cpp_wrapper import wrapper
from .pointwise_spec import COMPLEX, DTYPE_GROUPS, DTYPES, Case
from .render import render, stamp
from .resolve import Kernel, Plan

_CPP_TYPE = {
    "float32": "float", "float64": "double", "float16": "half_t", "bfloat16": "bfloat16_t",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t", "bool": "bool",
    "complex64": "complex_t<float>", "complex128": "complex_t<double>",
    # `output:` kinds: the computation type's real or complex type (kernels/core/pointwise.cuh)
    "real": "RealOf", "complex": "ComplexOf",
}
_AT_TYPE = {
    "float32": "at::kFloat", "float64": "at::kDouble", "float16": "at::kHalf", "bfloat16": "at::kBFloat16",
    "int8": "at::kChar", "int16": "at::kShort", "int32": "at::kInt", "int64": "at::kLong", "uint8": "at::kByte",
    "bool": "at::kBool", "complex64": "at::kComplexFloat", "complex128": "at::kComplexDouble",
}
_DTYPE_ENUM = {
    "float32": "Float32", "float64": "Float64", "float16": "Float16", "bfloat16": "BFloat16", "int8": "Int8",
    "int16": "Int16", "int32": "Int32", "int64": "Int64", "uint8": "UInt8", "bool": "Bool",
    "complex64": "Complex64", "complex128": "Complex128",
}
# Branches of a per-dtype formula, in the order they are tried.
_GROUP_CONDITION = {
    "bool": "std::is_same_v<T, bool>",
    "integral": "std::is_integral_v<T> && !std::is_same_v<T, bool>",
    "complex": "is_complex_v<T>",
    "floating": "!std::is_integral_v<T>",
}


def qualified_name(k: Kernel) -> str:
    return f"{'foo' if k.custom else 'aten'}::{k.f.func.name}"


def launcher(k: Kernel) -> str:
    return f"pointwise_{k.name}"


def host_launcher(k: Kernel) -> str:
    return f"run_{k.name}"


def paths(k: Kernel) -> tuple[str, str]:
    return f"pointwise/{k.name}.cu", f"pointwise/{k.name}.cpp"


def dtype_mask(dtypes: tuple[str, ...]) -> str:
    """The kernels/core/dtype.h bit mask of a dtype set: a named group where one matches, the complex
    dtypes as kComplexTypes beside the real ones."""
    groups = {f"k{name.capitalize()}Types": members for name, members in DTYPE_GROUPS.items()}
    parts, rest = [], set(dtypes)
    if set(COMPLEX) <= rest and rest != set(COMPLEX):
        rest -= set(COMPLEX)
        parts = ["foo::kernels::kComplexTypes"]
    for name, members in groups.items():
        if rest == set(members):
            return " | ".join([f"foo::kernels::{name}"] + parts)
    return " | ".join([f"foo::kernels::dtype_bit(foo::kernels::DType::{_DTYPE_ENUM[d]})" for d in DTYPES if d in rest] + parts)


def _snippet(text: str, indent: str) -> list[str]:
    """Manifest text (a formula, a `when` condition), indented."""
    return [indent + t for t in text.splitlines()]


# ---- kernel (.cu) -------------------------------------------------------------------------------


def _returns(text: str) -> bool:
    return "return" in text.replace("\n", " ").split()


def _formula_lines(case: Case) -> list[str]:
    """The body of operator(): one `return` per dtype branch."""

    def ret(text: str, indent: str) -> list[str]:
        if _returns(text):  # a body with statements: run it as a lambda, cast its result
            return [f"{indent}return cast<Out>([&]() {{", *_snippet(text, indent + "  "), f"{indent}}}());"]
        return [f"{indent}return cast<Out>(", *_snippet(text, indent + "    "), f"{indent});"]

    keys = {k: text for k, text, _ in case.formula}
    if list(keys) == ["default"]:
        return ret(keys["default"], "    ")
    branches = [(f"std::is_same_v<T, {_CPP_TYPE[d]}>", keys[d]) for d in DTYPES if d in keys]
    branches += [(_GROUP_CONDITION[g], keys[g]) for g in ("bool", "integral", "complex", "floating") if g in keys]
    if "floating" in keys and "complex" not in keys and set(COMPLEX) & set(case.dtypes):
        # complex dtypes take `default` (formula_for), not the floating branch
        branches = [(c + " && !is_complex_v<T>" if c == _GROUP_CONDITION["floating"] else c, t) for c, t in branches]
    lines = []
    for i, (cond, text) in enumerate(branches):
        lines.append(f"    {'if' if i == 0 else '} else if'} constexpr ({cond}) {{")
        lines += ret(text, "      ")
    lines.append("    } else {")
    if "default" in keys:
        lines += ret(keys["default"], "      ")
    else:
        lines.append('      static_assert(sizeof(T) == 0, "no formula for this dtype");')
    lines.append("    }")
    return lines


@dataclass(frozen=True)
class _Functor:
    name: str
    comment: str
    params: str
    conversions: tuple[str, ...]
    body: tuple[str, ...]
    mask: str
    out_spec: str
    specs: str  # OutSpec, InSpecs...


def _functor(k: Kernel, i: int, case: Case) -> _Functor:
    pw = k.pointwise
    params, conversions = [], []
    for o in case.inputs:
        # operands arrive in their compute type (opmath_t: 16-bit floats as float; elementwise.cuh)
        if o.dtype:
            params.append(f"opmath_t<{_CPP_TYPE[o.dtype]}> {o.name}_")
            conversions.append(f"[[maybe_unused]] const {_CPP_TYPE[o.dtype]} {o.name} = {o.name}_;")
        else:
            params.append(f"M {o.name}_")
            conversions.append(f"[[maybe_unused]] const M {o.name} = {o.name}_;")
    out_spec = _CPP_TYPE[pw.spec.output] if pw.spec.output else "Same"
    in_specs = [(_CPP_TYPE[o.dtype] if o.dtype else "Same") for o in case.inputs]
    when = f", when {case.when}" if case.when else ""
    return _Functor(
        name=f"{k.name}_{i}",
        comment=f"formula {i + 1} of {qualified_name(k)}{when}",
        params=", ".join(params),
        conversions=tuple(conversions),
        body=tuple(_formula_lines(case)),
        mask=dtype_mask(case.dtypes),
        out_spec=out_spec,
        specs=", ".join([out_spec] + in_specs),
    )


def _scalar_members(k: Kernel) -> list[dict]:
    out = []
    for i, s in enumerate(k.pointwise.scalars):
        value = {"compute": f"args.scalars[{i}].as<M>()", "element": f"static_cast<M>(args.scalars[{i}].as<T>())",
                 "int64": f"args.scalars[{i}].as<int64_t>()"}[s.conversion]
        out.append({"name": s.name, "type": "int64_t" if s.conversion == "int64" else "M", "init": value,
                    "optional": s.optional, "index": i})
    return out


def gen_kernel(plan: Plan, k: Kernel) -> str:
    manifest = plan.manifest_path
    functors = [_functor(k, i, c) for i, c in enumerate(k.pointwise.cases)]
    return render(
        "pointwise_kernel.cu.j2",
        stamp=stamp(manifest),
        op=qualified_name(k),
        launcher=launcher(k),
        op_name=k.pointwise.op_name,
        scalars=_scalar_members(k),
        functors=functors,
    )


# ---- host (.cpp) --------------------------------------------------------------------------------


def _dtype_expr(dtype: str) -> str:
    if dtype == "real":
        return "c10::toRealValueType(dtype)"
    if dtype == "complex":
        return "c10::toComplexType(dtype)"
    return _AT_TYPE[dtype] if dtype else "dtype"


def _body(k: Kernel, iter_expr: str, manifest: str) -> list[str]:
    """Host statements: pick the case, check the dtype, convert the scalars, launch."""
    pw = k.pointwise
    lines = ["foo::kernels::PointwiseArgs args;"]
    for i, case in enumerate(pw.cases):
        if case.when:
            lines.append(("if (" if i == 0 else "} else if (") + case.when + ") {")
        else:
            lines.append("{" if i == 0 else "} else {")
        lines.append(f'  check_kernel_dtype("{pw.op_name}", dtype, {dtype_mask(case.dtypes)});')
        lines.append(f"  args.formula = {i};")
        for j, s in enumerate(pw.scalars):
            conv = {"compute": "opmath_dtype(dtype)", "element": "dtype", "int64": "at::kLong"}[s.conversion]
            lines.append(f"  set_scalar(args, {j}, {s.name}, {conv});")
        inputs = ", ".join(_dtype_expr(o.dtype) for o in case.inputs)
        unrounded = dict(pw.spec.wrapped_numbers)
        mask = sum(1 << j for j, o in enumerate(case.inputs) if unrounded.get(o.name) == "compute")
        lines.append(
            f'  run_pointwise({iter_expr}, "{pw.op_name}", FOO_POINTWISE_LAUNCHER({launcher(k)}), args, dtype, '
            f"{_dtype_expr(pw.spec.output)}, {{{inputs}}}" + (f", /*unrounded_inputs=*/{mask:#x}" if mask else "") + ");"
        )
    if pw.cases[-1].when:
        lines.append("} else {")
        lines.append(f'  TORCH_CHECK(false, "{pw.op_name}: no formula of its {manifest} entry matches these arguments");')
    lines.append("}")
    return lines


def _iterator(k: Kernel) -> tuple[list[str], str]:
    """Statements building `iter` for an unstructured kernel, and the C++ expression of its result."""
    f = k.f
    pw = k.pointwise
    outs = [a.name for a in f.func.arguments.out]
    inputs = [o.name for o in pw.cases[0].inputs]
    lines = []
    if outs:
        out = outs[0]  # the functional overload passes it undefined (out-as-primary)
        result = f"iterator_result({out}, iter)"
    elif f.func.kind().name == "inplace":
        out = "self"
        result = "self"
    else:
        out = "out_"
        lines.append("at::Tensor out_;")
        result = "iter.output()"
    if pw.iterator == "no_promotion":
        dtype = _AT_TYPE[pw.spec.output] if pw.spec.output else f"{inputs[0]}.scalar_type()"
        if out != "self":
            lines.append(f"if (!{out}.defined()) {out} = at::empty({{0}}, {inputs[0]}.options().dtype({dtype}));")
        lines.append(
            "auto iter = at::TensorIteratorConfig().check_all_same_dtype(false)"
            f".add_output({out}).add_const_input({inputs[0]}).build();"
        )
    elif pw.spec.output == "real" and len(inputs) == 1:
        # abs, angle: a complex input gives a real result, as the CPU's
        # unary_op_impl_with_complex_to_float(_out): the functional result is real, a real out=
        # must be one the real type casts to; a complex out= takes the real values.
        x = inputs[0]
        name = pw.op_name
        if out != "self":
            lines.append(f"if (!{out}.defined() && {x}.is_complex()) {out} = at::empty({{0}}, {x}.options().dtype(c10::toRealValueType({x}.scalar_type())));")
            lines.append(f"const bool to_real = {x}.is_complex() && {out}.defined() && !{out}.is_complex();")
            lines.append(f"TORCH_CHECK(!{x}.is_complex() || !{out}.is_same({x}), \"In-place {name} is not supported for complex tensors.\");")
        else:
            lines.append(f"TORCH_CHECK(!{x}.is_complex(), \"In-place {name} is not supported for complex tensors.\");")
            lines.append("const bool to_real = false;")
        lines.append(f"TORCH_CHECK(!to_real || at::canCast(c10::toRealValueType({x}.scalar_type()), {out}.scalar_type()), \"result type \", "
                     f"c10::toRealValueType({x}.scalar_type()), \" can't be cast to the desired output type \", {out}.scalar_type());")
        lines.append("auto iter = to_real ? at::TensorIteratorConfig().set_check_mem_overlap(true).add_output("
                     f"{out}).add_const_input({x}).check_all_same_dtype(false).promote_inputs_to_common_dtype(true)"
                     ".cast_common_dtype_to_outputs(false).enforce_safe_casting_to_output(false).build()")
        lines.append(f"                    : at::TensorIterator::{pw.iterator}({out}, {x});")
    else:
        lines.append(f"auto iter = at::TensorIterator::{pw.iterator}({out}, {', '.join(inputs)});")
    return lines, result


def _manual_params(k: Kernel) -> list[str]:
    with native_function_manager(k.f):
        sig = NativeSignature(k.f.func, symint=False)
        by_name = {a.name: a for a in sig.arguments()}
    return [by_name[s.name].decl() for s in k.pointwise.scalars]


def launcher_decl(k: Kernel) -> str:
    """The host launcher of an `iterator: manual` entry, which csrc/aten calls on its iterator."""
    params = ["const at::TensorIteratorBase& iter", "at::ScalarType dtype"] + _manual_params(k)
    return f"void {host_launcher(k)}({', '.join(params)})"


def gen_host(plan: Plan, k: Kernel) -> str:
    manifest = plan.manifest_path
    pw = k.pointwise
    ops = plan.ops_of(k)
    namespace = "foo" if k.custom else "aten"
    ctx = dict(
        stamp=stamp(manifest),
        op=qualified_name(k),
        manifest=manifest,
        launcher=launcher(k),
        kernel_name=k.name,
        namespace=namespace,
        registered=", ".join(str(op.f.func.name) for op in ops) if not k.custom else str(k.f.func.name),
        manual=pw.iterator == "manual",
        structured_class="",
        meta_header="",
        impl_params="",
        function="",
        prologue=[],
        result="",
        structured=[],
        wrappers=[],
    )
    if pw.iterator == "manual":
        ctx["function"] = launcher_decl(k)
        ctx["body"] = _body(k, "iter", manifest)
    elif k.structured:
        with native_function_manager(k.f):  # a formula need not read every argument
            params = ", ".join("[[maybe_unused]] " + a.decl() for a in structured_api.impl_arguments(k.group))
        ctx.update(
            structured_class=structured.class_declaration(k.group, k.name).rstrip("\n"),
            meta_header=structured.meta_header(k.group),
            impl_params=params,
            body=["const at::ScalarType dtype = common_dtype();"] + _body(k, "*this", manifest),
            structured=[structured.definitions(k.group, k.name, op.f) for op in ops],
        )
    else:
        with native_function_manager(k.f):
            sig = NativeSignature(k.f.func, symint=False)
            params = ", ".join("[[maybe_unused]] " + a.defn() for a in sig.arguments())
            ctx["function"] = f"{sig.returns_type().cpp_type()} {k.name}({params})"
        prologue, result = _iterator(k)
        ctx.update(prologue=prologue, result=result,
                   body=["const at::ScalarType dtype = iter.common_dtype();"] + _body(k, "iter", manifest))
    if k.custom:  # the schema is defined in FooCustomOps.cpp; the kernel registers here
        ctx["wrappers"] = [wrapper(k.f, k.f, k.name, "direct", "foo")]
    elif pw.iterator != "manual":
        ctx["wrappers"] = [wrapper(op.f, op.kernel_f, op.kernel, op.kind, "aten", op.guard) for op in ops]
    return render("pointwise_host.cpp.j2", **ctx)


def gen_pointwise(plan: Plan) -> dict[str, str]:
    """Relative path -> content, for every pointwise entry."""
    files = {}
    for k in plan.kernels:
        if k.pointwise is None:
            continue
        cu, cpp = paths(k)
        files[cu] = gen_kernel(plan, k)
        files[cpp] = gen_host(plan, k)
    return files
