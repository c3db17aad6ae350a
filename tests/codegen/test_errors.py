"""Each bad manifest gives one line `FILE:LINE: what; suggestion` on stderr, exit 1, no traceback."""

from __future__ import annotations

import os

import pytest
from codegen_helpers import run_codegen

VIEW = "aten:\n  - op: view\n    kernel: view\n"
EXP = "aten:\n  - op: exp.out\n    kernel: exp_out\n"
ABS = "aten:\n  - op: abs.out\n    kernel: abs_out\n"
AXPBY = 'custom:\n  - schema: "foo::axpby(Tensor x, Tensor y) -> Tensor"\n    kernel: axpby\n'
# A custom pointwise op; its `pointwise:` is on line 4, what follows on line 5.
SCALE_ADD = ('custom:\n  - schema: "foo::scale_add(Tensor x, Tensor y, float a=1) -> Tensor"\n    kernel: scale_add\n'
             '    pointwise: {dtypes: floating, iterator: binary_op, formula: "a * x + y"}\n')
LESS = ('custom:\n  - schema: "foo::less(Tensor x, Tensor y) -> Tensor"\n    kernel: less\n'
        '    pointwise: {dtypes: all, iterator: comparison_op, output: bool, formula: "x < y"}\n')

# id: (manifest text, line, words in the message, words in the suggestion)
CASES = {
    "unknown_aten_op": ("aten:\n  - op: ad.out\n    kernel: k\n", 2, ["unknown aten op 'ad.out'"], ["did you mean", "'add.out'"]),
    "op_without_overload": ("aten:\n  - op: add\n    kernel: k\n", 2, ["unknown aten op 'add'"], ["'add.Tensor'", "'add.out'"]),
    "duplicate_op": ("aten:\n  - op: view\n    kernel: a\n  - op: view\n    kernel: b\n", 4, ["duplicate entry", "'view'", "line 2"], ["remove one"]),
    "covered_by_out_as_primary": (
        "aten:\n  - op: add.out\n    kernel: a\n  - op: add.Tensor\n    kernel: b\n", 4,
        ["'add.Tensor'", "out-as-primary entry 'add.out'", "line 2"], ["out_as_primary: false"],
    ),
    "out_as_primary_covers_earlier": (
        "aten:\n  - op: add_.Tensor\n    kernel: a\n  - op: add.out\n    kernel: b\n", 4,
        ["'add.out' also registers 'add_.Tensor'", "line 2"], ["out_as_primary: false"],
    ),
    "composite_implicit": ("aten:\n  - op: reshape\n    kernel: k\n", 2, ["'reshape'", "CompositeImplicitAutograd"], ["decomposes into"]),
    "malformed_schema": (
        'custom:\n  - schema: "foo::f(Tensr x) -> Tensor"\n    kernel: f\n', 2,
        ["malformed custom op schema", "unrecognized type Tensr"], ["foo::axpby("],
    ),
    "unbalanced_schema": ('custom:\n  - schema: "foo::f(Tensor x -> Tensor"\n    kernel: f\n', 2, ["malformed custom op schema"], ["schema syntax"]),
    "unknown_aten_key": ("aten:\n  - op: view\n    kernl: k\n", 3, ["unknown key 'kernl'"], ["did you mean 'kernel'"]),
    "unknown_custom_key": (AXPBY + "    tag: [pointwise]\n", 4, ["unknown key 'tag'"], ["did you mean 'tags'"]),
    "out_as_primary_not_bool": ("aten:\n  - op: add.out\n    kernel: k\n    out_as_primary: 'no'\n", 4, ["'out_as_primary' must be true or false"], ["out_as_primary: false"]),
    "kernel_not_string": ("aten:\n  - op: view\n    kernel: 12\n", 3, ["kernel 12 is not a valid C++ identifier"], ["letters, digits"]),
    "kernel_not_identifier": ("aten:\n  - op: view\n    kernel: my-view\n", 3, ["kernel 'my-view' is not a valid C++ identifier"], ["letters, digits"]),
    "kernel_cpp_keyword": ("aten:\n  - op: view\n    kernel: delete\n", 3, ["kernel 'delete'"], ["not a C++ keyword"]),
    "op_not_string": ("aten:\n  - op: [view]\n    kernel: k\n", 2, ["'op' must be a non-empty string"], ["name.overload"]),
    "missing_kernel": ("aten:\n  - op: view\n", 2, ["missing 'kernel'"], ["add 'kernel: ...'"]),
    "custom_other_namespace": ('custom:\n  - schema: "bar::f(Tensor x) -> Tensor"\n    kernel: f\n', 2, ["'foo' namespace", "'bar'"], ["foo::<name>"]),
    "custom_no_namespace": ('custom:\n  - schema: "f(Tensor x) -> Tensor"\n    kernel: f\n', 2, ["'foo' namespace"], ["foo::<name>"]),
    "duplicate_custom_op": (AXPBY + '  - schema: "foo::axpby(Tensor x) -> Tensor"\n    kernel: b\n', 4, ["duplicate custom op 'foo::axpby'", "line 2"], ["overload name"]),
    "unknown_tag": (AXPBY + "    tags: [pointwize]\n", 4, ["unknown tag 'pointwize'"], ["did you mean 'pointwise'"]),
    "unknown_tag_block_list": (AXPBY + "    tags:\n      - pointwise\n      - inplace_vew\n", 6, ["unknown tag 'inplace_vew'"], ["did you mean 'inplace_view'"]),
    "shared_kernel": ("aten:\n  - op: view\n    kernel: k\n  - op: abs.out\n    kernel: k\n", 5, ["kernel 'k'", "line 2"], ["own kernel name"]),
    "shared_kernel_custom": (VIEW + 'custom:\n  - schema: "foo::f(Tensor x) -> Tensor"\n    kernel: view\n', 6, ["kernel 'view'", "line 2"], ["own kernel name"]),
    "pointwise_not_mapping": (EXP + "    pointwise: [exp]\n", 4, ["'pointwise' must be a mapping"], ["formula:"]),
    "pointwise_unknown_key": (EXP + "    pointwise: {dtypes: floating, formla: x}\n", 4, ["unknown key 'formla'"], ["did you mean 'formula'"]),
    "pointwise_no_formula": (EXP + "    pointwise: {dtypes: floating}\n", 4, ["either 'formula' or 'cases'"], ["formula:"]),
    "pointwise_unknown_dtype": (EXP + "    pointwise:\n      dtypes: [float32, flaot64]\n      formula: x\n", 5, ["unknown dtype 'flaot64'"], ["did you mean 'float64'"]),
    "pointwise_no_dtypes": (EXP + "    pointwise: {formula: x}\n", 4, ["has no 'dtypes'"], ["dtypes: floating"]),
    "pointwise_dtype_without_formula": (
        EXP + "    pointwise:\n      dtypes: all\n      formula: {floating: x}\n", 6, ["no formula for dtype int8"], ["'default' key"],
    ),
    "pointwise_bad_formula_key": (EXP + "    pointwise:\n      dtypes: all\n      formula: {floting: x}\n", 6, ["unknown formula key 'floting'"], ["did you mean 'floating'"]),
    "pointwise_when_not_last": (
        EXP + "    pointwise:\n      dtypes: all\n      cases:\n        - {formula: x}\n        - {when: y, formula: z}\n", 7,
        ["only the last case may omit 'when'"], ["when:"],
    ),
    "pointwise_iterator_on_structured": (EXP + "    pointwise: {dtypes: floating, iterator: unary_op, formula: x}\n", 4, ["structured", "meta function builds its iterator"], ["remove 'iterator:'"]),
    "pointwise_unstructured_without_iterator": (ABS + "    pointwise: {dtypes: all, formula: x}\n", 4, ["no structured meta function"], ["add 'iterator:'"]),
    "pointwise_unknown_iterator": (ABS + "    pointwise: {dtypes: all, iterator: unary, formula: x}\n", 4, ["unknown iterator 'unary'"], ["did you mean 'unary_op'"]),
    "pointwise_iterator_arity": (ABS + "    pointwise: {dtypes: all, iterator: binary_op, formula: x}\n", 4, ["takes 2 input(s)", "names 1"], ["'inputs:'"]),
    "pointwise_not_a_tensor_iterator": ("aten:\n  - op: mm.out\n    kernel: k\n    pointwise: {dtypes: all, formula: x}\n", 4, ["builds no TensorIterator"], ["impl() in csrc/aten"]),
    "pointwise_int64_scalar_not_int": ("aten:\n  - op: add.out\n    kernel: k\n    pointwise: {dtypes: all, scalars: {alpha: int64}, formula: x}\n", 4, ["'alpha' is not an int argument"], ["use compute or element"]),
    "pointwise_unknown_wrapped_number": ("aten:\n  - op: mul.out\n    kernel: k\n    pointwise: {dtypes: all, wrapped_numbers: {othr: compute}, formula: x}\n", 4, ["'othr' is not a tensor operand"], ["did you mean 'other'"]),
    "pointwise_wrapped_number_conversion": ("aten:\n  - op: mul.out\n    kernel: k\n    pointwise: {dtypes: all, wrapped_numbers: {other: int64}, formula: x}\n", 4, ["'wrapped_numbers' must map operand names to compute or element"], ["wrapped_numbers: {other: compute}"]),
    "pointwise_unknown_scalar": ("aten:\n  - op: add.out\n    kernel: k\n    pointwise: {dtypes: all, scalars: {alhpa: element}, formula: x}\n", 4, ["'alhpa' is not a scalar argument"], ["did you mean 'alpha'"]),
    "pointwise_bad_output": (EXP + "    pointwise: {dtypes: all, output: boolean, formula: x}\n", 4, ["unknown output dtype 'boolean'"], ["output: bool"]),
    "pointwise_too_many_inputs": (EXP + "    pointwise: {dtypes: all, inputs: [self, a, b, c], formula: x}\n", 4, ["reads 4 tensor inputs", "launcher's 3"], ["route 1c"]),
    "pointwise_repeated_operand": (EXP + "    pointwise: {dtypes: all, inputs: [self, self], formula: x}\n", 4, ["operand names repeat"], ["its own name"]),
    "pointwise_formula_unknown_name": (EXP + "    pointwise: {dtypes: floating, formula: \"math::exp(slef)\"}\n", 4, ["uses 'slef'", "not an operand"], ["did you mean 'self'"]),
    "pointwise_formula_unknown_name_in_block": (
        "aten:\n  - op: add.out\n    kernel: k\n    pointwise:\n      dtypes: all\n      formula: |\n        const M y = self + alpah * other;\n        return y;\n",
        7, ["uses 'alpah'"], ["did you mean 'alpha'"],
    ),
    "pointwise_formula_has_of_required_scalar": (
        "aten:\n  - op: add.out\n    kernel: k\n    pointwise: {dtypes: all, formula: \"has_alpha ? self : other\"}\n", 4,
        ["uses 'has_alpha'"], ["did you mean 'alpha'"],
    ),
    "tags_not_list": (AXPBY + "    tags: pointwise\n", 4, ["'tags' must be a list"], ["tags: [pointwise]"]),
    "top_level_not_mapping": ("- op: view\n  kernel: k\n", 1, ["top level must be a mapping"], ["'aten:'"]),
    "unknown_top_level_key": ("aten: []\ncustm: []\n", 2, ["unknown top-level key 'custm'"], ["did you mean 'custom'"]),
    "section_not_list": ("aten:\n  op: view\n", 1, ["'aten' must be a list"], ["'- ...'"]),
    "entry_not_mapping": ("aten:\n  - view\n", 2, ["each 'aten' entry must be a mapping"], ["- op:"]),
    "duplicate_key": ("aten:\n  - op: view\n    op: view\n    kernel: k\n", 3, ["duplicate key 'op'", "line 2"], ["keep only one"]),
    "tests_not_mapping": (VIEW + "    tests: [skip]\n", 4, ["'tests' must be a mapping"], ["covered_by:"]),
    "tests_unknown_key": (VIEW + "    tests:\n      skp: {out: why}\n", 5, ["unknown key 'skp'"], ["did you mean 'skip'"]),
    "tests_skip_empty_reason": (
        VIEW + "    tests:\n      skip:\n        out: why\n        float16: ''\n", 7,
        ["skip of 'float16' has no written reason"], ["float16: \""],
    ),
    "tests_skip_no_reason": (VIEW + "    tests:\n      skip:\n        inplace:\n", 6, ["skip of 'inplace' has no written reason"], ["inplace: \""]),
    "tests_skip_not_mapping": (VIEW + "    tests:\n      skip: [out]\n", 5, ["'skip' must be a non-empty mapping"], ["skip: {float16:"]),
    "tests_skip_key_not_name": (VIEW + "    tests:\n      skip:\n        1: why\n", 6, ["skip key 1"], ["variant name"]),
    "tests_opinfo_not_list": (VIEW + "    tests:\n      opinfo: view\n", 5, ["'opinfo' must be a non-empty list"], ["opinfo: ["]),
    "tests_covered_by_empty": (VIEW + "    tests:\n      covered_by: ' '\n", 5, ["'covered_by' must say which tests"], ["covered_by: \""]),
    "tests_covered_by_and_skip": (
        VIEW + "    tests:\n      covered_by: tests/test_views.py\n      skip: {out: why}\n", 4,
        ["'covered_by'", "cannot go with"], ["keep either"],
    ),
    "tests_gradient_of_not_list": (VIEW + "    tests:\n      gradient_of: view\n", 5, ["'gradient_of' must be a non-empty list"], ["gradient_of: ["]),
    "tests_gradient_of_and_skip": (
        VIEW + "    tests:\n      gradient_of: [view]\n      skip: {out: why}\n", 4,
        ["'gradient_of'", "cannot go with 'skip'"], ["keep either"],
    ),
    "tests_custom_opinfo": (AXPBY + "    tests:\n      opinfo: [add]\n", 5, ["unknown key 'opinfo'"], ["'covered_by'"]),
    "derivative_unknown_argument": (
        SCALE_ADD + '    derivatives:\n      x: "grad * a"\n      yy: "grad"\n', 7,
        ["foo::scale_add", "'derivatives:' names 'yy'", "not an argument"], ["did you mean 'y'"],
    ),
    "derivative_unknown_argument_no_close_name": (
        SCALE_ADD + '    derivatives: {weight: "grad"}\n', 5, ["names 'weight'"], ["differentiable arguments: x, y"],
    ),
    "derivative_of_non_tensor_argument": (
        SCALE_ADD + '    derivatives:\n      a: "grad * x"\n', 6, ["'a' is a float argument", "not differentiable"], ["only Tensor arguments", "x, y"],
    ),
    "derivative_on_bool_output": (
        LESS + '    derivatives: {x: "grad"}\n', 5, ["foo::less", "not differentiable", "bool"], ["remove 'derivatives:'"],
    ),
    "derivative_on_integer_only_op": (
        'custom:\n  - schema: "foo::inc(Tensor x) -> Tensor"\n    kernel: inc\n'
        '    pointwise: {dtypes: integral, iterator: unary_op, formula: "x + 1"}\n    derivatives: {x: "grad"}\n', 5,
        ["not differentiable", "computes only in int16, int32, int64, int8, uint8"], ["remove 'derivatives:'"],
    ),
    "derivative_on_non_tensor_return": (
        'custom:\n  - schema: "foo::count(Tensor x) -> int"\n    kernel: count\n    derivatives: {x: "grad"}\n', 4,
        ["not differentiable", "returns int"], ["remove 'derivatives:'"],
    ),
    "derivative_uses_unknown_name": (
        SCALE_ADD + '    derivatives: {x: "grad * aa"}\n', 5, ["derivative for 'x' uses 'aa'"], ["did you mean 'a'"],
    ),
    "derivative_not_python": (SCALE_ADD + '    derivatives: {x: "grad *"}\n', 5, ["not a Python expression"], ["torch ops"]),
    "derivative_empty": (SCALE_ADD + '    derivatives: {x: ""}\n', 5, ["derivative for 'x' must be a non-empty"], ["grad"]),
    "derivatives_not_mapping": (SCALE_ADD + '    derivatives: [x]\n', 5, ["'derivatives' must be a non-empty mapping"], ["derivatives: {x:"]),
    "derivative_keyword_only": (
        'custom:\n  - schema: "foo::f(Tensor x, *, Tensor y) -> Tensor"\n    kernel: f\n    derivatives: {y: "grad"}\n', 4,
        ["'y' is keyword-only"], ["before the '*'"],
    ),
    "reference_uses_unknown_name": (SCALE_ADD + '    reference: "a * x + z"\n', 5, ["reference uses 'z'"], ["names: x, y, a"]),
    "custom_pointwise_without_iterator": (
        'custom:\n  - schema: "foo::f(Tensor x) -> Tensor"\n    kernel: f\n    pointwise: {dtypes: floating, formula: "x"}\n', 4,
        ["foo::f", "names no iterator", "fake implementation"], ["'iterator:'", "binary_op"],
    ),
    "custom_pointwise_manual_iterator": (
        'custom:\n  - schema: "foo::f(Tensor x) -> Tensor"\n    kernel: f\n    pointwise: {dtypes: floating, iterator: manual, formula: "x"}\n', 4,
        ["iterator 'manual' has no standard shape rule"], ["unary_op"],
    ),
    "custom_pointwise_not_functional": (
        'custom:\n  - schema: "foo::f(Tensor x) -> (Tensor, Tensor)"\n    kernel: f\n    pointwise: {dtypes: floating, iterator: unary_op, formula: "x"}\n', 4,
        ["must be functional"], ["-> Tensor"],
    ),
    "custom_pointwise_output": (
        SCALE_ADD.replace("iterator: binary_op,", "iterator: binary_op, output: float64,"), 4, ["result dtype is its iterator's"], ["remove 'output:'"],
    ),
    "custom_pointwise_formula_unknown_name": (
        SCALE_ADD.replace('"a * x + y"', '"aa * x + y"'), 4, ["foo::scale_add", "uses 'aa'"], ["did you mean 'a'"],
    ),
    "custom_argument_python_keyword": (
        'custom:\n  - schema: "foo::f(Tensor x, Tensor lambda) -> Tensor"\n    kernel: f\n    pointwise: {dtypes: floating, iterator: binary_op, formula: "x"}\n', 2,
        ["'lambda' is a Python keyword"], ["rename it"],
    ),
    "invalid_yaml": ("aten:\n  - op: [view\n", 3, ["invalid YAML"], ["fix the YAML syntax"]),
}


def _run_in_process(args, capsys):
    """main() in this process (torchgen's model loads once for every case), as the CLI runs it:
    an exception other than a ManifestError escapes and fails the test like a traceback would."""
    from codegen.__main__ import main

    returncode = main(args)
    return returncode, capsys.readouterr().err


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_manifest(tmp_path, case, capsys):
    text, line, what, suggestion = CASES[case]
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(text, encoding="utf-8")
    returncode, stderr = _run_in_process(
        ["--manifest", str(manifest), "--out", str(tmp_path / "out"), "--pyi", str(tmp_path / "ops.pyi")], capsys
    )
    assert returncode == 1
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"{manifest}:{line}: "), lines[0]
    message, _, hint = lines[0].partition("; ")
    for word in what:
        assert word in message, lines[0]
    assert hint, lines[0]
    for word in suggestion:
        assert word in lines[0].split(": ", 1)[1], lines[0]
    assert not os.path.exists(tmp_path / "out"), "nothing is written for a bad manifest"


def test_bad_manifest_from_the_command_line(tmp_path):
    """The CLI prints the same one line and exits 1, without a traceback."""
    manifest = tmp_path / "ops.yaml"
    manifest.write_text(CASES["unknown_aten_op"][0], encoding="utf-8")
    r = run_codegen("--manifest", str(manifest), "--out", str(tmp_path / "out"), "--pyi", str(tmp_path / "ops.pyi"))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{manifest}:2: unknown aten op 'ad.out'; did you mean"), r.stderr
