"""Read yaml/ops.yaml and check its shape (keys, value types); every problem is one ManifestError."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from .names import closest, did_you_mean, is_cpp_identifier  # noqa: F401 - re-exported
from .pointwise_spec import Pointwise, SpecError, parse_pointwise
from .yaml_lines import DuplicateKey, LineDict, LineList, load

TOP_KEYS = ("aten", "custom")
ATEN_KEYS = ("op", "kernel", "out_as_primary", "pointwise", "tests")
CUSTOM_KEYS = ("schema", "kernel", "tags", "pointwise", "derivatives", "reference", "tests")
# Keys of an entry's optional `tests:` mapping (read by tests/ops/, not by the generators).
# Custom ops have no OpInfo, so they can only say which tests cover them. A backward op has no
# OpInfo either: `gradient_of` names the OpInfos whose gradient tests reach it (tests/ops checks
# that their backward calls it on foo). `sim_only_path` says the entry's kernel launches a sim-only
# fast path (csrc/sim/fast_paths.h): its generated tests then run once more with those paths off.
ATEN_TEST_KEYS = ("opinfo", "skip", "covered_by", "gradient_of", "sim_only_path")
CUSTOM_TEST_KEYS = ("covered_by",)

class ManifestError(Exception):
    """One manifest problem, printed as `path:line: what; suggestion`."""

    def __init__(self, path: str, line: int, what: str, suggestion: str) -> None:
        super().__init__(f"{path}:{line}: {what}; {suggestion}")


@dataclass(frozen=True)
class Tests:
    """How tests/ops/ covers an entry: OpInfo names overriding the automatic mapping, cases or
    dtypes or OpInfo variants opted out of (key -> written reason), or the tests that cover it:
    named in words (covered_by), or, for a backward op, the OpInfos whose gradients call it."""

    opinfo: tuple[str, ...] = ()
    skip: tuple[tuple[str, str], ...] = ()
    covered_by: str = ""
    gradient_of: tuple[str, ...] = ()
    line: int = 0  # of the `tests:` key; 0 when the entry has none
    sim_only_path: str = ""  # which sim-only path the kernel takes (its cuda twin is tested too)


@dataclass(frozen=True)
class AtenEntry:
    op: str
    kernel: str
    out_as_primary: bool
    line: int
    tests: Tests = Tests()
    pointwise: Pointwise | None = None  # the scalar formula the kernel is generated from
    kernel_line: int = 0


@dataclass(frozen=True)
class Formula:
    """A Python expression of the manifest (a derivative, a reference), and where it is."""

    text: str
    line: int


@dataclass(frozen=True)
class CustomEntry:
    schema: str
    kernel: str
    tags: tuple[str, ...]
    line: int
    tests: Tests = Tests()
    tag_lines: tuple[int, ...] = ()  # of each tag, for messages
    kernel_line: int = 0
    pointwise: Pointwise | None = None  # the kernel is generated from this formula, as for aten entries
    # Argument name -> the gradient of that input, a Python expression over `grad`, the arguments
    # and `result` (derivatives.yaml style); codegen registers the op's autograd from them.
    derivatives: tuple[tuple[str, Formula], ...] = ()
    derivatives_line: int = 0
    # What the op computes, as a Python expression over its arguments with torch ops: the CPU
    # reference of its generated tests (tests/ops/test_custom_ops.py).
    reference: Formula | None = None


@dataclass(frozen=True)
class Manifest:
    path: str  # as shown in messages and stamps
    aten: tuple[AtenEntry, ...]
    custom: tuple[CustomEntry, ...]


def parse_manifest(text: str, path: str) -> Manifest:
    """Parse the manifest text; `path` is only used in messages."""
    try:
        doc = load(text)
    except DuplicateKey as e:
        raise ManifestError(
            path, e.line, f"duplicate key '{e.key}' (first at line {e.first_line})", "keep only one"
        ) from None
    except yaml.MarkedYAMLError as e:
        line = (e.problem_mark or e.context_mark).line + 1 if (e.problem_mark or e.context_mark) else 1
        raise ManifestError(path, line, f"invalid YAML: {e.problem or e.context}", "fix the YAML syntax") from None
    if not isinstance(doc, LineDict):
        raise ManifestError(
            path, 1, "the top level must be a mapping",
            "write 'aten:' and/or 'custom:' followed by lists of entries",
        )
    for key in doc:
        if key not in TOP_KEYS:
            raise ManifestError(
                path, doc.key_lines[key], f"unknown top-level key '{key}'",
                did_you_mean(str(key), TOP_KEYS, "allowed keys are 'aten' and 'custom'"),
            )
    aten = tuple(_aten_entry(e, line, path) for e, line in _entries(doc, "aten", path))
    custom = tuple(_custom_entry(e, line, path) for e, line in _entries(doc, "custom", path))
    return Manifest(path, aten, custom)


def _entries(doc: LineDict, key: str, path: str):
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, LineList):
        raise ManifestError(
            path, doc.key_lines[key], f"'{key}' must be a list of entries", f"write each entry as '- ...' under '{key}:'"
        )
    for item, line in zip(value, value.item_lines):
        if not isinstance(item, LineDict):
            first = ATEN_KEYS[0] if key == "aten" else CUSTOM_KEYS[0]
            raise ManifestError(
                path, line, f"each '{key}' entry must be a mapping, got {type(item).__name__}",
                f"write '- {first}: ...' followed by 'kernel: ...'",
            )
    return list(zip(value, value.item_lines))


def _check_keys(e: LineDict, allowed, required, path: str, what: str) -> None:
    for key in e:
        if key not in allowed:
            raise ManifestError(
                path, e.key_lines[key], f"unknown key '{key}' in {what} entry",
                did_you_mean(str(key), allowed, "allowed keys are " + ", ".join(f"'{k}'" for k in allowed)),
            )
    for key in required:
        if key not in e:
            raise ManifestError(path, e.line, f"{what} entry is missing '{key}'", f"add '{key}: ...'")


def _string(e: LineDict, key: str, path: str, hint: str) -> str:
    value = e[key]
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(
            path, e.key_lines[key], f"'{key}' must be a non-empty string, got {value!r}", hint
        )
    return value.strip()


def _kernel(e: LineDict, path: str) -> str:
    value = e["kernel"]
    if not is_cpp_identifier(value):
        raise ManifestError(
            path, e.key_lines["kernel"], f"kernel {value!r} is not a valid C++ identifier",
            "use letters, digits and '_' (not starting with a digit, not a C++ keyword), e.g. 'add_out'",
        )
    return value


def _aten_entry(e: LineDict, line: int, path: str) -> AtenEntry:
    _check_keys(e, ATEN_KEYS, ("op", "kernel"), path, "aten")
    op = _string(e, "op", path, "write the operator as 'name.overload', e.g. 'add.out'")
    oap = e.get("out_as_primary", True)
    if not isinstance(oap, bool):
        raise ManifestError(
            path, e.key_lines["out_as_primary"], f"'out_as_primary' must be true or false, got {oap!r}",
            "write 'out_as_primary: true' or 'out_as_primary: false'",
        )
    pointwise = None
    if "pointwise" in e:
        try:
            pointwise = parse_pointwise(e["pointwise"], e.key_lines["pointwise"])
        except SpecError as err:
            raise ManifestError(path, err.line, err.what, err.suggestion) from None
    return AtenEntry(op.removeprefix("aten::"), _kernel(e, path), oap, line, _tests(e, path, ATEN_TEST_KEYS), pointwise,
                     e.key_lines["kernel"])


def _custom_entry(e: LineDict, line: int, path: str) -> CustomEntry:
    _check_keys(e, CUSTOM_KEYS, ("schema", "kernel"), path, "custom")
    schema = _string(e, "schema", path, "write a schema like 'foo::axpby(Tensor x, Tensor y) -> Tensor'")
    tags = e.get("tags") or LineList()
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ManifestError(
            path, e.key_lines["tags"], f"'tags' must be a list of torch.Tag names, got {tags!r}",
            "write e.g. 'tags: [pointwise]'",
        )
    # A flow list ([a, b]) sits on its key's line; a block list has a line per item.
    tag_lines = tuple(getattr(tags, "item_lines", [e.key_lines.get("tags", line)] * len(tags)))
    pointwise = None
    if "pointwise" in e:
        try:
            pointwise = parse_pointwise(e["pointwise"], e.key_lines["pointwise"])
        except SpecError as err:
            raise ManifestError(path, err.line, err.what, err.suggestion) from None
    derivatives = e.get("derivatives", LineDict())
    if "derivatives" in e and (not isinstance(derivatives, LineDict) or not derivatives):
        raise ManifestError(
            path, e.key_lines["derivatives"], f"'derivatives' must be a non-empty mapping of argument to formula, got {derivatives!r}",
            "write e.g. 'derivatives: {x: \"grad * a\", y: \"grad * b\"}'",
        )
    for name, text in derivatives.items():
        if not isinstance(text, str) or not text.strip():
            raise ManifestError(
                path, derivatives.key_lines[name], f"the derivative for '{name}' must be a non-empty Python expression, got {text!r}",
                f"write e.g. '{name}: \"grad * 2 * {name}\"' (names: grad, result and the op's arguments)",
            )
    reference = None
    if "reference" in e:
        reference = Formula(_string(e, "reference", path, "write what the op computes with torch ops, e.g. 'a * x + b * y'"),
                            e.key_lines["reference"])
    return CustomEntry(schema, _kernel(e, path), tuple(tags), line, _tests(e, path, CUSTOM_TEST_KEYS), tag_lines,
                       e.key_lines["kernel"], pointwise,
                       tuple((str(n), Formula(t.strip(), derivatives.key_lines[n])) for n, t in derivatives.items()),
                       e.key_lines.get("derivatives", 0), reference)


def _tests(e: LineDict, path: str, allowed) -> Tests:
    if "tests" not in e:
        return Tests()
    t, line = e["tests"], e.key_lines["tests"]
    if not isinstance(t, LineDict):
        raise ManifestError(
            path, line, f"'tests' must be a mapping, got {t!r}",
            "write e.g. 'tests: {skip: {float16: \"no half kernel yet\"}}' or 'tests: {covered_by: \"tests/test_x.py\"}'",
        )
    _check_keys(t, allowed, (), path, "tests")
    for alone in ("covered_by", "gradient_of"):
        if alone in t and len(t) > 1:
            raise ManifestError(
                path, line, f"'{alone}' says the op has no generated tests of its own, so it cannot go with "
                + " or ".join(f"'{k}'" for k in t if k != alone),
                f"keep either '{alone}' or 'opinfo'/'skip'/'sim_only_path'",
            )
    gradient_of = t.get("gradient_of", [])
    if "gradient_of" in t and (not isinstance(gradient_of, list) or not gradient_of
                               or not all(isinstance(n, str) and n.strip() for n in gradient_of)):
        raise ManifestError(
            path, t.key_lines["gradient_of"], f"'gradient_of' must be a non-empty list of OpInfo names, got {gradient_of!r}",
            "write e.g. 'gradient_of: [nn.functional.relu, threshold]' (the OpInfos whose backward calls this op)",
        )
    opinfo = t.get("opinfo", [])
    if "opinfo" in t and (not isinstance(opinfo, list) or not opinfo or not all(isinstance(n, str) and n.strip() for n in opinfo)):
        raise ManifestError(
            path, t.key_lines["opinfo"], f"'opinfo' must be a non-empty list of OpInfo names, got {opinfo!r}",
            "write e.g. 'opinfo: [nn.functional.nll_loss]'",
        )
    skip = t.get("skip", LineDict())
    if "skip" in t and (not isinstance(skip, LineDict) or not skip):
        raise ManifestError(
            path, t.key_lines["skip"], f"'skip' must be a non-empty mapping of case to reason, got {skip!r}",
            "write e.g. 'skip: {float16: \"no half kernel yet\"}'",
        )
    for key, reason in skip.items():
        if not isinstance(key, str) or not key.strip():
            raise ManifestError(
                path, skip.key_lines[key], f"skip key {key!r} is not a case, dtype or OpInfo variant name",
                "use e.g. out, inplace, noncontiguous, gradient, gradcheck, float16, a variant name (quote it) "
                "or variant.float16",
            )
        if not isinstance(reason, str) or not reason.strip():
            raise ManifestError(
                path, skip.key_lines[key], f"skip of '{key}' has no written reason",
                f"write why, e.g. '{key}: \"kernel has no half support yet\"'",
            )
    covered_by = t.get("covered_by", "")
    if "covered_by" in t and (not isinstance(covered_by, str) or not covered_by.strip()):
        raise ManifestError(
            path, t.key_lines["covered_by"], f"'covered_by' must say which tests cover the op, got {covered_by!r}",
            "write e.g. 'covered_by: \"tests/test_views.py\"'",
        )
    sim_only_path = t.get("sim_only_path", "")
    if "sim_only_path" in t and (not isinstance(sim_only_path, str) or not sim_only_path.strip()):
        raise ManifestError(
            path, t.key_lines["sim_only_path"], f"'sim_only_path' must say which sim-only path the kernel takes, got {sim_only_path!r}",
            "write e.g. 'sim_only_path: \"small rows run softmax_rows_as_warps (kernels/ops/softmax.cu)\"'",
        )
    return Tests(
        tuple(n.strip() for n in opinfo),
        tuple((k.strip(), r.strip()) for k, r in skip.items()),
        covered_by.strip(),
        tuple(n.strip() for n in gradient_of),
        line,
        sim_only_path.strip(),
    )

