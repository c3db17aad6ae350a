"""The `pointwise:` key of an aten entry: a scalar formula, its dtypes, operands and scalars.

Only the shape is checked here (keys, value types, names); resolve.py checks it against the
operator's schema and codegen/gen_pointwise.py turns it into a kernel and its host code.
docs/adding-an-op.md describes the format.
"""

from __future__ import annotations

from dataclasses import dataclass

from .names import did_you_mean, is_cpp_identifier
from .yaml_lines import LineDict, LineList

# Element types a kernel can be instantiated for (kernels/core/dtype.h), by their torch names.
DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
          "complex64", "complex128")
FLOATING = ("float32", "float64", "float16", "bfloat16")
INTEGRAL = ("int8", "int16", "int32", "int64", "uint8")
COMPLEX = ("complex64", "complex128")
# `all` is every real dtype, as ATen's AT_DISPATCH_ALL_TYPES: complex is claimed explicitly
# (`dtypes: [all, complex]`), where the formula means the same thing for complex numbers.
DTYPE_GROUPS = {
    "floating": FLOATING,
    "integral": INTEGRAL,
    "numeric": FLOATING + INTEGRAL,
    "all": FLOATING + INTEGRAL + ("bool",),
    "complex": COMPLEX,
}
# Keys of a per-dtype formula mapping, most specific first (a dtype name wins over its group).
FORMULA_GROUPS = ("bool", "integral", "complex", "floating", "default")
# `output:` besides a dtype: the computation dtype's real type (float for complex64; a real dtype
# itself: abs, angle) or its complex type (complex64 for float32: polar).
OUTPUT_KINDS = ("real", "complex")
# How a Scalar argument reaches the formula: converted to the compute type (opmath: float for
# 16-bit floats), or to the element type first (as CPU kernels that call scalar.to<scalar_t>()),
# or, for an `int` argument, as the int64_t itself (round.decimals: the count, not a value).
SCALAR_CONVERSIONS = ("compute", "element", "int64")
# How a Python number passed as a tensor operand (a wrapped number: x * 0.3) reaches the formula:
# rounded to the operand's dtype first, as TensorIterator's type promotion converts it (element,
# the default), or unrounded in the compute type, as the CPU's mul and div kernels read their
# second operand (compute: original_scalar_value<opmath_t>; x_half * 0.3 multiplies by 0.3f).
WRAPPED_NUMBER_CONVERSIONS = ("compute", "element")
# at::TensorIterator builders for ops without a structured meta function (`iterator:`), and
# `manual`: the entry's kernel (csrc/aten) builds the iterator and calls the generated launcher.
ITERATORS = ("unary_op", "unary_float_op", "binary_op", "binary_float_op", "comparison_op", "no_promotion", "manual")
POINTWISE_KEYS = ("dtypes", "formula", "cases", "inputs", "output", "scalars", "wrapped_numbers", "iterator")
CASE_KEYS = ("when", "dtypes", "formula", "inputs")


@dataclass(frozen=True)
class Operand:
    name: str
    dtype: str = ""  # "" = the computation dtype; else a fixed dtype (a bool mask)


@dataclass(frozen=True)
class Case:
    """One formula and the host condition that selects it ("" = otherwise)."""

    when: str
    dtypes: tuple[str, ...]
    formula: tuple[tuple[str, str, int], ...]  # (dtype name | group, C++ expression or body, line)
    inputs: tuple[Operand, ...] | None  # None: the entry's
    line: int


@dataclass(frozen=True)
class Pointwise:
    cases: tuple[Case, ...]
    inputs: tuple[Operand, ...] | None  # None: the schema's tensor arguments
    output: str  # "" = the computation dtype
    scalars: tuple[tuple[str, str], ...]  # Scalar argument -> conversion
    iterator: str  # "" for structured ops (ATen's meta function builds the iterator)
    line: int
    key_lines: tuple[tuple[str, int], ...] = ()
    wrapped_numbers: tuple[tuple[str, str], ...] = ()  # operand -> conversion of a Python number there

    def line_of(self, key: str) -> int:
        return dict(self.key_lines).get(key, self.line)


class SpecError(Exception):
    """A malformed `pointwise:` value; manifest.py turns it into a ManifestError."""

    def __init__(self, line: int, what: str, suggestion: str) -> None:
        super().__init__(what)
        self.line, self.what, self.suggestion = line, what, suggestion


def expand_dtypes(value, line: int) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise SpecError(line, f"'dtypes' must be a dtype group or a list of dtypes, got {value!r}",
                        "write e.g. 'dtypes: floating' or 'dtypes: [float32, float64]' (groups: " + ", ".join(DTYPE_GROUPS) + ")")
    out: list[str] = []
    for n in names:
        group = DTYPE_GROUPS.get(n, (n,) if n in DTYPES else None)
        if group is None:
            raise SpecError(line, f"unknown dtype '{n}'", did_you_mean(n, DTYPES + tuple(DTYPE_GROUPS), "use " + ", ".join(tuple(DTYPE_GROUPS) + DTYPES)))
        out += [d for d in group if d not in out]
    return tuple(d for d in DTYPES if d in out)  # canonical order


def _identifier(name, line: int, what: str) -> str:
    if not is_cpp_identifier(name):
        raise SpecError(line, f"{what} {name!r} is not a valid C++ identifier", "use an argument name of the op's schema")
    return name


def _operands(value, line: int) -> tuple[Operand, ...]:
    if not isinstance(value, list) or not value:
        raise SpecError(line, f"'inputs' must be a non-empty list of operand names, got {value!r}",
                        "write e.g. 'inputs: [self, other]' or 'inputs: [{condition: bool}, self, other]'")
    out = []
    for item in value:
        if isinstance(item, dict) and len(item) == 1:
            (name, dtype), = item.items()
            if dtype not in DTYPES:
                raise SpecError(line, f"operand '{name}' has unknown dtype {dtype!r}", "write e.g. '{mask: bool}'")
            out.append(Operand(_identifier(name, line, "operand"), dtype))
        else:
            out.append(Operand(_identifier(item, line, "operand")))
    names = [o.name for o in out]
    if len(set(names)) != len(names):
        raise SpecError(line, f"operand names repeat in {names}", "give every iterator operand its own name")
    return tuple(out)


def _text_line(text: str, key_line: int) -> int:
    """Where a formula's text starts: a block scalar (`|`) starts on the line after its key."""
    return key_line + 1 if "\n" in text.strip() else key_line


def _formula(value, line: int) -> tuple[tuple[str, str, int], ...]:
    if isinstance(value, str) and value.strip():
        return (("default", value.strip(), _text_line(value, line)),)
    if isinstance(value, dict) and value:
        out = []
        for key, text in value.items():
            if key not in DTYPES and key not in FORMULA_GROUPS:
                    raise SpecError(getattr(value, "key_lines", {}).get(key, line), f"unknown formula key '{key}'",
                                did_you_mean(str(key), DTYPES + FORMULA_GROUPS, "use a dtype, 'bool', 'integral', 'complex', 'floating' or 'default'"))
            if not isinstance(text, str) or not text.strip():
                raise SpecError(getattr(value, "key_lines", {}).get(key, line), f"formula for '{key}' must be a non-empty C++ expression",
                                "write e.g. 'floating: \"math::exp(self)\"'")
            out.append((key, text.strip(), _text_line(text, getattr(value, "key_lines", {}).get(key, line))))
        return tuple(out)
    raise SpecError(line, f"'formula' must be a C++ expression or a mapping of dtype to expression, got {value!r}",
                    "write e.g. 'formula: \"math::exp(self)\"' or 'formula: {integral: \"...\", floating: \"...\"}'")


def formula_for(formula: tuple[tuple[str, str, int], ...], dtype: str) -> str | None:
    """The expression a dtype computes with: its own key, else its group, else default."""
    keys = {k: text for k, text, _ in formula}
    group = "bool" if dtype == "bool" else "integral" if dtype in INTEGRAL else "complex" if dtype in COMPLEX else "floating"
    for key in (dtype, group, "default"):
        if key in keys:
            return keys[key]
    return None


def _check_keys(d: LineDict, allowed, what: str) -> None:
    for key in d:
        if key not in allowed:
            raise SpecError(d.key_lines[key], f"unknown key '{key}' in {what}",
                            did_you_mean(str(key), allowed, "allowed keys are " + ", ".join(f"'{k}'" for k in allowed)))


def _case(d, line: int, default_dtypes, what: str) -> Case:
    if not isinstance(d, LineDict):
        raise SpecError(line, f"each case must be a mapping, got {d!r}", "write e.g. '- {when: \"...\", formula: \"...\"}'")
    _check_keys(d, CASE_KEYS, what)
    if "formula" not in d:
        raise SpecError(d.line, f"{what} has no 'formula'", "add 'formula: \"<C++ expression>\"'")
    when = d.get("when", "")
    if not isinstance(when, str):
        raise SpecError(d.key_lines["when"], f"'when' must be a C++ condition over the op's arguments, got {when!r}",
                        "write e.g. 'when: \"approximate == \\\"tanh\\\"\"'")
    if "dtypes" in d:
        dtypes = expand_dtypes(d["dtypes"], d.key_lines["dtypes"])
    elif default_dtypes is not None:
        dtypes = default_dtypes
    else:
        raise SpecError(d.line, f"{what} has no 'dtypes'", "add e.g. 'dtypes: floating' (here or for the whole entry)")
    formula = _formula(d["formula"], d.key_lines["formula"])
    for dtype in dtypes:
        if formula_for(formula, dtype) is None:
            raise SpecError(d.key_lines["formula"], f"no formula for dtype {dtype}, which the entry claims",
                            f"add a '{dtype}', group or 'default' key to the formula, or drop {dtype} from 'dtypes'")
    inputs = _operands(d["inputs"], d.key_lines["inputs"]) if "inputs" in d else None
    return Case(when.strip(), dtypes, formula, inputs, d.line)


def parse_pointwise(d, line: int) -> Pointwise:
    if not isinstance(d, LineDict):
        raise SpecError(line, f"'pointwise' must be a mapping, got {d!r}",
                        "write e.g. 'pointwise: {dtypes: floating, formula: \"math::exp(self)\"}'")
    _check_keys(d, POINTWISE_KEYS, "a pointwise spec")
    dtypes = expand_dtypes(d["dtypes"], d.key_lines["dtypes"]) if "dtypes" in d else None
    if ("formula" in d) == ("cases" in d):
        raise SpecError(d.line, "a pointwise spec needs either 'formula' or 'cases' (not both)",
                        "write 'formula: \"...\"', or 'cases:' with one '- {when: ..., formula: ...}' per formula")
    if "formula" in d:
        sub = LineDict({k: d[k] for k in ("dtypes", "formula") if k in d})
        sub.line, sub.key_lines = d.line, {k: d.key_lines[k] for k in sub}
        cases = (_case(sub, d.line, None, "the pointwise spec"),)
    else:
        items = d["cases"]
        if not isinstance(items, LineList) or not items:
            raise SpecError(d.key_lines["cases"], f"'cases' must be a non-empty list, got {items!r}",
                            "write '- {when: \"<C++ condition>\", formula: \"...\"}' per case; the last may omit 'when'")
        cases = tuple(_case(c, ln, dtypes, f"case {i + 1}") for i, (c, ln) in enumerate(zip(items, items.item_lines)))
        for c in cases[:-1]:
            if not c.when:
                raise SpecError(c.line, "only the last case may omit 'when'", "add 'when: \"<C++ condition>\"'")
    inputs = _operands(d["inputs"], d.key_lines["inputs"]) if "inputs" in d else None
    output = d.get("output", "")
    if output and output not in DTYPES + OUTPUT_KINDS:
        raise SpecError(d.key_lines["output"], f"unknown output dtype {output!r}",
                        "write e.g. 'output: bool', or 'output: real' / 'output: complex' (the computation dtype's real or complex type)")
    scalars = d.get("scalars", {})
    if not isinstance(scalars, dict) or not all(v in SCALAR_CONVERSIONS for v in scalars.values()):
        raise SpecError(d.key_lines.get("scalars", d.line), f"'scalars' must map argument names to compute, element or int64, got {scalars!r}",
                        "write e.g. 'scalars: {value: element}' (default: compute)")
    wrapped = d.get("wrapped_numbers", {})
    if not isinstance(wrapped, dict) or not all(v in WRAPPED_NUMBER_CONVERSIONS for v in wrapped.values()):
        raise SpecError(d.key_lines.get("wrapped_numbers", d.line),
                        f"'wrapped_numbers' must map operand names to compute or element, got {wrapped!r}",
                        "write e.g. 'wrapped_numbers: {other: compute}' (default: element)")
    iterator = d.get("iterator", "")
    if iterator and iterator not in ITERATORS:
        raise SpecError(d.key_lines["iterator"], f"unknown iterator '{iterator}'", did_you_mean(str(iterator), ITERATORS, "use " + ", ".join(ITERATORS)))
    return Pointwise(cases, inputs, output, tuple((str(k), v) for k, v in scalars.items()), iterator, d.line,
                     tuple((str(k), v) for k, v in d.key_lines.items()),
                     tuple((str(k), v) for k, v in wrapped.items()))
