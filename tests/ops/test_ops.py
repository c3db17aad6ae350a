"""Tests generated from yaml/ops.yaml: every native op against the CPU, through torch's OpInfos.

A new manifest op is covered without new test code (mapping and opt-outs: optest.py and
docs/adding-an-op.md). Test ids read `test_values[div.trunc_rounding-float32-sample3]`. Each
foo call runs inside `native(...)`: the test fails, listing the ops, if anything fell back to
the CPU. Samples are made on the CPU first, outside that check.
"""

from __future__ import annotations

import itertools
import re

import pytest
import torch
import torch.utils._python_dispatch
from torch.utils import _pytree as pytree

import torch_foo
from codegen.manifest import did_you_mean
from conftest import cuda_paths
from optest import (
    CASES, DTYPE_NAMES, N_GRAD, N_GRADCHECK, N_LAYOUT, N_VALUES, REPO, assert_same, candidate_names,
    check_against_cpu, copy_to, describe, diff_outputs, dtype_mentioned, dtype_name, entry_name, fail,
    fallbacks, grad_leaves, has_2d_tensor, load_manifest, map_entry, native, on, op_db, replace_leaves,
    TOLERANCE, sample_device, sample_ids, samples, targets, transposed, variant_skip, where,
)

MANIFEST = load_manifest()
ENTRIES = list(MANIFEST.aten) + list(MANIFEST.custom)


@pytest.fixture(autouse=True, scope="module")
def _one_cpu_thread():
    """CPU references of small inputs need no intra-op threads; on a busy 2-core machine
    OpenMP's barriers made one 40k-element comparison take 400 ms instead of 1 ms."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _skipped(key, case, reason):
    return pytest.param(key, None, None, id=f"{key}-skipped", marks=pytest.mark.skip(reason=f"{key} {case}: {reason}"))


def _params(case, dtypes, n, applies=lambda t: True, requires_grad=False):
    """(key, dtype, sample id) for every target the case applies to; an opt-out shows as one skip."""
    out = []
    for key, t in sorted(targets().items()):
        if not applies(t):
            continue
        if variant_skip(t):  # reported once, under test_values
            out += [_skipped(key, "variant", variant_skip(t))] if case == "values" else []
        elif t.skipped(case):
            out.append(_skipped(key, case, t.skipped(case)))
        else:
            for dtype in dtypes(t):
                for sid in sample_ids(key, dtype, n, requires_grad):
                    if t.skipped(sid):  # one sample opted out (reported once per case and dtype)
                        out.append(pytest.param(key, None, None, id=f"{key}-{dtype_name(dtype)}-{sid}-skipped",
                                                marks=pytest.mark.skip(reason=f"{key} {sid}: {t.skipped(sid)}")))
                    else:
                        out.append(pytest.param(key, dtype, sid, id=f"{key}-{dtype_name(dtype)}-{sid}"))
    return out


def _call(opinfo):
    return lambda s: opinfo.op(s.input, *s.args, **s.kwargs)


def _what(key, dtype, case, sample):
    return f"{key} {dtype_name(dtype)} {case} {describe(sample)}"


# ---- every manifest entry is tested -----------------------------------------------------------


# OpInfos the manifest names that torch 2.11's op_db lacks (2.13's has them): their entries are
# not tested through them there, and say what still reaches their kernels. Asked of op_db, not
# of the version; a name missing from a torch that should have it (a typo) still fails.
OPINFOS_NEWER_THAN_TORCH_2_11 = {
    "native_group_norm": "added after torch 2.11; native_group_norm_backward is still reached by the "
    "nn.functional.group_norm OpInfo's gradient tests and compared with the CPU in tests/test_cnn.py",
}


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_name)
def test_manifest_entry_is_tested(entry):
    """An op has OpInfo tests or says what covers it; its opt-outs name real cases."""
    name, at = entry_name(entry), where(entry)
    if entry.tests.covered_by:
        paths = re.findall(r"tests/[\w/.-]+\.py", entry.tests.covered_by)
        assert paths, (f"{at}: {name}'s covered_by names no test file; write which one (\"tests/test_....py: what it "
                       "checks\"), or, for a backward op, 'gradient_of: [<OpInfo>]'")
        for path in paths:
            assert (REPO / path).exists(), f"{at}: {name} is covered_by {path}, which does not exist"
        return
    if not hasattr(entry, "op"):
        if entry.reference is not None:  # tests/ops/test_custom_ops.py tests it against its reference
            return
        pytest.fail(f"{at}: custom op {name} has no OpInfo; add 'reference: \"<what it computes, with torch ops>\"' "
                    "(tests/ops/test_custom_ops.py then tests it) or 'tests: {covered_by: \"tests/test_....py\"}'")
    names = {o.name for o in op_db}
    if entry.tests.gradient_of:  # measured by test_backward_op_is_reached_by_the_gradients_it_names
        for n in entry.tests.gradient_of:
            assert n in names, f"{at}: gradient_of names '{n}', not an OpInfo; " + did_you_mean(n, names, "see torch's op_db")
        return
    missing = [n for n in entry.tests.opinfo if n not in names and n in OPINFOS_NEWER_THAN_TORCH_2_11]
    if missing:
        pytest.skip(f"{at}: this torch's op_db has no {missing[0]} OpInfo: {OPINFOS_NEWER_THAN_TORCH_2_11[missing[0]]}")
    for n in entry.tests.opinfo:
        qualified = sorted(m for m in names if m.endswith(f".{n}"))  # nll_loss -> nn.functional.nll_loss
        hint = f"did you mean '{qualified[0]}'?" if qualified else did_you_mean(n, names, "see torch's op_db")
        assert n in names, f"{at}: unknown OpInfo '{n}'; {hint}"
    found = map_entry(entry)
    assert found, (
        f"{at}: {name} has no OpInfo (looked for {', '.join(entry.tests.opinfo or candidate_names(entry.op))} in op_db) "
        "and no covered_by; add 'tests: {opinfo: [<OpInfo name>]}' or 'tests: {covered_by: \"what tests it\"}'"
    )
    variants = {o.variant_test_name for o in found} - {""}
    plain = set(CASES) | set(DTYPE_NAMES) | {f"sample{i}" for i in range(N_VALUES)}
    known = plain | variants | {f"{v}.{k}" for v in variants for k in plain}
    for key, _ in entry.tests.skip:
        assert key in known, f"{at}: unknown skip key '{key}'; " + did_you_mean(
            key, known, "use a case (" + ", ".join(CASES) + "), a dtype, a sample (sample0...), a variant ("
            + ", ".join(sorted(variants)) + ") or one of those for one variant (variant.float16)"
        )
    skipped = {k for k, _ in entry.tests.skip}
    assert any(o.variant_test_name not in skipped or not o.variant_test_name for o in found), (
        f"{at}: every OpInfo variant of {name} is skipped; say what tests it with 'covered_by' instead"
    )


class _FooOps(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the aten ops called with a foo tensor among their arguments (the autograd engine
    runs backward on its own thread; the mode follows it there)."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        leaves = pytree.tree_leaves((args, kwargs or {}))
        if any(isinstance(x, torch.Tensor) and x.device.type == "foo" for x in leaves):
            self.names.add(func._schema.name)
        return func(*args, **(kwargs or {}))


GRADIENT_ENTRIES = [e for e in MANIFEST.aten if e.tests.gradient_of]


@pytest.mark.parametrize("entry", GRADIENT_ENTRIES, ids=entry_name)
def test_backward_op_is_reached_by_the_gradients_it_names(entry):
    """A backward op's coverage is measured, not declared: the backward pass of a sample of one of
    the OpInfos its `gradient_of` names, run on foo, calls it on foo (and those OpInfos' gradient
    tests compare that backward with the CPU's)."""
    wanted = "aten::" + entry.op.split(".")[0]
    seen = set()
    for opinfo in (o for o in op_db if o.name in entry.tests.gradient_of):
        dtype = torch.float32 if torch.float32 in opinfo.supported_backward_dtypes("cpu") else torch.float64
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(0)
            cpu_samples = list(itertools.islice(opinfo.sample_inputs_func(opinfo, "cpu", dtype, True), 8))
        for sample in cpu_samples:
            s = on("foo", sample)
            recorder = _FooOps()
            with recorder:
                out = opinfo.op(s.input, *s.args, **s.kwargs)
                grads = [o for o in pytree.tree_leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad]
                if grads:
                    torch.autograd.backward(grads, [torch.ones_like(g) for g in grads])
            if wanted in recorder.names:
                return
            seen |= recorder.names
    pytest.fail(f"{where(entry)}: no backward of {', '.join(entry.tests.gradient_of)} called {wanted} on foo; "
                f"they called {', '.join(sorted(n for n in seen if 'backward' in n)) or 'no backward op'}")


# ---- values, layouts, out=, in-place ----------------------------------------------------------


@pytest.mark.parametrize("key,dtype,sid", _params("values", lambda t: t.dtypes, N_VALUES))
def test_values(key, dtype, sid):
    t = targets()[key]
    s = samples(key, dtype)[sid]
    check_against_cpu(_call(t.opinfo), s, _what(key, dtype, "values", s), dtype, t.opinfo)


@pytest.mark.parametrize("key,dtype,sid", _params("noncontiguous", lambda t: t.dtypes, N_LAYOUT))
def test_noncontiguous(key, dtype, sid):
    t = targets()[key]
    s = samples(key, dtype)[sid]
    check_against_cpu(_call(t.opinfo), s.noncontiguous(), _what(key, dtype, "noncontiguous", s), dtype, t.opinfo)
    if has_2d_tensor(s):
        check_against_cpu(_call(t.opinfo), transposed(s), _what(key, dtype, "transposed", s), dtype, t.opinfo)


@pytest.mark.parametrize("key,dtype,sid", _params("out", lambda t: t.dtypes, N_LAYOUT, lambda t: t.opinfo.supports_out))
def test_out(key, dtype, sid):
    t = targets()[key]
    s = samples(key, dtype)[sid]
    cpu = on("cpu", s)
    expected = t.opinfo.op(cpu.input, *cpu.args, **cpu.kwargs)  # gives the out shapes and dtypes
    if not all(isinstance(e, torch.Tensor) for e in pytree.tree_leaves(expected)):
        pytest.skip(f"{key} returns non-tensors: {type(expected).__name__}")
    # out= of the right shape, then an empty one the op must resize.
    for case, shape_of in (("out", lambda e: e.shape), ("resized out", lambda e: (0,))):

        def call(smp, shape_of=shape_of):
            device = sample_device(smp)
            out = pytree.tree_map_only(torch.Tensor, lambda e: torch.empty(shape_of(e), dtype=e.dtype, device=device), expected)
            result = t.opinfo.op(smp.input, *smp.args, **smp.kwargs, out=out)
            assert all(r is o for r, o in zip(pytree.tree_leaves(result), pytree.tree_leaves(out))), "does not return its out"
            return result

        check_against_cpu(call, s, _what(key, dtype, case, s), dtype, t.opinfo)


@pytest.mark.parametrize("key,dtype,sid", _params("inplace", lambda t: t.dtypes, N_LAYOUT, lambda t: t.opinfo.inplace_variant))
def test_inplace(key, dtype, sid):
    t = targets()[key]
    s = samples(key, dtype)[sid]

    def call(smp):
        result = t.opinfo.inplace_variant(smp.input, *smp.args, **smp.kwargs)
        assert result is smp.input, "the in-place variant does not return self"
        return result

    # Where the result would broadcast beyond self, the CPU raises and so must foo.
    check_against_cpu(call, s, _what(key, dtype, "inplace", s), dtype, t.opinfo)


def _opted_out_dtypes():
    return [
        pytest.param(key, d, id=f"{key}-{dtype_name(d)}")
        for key, t in sorted(targets().items())
        if not variant_skip(t)
        for d in t.cpu_dtypes
        if t.skipped(dtype_name(d))
    ]


@pytest.mark.parametrize("key,dtype", _opted_out_dtypes())
def test_opted_out_dtype_raises_cleanly(key, dtype):
    """A dtype the manifest opts out of (or its formula does not claim) may raise, but as a Python
    error naming the dtype, natively. A dtype the formula does not claim has no kernel: if the
    op computes anyway (in a claimed dtype), its values must be the CPU's. An explicit opt-out
    says why its values may differ (tests/test_softmax.py checks 16-bit log_softmax its own way)."""
    t = targets()[key]
    todo = list(samples(key, dtype).values())
    if not todo:
        pytest.skip(f"no {dtype_name(dtype)} samples")
    cpu, foo = on("cpu", todo[0]), on("foo", todo[0])
    torch_foo.reset_fallback_report()
    what = _what(key, dtype, "opted-out dtype", todo[0])
    error = None
    try:
        actual = t.opinfo.op(foo.input, *foo.args, **foo.kwargs)
    except Exception as e:  # noqa: BLE001 - any Python error is a clean refusal
        error = e
    if fallbacks():
        fail(what, f"fell back to the CPU: {fallbacks()}")
    if error is not None:
        if not dtype_mentioned(str(error), dtype):
            fail(what, f"the error should name the dtype: {type(error).__name__}: {error}")
        return
    if dtype_name(dtype) in t.skips:
        return
    expected = t.opinfo.op(cpu.input, *cpu.args, **cpu.kwargs)
    assert_same(todo[0].output_process_fn_grad(actual), todo[0].output_process_fn_grad(expected), what)


# ---- gradients --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key,dtype,sid",
    _params("gradient", lambda t: [d for d in (torch.float32, torch.complex64) if t.grad_dtype_ok(d)], N_GRAD, requires_grad=True),
)
def test_gradient(key, dtype, sid):
    """float32 (and, where the formula claims it, complex64) gradients for a random grad_output
    equal the CPU's; forward and backward native."""
    t = targets()[key]
    s = samples(key, dtype, True)[sid]
    what = _what(key, dtype, "gradient", s)
    cpu, foo = on("cpu", s), on("foo", s)
    cpu_outs = diff_outputs(t.opinfo, cpu)
    if not cpu_outs:
        pytest.skip(f"{what}: no differentiable output")
    gen = torch.Generator().manual_seed(0)
    grad_outs = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in cpu_outs]
    expected = torch.autograd.grad(cpu_outs, grad_leaves(cpu), grad_outs, allow_unused=True)
    foo_grad_outs = [copy_to("foo")(g) for g in grad_outs]
    with native(what, dtype):
        actual = torch.autograd.grad(diff_outputs(t.opinfo, foo), grad_leaves(foo), foo_grad_outs, allow_unused=True)
    try:
        assert_same(list(actual), list(expected), what)
    except pytest.fail.Exception:
        # A gradient that sums many float32 products (a convolution's weight gradient) depends on
        # the order of the sum, which differs from the CPU's (and the CPU's with its ISA): then
        # foo must be about as close to the float64 gradient as the CPU is.
        if dtype != torch.float32:
            raise
        _as_close_to_float64_as_the_cpu(t, s, grad_outs, list(actual), list(expected), what)


# foo's float32 gradient may be this many times farther from float64 than the CPU's (summation
# order: a convolution's weight gradient over 128 terms measured 3.05x, nn.functional.conv_transpose3d
# sample2), plus the comparison's own tolerance.
FLOAT64_ERROR_RATIO = 4


def _as_close_to_float64_as_the_cpu(t, s, grad_outs, actual, expected, what):
    wide = s.transform(lambda v: v.detach().double().requires_grad_(v.requires_grad)
                       if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
    reference = torch.autograd.grad(diff_outputs(t.opinfo, wide), grad_leaves(wide),
                                    [g.double() for g in grad_outs], allow_unused=True)
    for i, (a, e, r) in enumerate(zip(actual, expected, reference)):
        if r is None:
            continue
        foo_error = (a.detach().cpu().double() - r).abs().nan_to_num(0).max().item()
        cpu_error = (e.double() - r).abs().nan_to_num(0).max().item()
        bound = FLOAT64_ERROR_RATIO * cpu_error + TOLERANCE[torch.float32]["atol"]
        assert foo_error <= bound, f"{what}: gradient {i} is {foo_error:.3g} from float64, the CPU's {cpu_error:.3g}"


# ---- cuda's kernels where sim takes a sim-only path ----------------------------------------------


@pytest.mark.parametrize("key,dtype,sid", _params("cuda_paths", lambda t: t.dtypes, N_VALUES, lambda t: t.sim_only_path))
def test_cuda_paths_values(key, dtype, sid):
    """An entry whose kernel takes a sim-only path (manifest `sim_only_path`) also runs the kernel
    cuda runs for the same samples: the values case with the sim's fast paths off."""
    with cuda_paths():
        test_values(key, dtype, sid)


@pytest.mark.parametrize(
    "key,dtype,sid",
    _params("cuda_paths", lambda t: [torch.float32] if t.grad_dtype_ok(torch.float32) else [], N_GRAD,
            lambda t: t.sim_only_path, requires_grad=True),
)
def test_cuda_paths_gradient(key, dtype, sid):
    """The same for float32 gradients: the backward kernels' cuda paths."""
    with cuda_paths():
        test_gradient(key, dtype, sid)


@pytest.mark.parametrize(
    "key,dtype,sid",
    _params("gradcheck", lambda t: [d for d in (torch.float64, torch.complex128) if t.grad_dtype_ok(d)], N_GRADCHECK,
            requires_grad=True),
)
def test_gradcheck(key, dtype, sid):
    """Analytical vs numerical gradients on foo in float64 (and complex128 where claimed: Wirtinger
    derivatives, as gradcheck checks them).

    No native check here: gradcheck itself runs helper ops (random vectors, dot products) that
    need not be native; test_gradient proves the op's backward native.
    """
    t = targets()[key]
    s = samples(key, dtype, True)[sid]
    foo = on("foo", s)
    leaves = grad_leaves(foo)
    if not leaves:
        pytest.skip("no input requires grad")

    def fn(*xs):
        inp, args, kwargs = replace_leaves(foo, xs)
        return foo.output_process_fn_grad(t.opinfo.gradcheck_wrapper(t.opinfo.op, inp, *args, **kwargs))

    error = None
    try:
        torch.autograd.gradcheck(fn, leaves, fast_mode=True)
    except Exception as e:  # noqa: BLE001 - GradcheckError or an error of the op itself
        error = e
    if error is not None:
        fail(_what(key, dtype, "gradcheck", s), f"{type(error).__name__}: {error}")
