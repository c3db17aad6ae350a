"""The manifest -> OpInfo mapping and the helpers behind test_ops.py.

Every aten entry of yaml/ops.yaml (parsed by codegen's own loader) is mapped to torch's OpInfo
database: its optional `tests: {opinfo: [...]}` names the OpInfos; otherwise the op name without
overload is matched against OpInfo `name`, `aten_name` and `nn.functional.<name>`, trying the
name as is, without a leading `_` (`_softmax` -> softmax) and without a trailing `_` (in-place
`fill_` -> fill). Each variant of a matched OpInfo is one Target. `tests: {skip: {key: reason}}`
opts out of a case, a dtype or a variant; `tests: {covered_by: reason}` says other tests cover
an op that has no OpInfo.

A pointwise entry's `dtypes:` (the computation dtypes its generated kernel claims) also decides
which dtypes are tested: a dtype computed in an unclaimed dtype needs no opt-out; it must raise
cleanly instead (test_opted_out_dtype_raises_cleanly).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
from torch.utils import _pytree as pytree

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # codegen/ lives at the repo root; it is not installed
    sys.path.insert(0, str(REPO))

from codegen.manifest import did_you_mean, parse_manifest  # noqa: E402
from torch.testing import make_tensor  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.testing._internal.opinfo.core import BinaryUfuncInfo, SampleInput, UnaryUfuncInfo  # noqa: E402

import torch_foo  # noqa: E402

# Dtypes tested, where the OpInfo says the CPU supports them. Complex dtypes only for OpInfos
# whose entries are all pointwise formulas (claimed dtypes known): there a complex dtype is either
# claimed (tested like any other) or must raise cleanly; hand-written kernels compute no complex.
COMPLEX_DTYPES = (torch.complex64, torch.complex128)
DTYPES = (
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
    torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
) + COMPLEX_DTYPES
DTYPE_NAMES = {str(d).removeprefix("torch."): d for d in DTYPES}
# Case names a manifest `skip:` may name (besides dtype and variant names).
CASES = ("values", "noncontiguous", "out", "inplace", "gradient", "gradcheck", "cuda_paths")

# Samples per (op, dtype) and case: the first N of opinfo.sample_inputs (plus the large ones of
# elementwise ops). They already cover 0-d, empty and broadcasting inputs; layout, out= and
# in-place need fewer.
N_VALUES, N_LAYOUT, N_GRAD, N_GRADCHECK = 8, 4, 4, 2

# float32 kernels may sum in another order than the CPU (tree reductions); other dtypes keep
# assert_close's defaults, integers and bool compare exactly.
TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.complex64: dict(rtol=1e-5, atol=1e-5)}

# The manifest the build used: FOO_MANIFEST as in pyproject.toml, else yaml/ops.yaml.
MANIFEST = Path(os.environ.get("FOO_MANIFEST") or REPO / "yaml" / "ops.yaml")


def _shown(path):
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def load_manifest():
    return parse_manifest(MANIFEST.read_text(encoding="utf-8"), _shown(MANIFEST))


def where(entry):
    """`yaml/ops.yaml:12`: where an entry (or its tests: key) is, for messages."""
    return f"{_shown(MANIFEST)}:{entry.tests.line or entry.line}"


def entry_name(entry):
    return f"aten::{entry.op}" if hasattr(entry, "op") else entry.schema.split("(")[0].strip()


def opinfo_key(o):
    return o.name + (f".{o.variant_test_name}" if o.variant_test_name else "")


def candidate_names(op):
    """Names an aten op is looked up under in op_db, in order."""
    base = op.split(".")[0]
    return list(dict.fromkeys((base, base.lstrip("_"), base.rstrip("_"))))


def map_entry(entry):
    """The OpInfos (all variants) an aten manifest entry is tested with."""
    if entry.tests.opinfo:
        return [o for o in op_db if o.name in entry.tests.opinfo]
    for name in candidate_names(entry.op):
        found = [o for o in op_db if name in (o.name, o.aten_name) or o.name == f"nn.functional.{name}"]
        if found:
            return found
    return []


@dataclass
class Target:
    """One OpInfo variant under test, with the opt-outs of the manifest entries mapped to it."""

    key: str  # OpInfo name[.variant], the first part of every test id
    opinfo: object
    skips: dict = field(default_factory=dict)  # skip key -> "reason (yaml/ops.yaml:12)"
    # Computation dtypes the manifest's pointwise formulas claim; None: every dtype (the entries
    # mapped here have hand-written kernels, or a hand-written one among them).
    claimed: set | None = None
    # The sim-only paths its kernels take ("" for none; the manifest's `sim_only_path`): its
    # values and gradients are tested once more with them off (cuda's kernels).
    sim_only_path: str = ""

    def skipped(self, case):
        if case in DTYPE_NAMES and not self.claims(DTYPE_NAMES[case]):
            return f"{case} is not among the dtypes the manifest's formula claims"
        return self.skips.get(case)

    def claims(self, dtype):
        """Whether a sample of `dtype` computes in a claimed dtype: its own, or the default float
        dtype where the op promotes integers (exp of int32 computes in float32)."""
        if self.claimed is None or dtype_name(dtype) in self.claimed:
            return True
        promoted = dtype_name(torch.get_default_dtype())
        return (self.opinfo.promotes_int_to_float and not dtype.is_floating_point and not dtype.is_complex
                and promoted in self.claimed)

    @functools.cached_property
    def cpu_dtypes(self):
        supported = self.opinfo.supported_dtypes("cpu")
        return [d for d in DTYPES if d in supported and (self.claimed is not None or d not in COMPLEX_DTYPES)]

    @property
    def dtypes(self):
        return [d for d in self.cpu_dtypes if not self.skipped(dtype_name(d))]

    def grad_dtype_ok(self, dtype):
        return (
            self.opinfo.supports_autograd
            and dtype in self.cpu_dtypes
            and dtype in self.opinfo.supported_backward_dtypes("cpu")
            and not self.skipped(dtype_name(dtype))
        )


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def claimed_dtypes(entry):
    """The dtype names an entry's pointwise formulas claim (all cases); None for a hand-written kernel."""
    if entry.pointwise is None:
        return None
    return {d for case in entry.pointwise.cases for d in case.dtypes}


@functools.cache
def targets():
    """OpInfo key -> Target, for every aten entry mapped to OpInfos (variants opted out included)."""
    out = {}
    claims = {}
    for entry in load_manifest().aten:
        if entry.tests.covered_by or entry.tests.gradient_of:
            continue
        for o in map_entry(entry):
            t = out.setdefault(opinfo_key(o), Target(opinfo_key(o), o))
            # Several entries can map to one OpInfo (add.out, add.Scalar): their opt-outs add up,
            # and so do their claims (a hand-written kernel among them claims every dtype).
            for key, reason in entry.tests.skip:
                # "variant.key" opts out of key for that variant only (trilinear.float16).
                variant, dot, scoped = key.partition(".")
                if dot and variant in {v.variant_test_name for v in op_db if v.name == o.name}:
                    if variant != o.variant_test_name:
                        continue
                    key = scoped
                t.skips.setdefault(key, f"{reason} ({where(entry)})")
            claims.setdefault(t.key, []).append(claimed_dtypes(entry))
            if entry.tests.sim_only_path:
                t.sim_only_path = f"{entry.tests.sim_only_path} ({where(entry)})"
    for key, found in claims.items():
        if all(c is not None for c in found):
            out[key].claimed = set().union(*found)
    return out


def variant_skip(t):
    """The reason the manifest opts this OpInfo variant out, or None."""
    return t.opinfo.variant_test_name and t.skipped(t.opinfo.variant_test_name)


@functools.cache
def samples(key, dtype, requires_grad=False):
    """id -> CPU SampleInput: the first OpInfo samples (`sample0`...) and, for elementwise ops,
    large ones. The same on every call (a fixed seed), so a test id always means one input."""
    opinfo = targets()[key].opinfo
    with torch.random.fork_rng(devices=[]):
        # Only the CPU generator: torch.manual_seed also seeds (and stack-traces) every lazy device.
        torch.default_generator.manual_seed(0)
        # opinfo.sample_inputs() minus its TrackedInputIter wrapper, which calls inspect.stack()
        # per call (about 0.5 s under pytest's deep stack) to find a unittest test function.
        gen = opinfo.sample_inputs_func(opinfo, "cpu", dtype, requires_grad)
        out = {f"sample{i}": s for i, s in enumerate(itertools.islice(gen, N_GRAD if requires_grad else N_VALUES))}
        if not requires_grad:
            out.update(large_samples(opinfo, dtype))
    return out


def sample_ids(key, dtype, n, requires_grad=False):
    """The ids a case runs: the first n OpInfo samples and every large one."""
    ids = list(samples(key, dtype, requires_grad))
    return [i for i in ids if not i.startswith("sample")] + [i for i in ids if i.startswith("sample")][:n]


# Elementwise OpInfo samples hold at most a few hundred elements: one launch block. A large odd
# shape spans many blocks and leaves ragged tails, where grid-stride and vectorised loops go wrong.
LARGE = (129, 311)


def large_samples(opinfo, dtype):
    def make(shape, **kw):
        return make_tensor(shape, dtype=dtype, device="cpu", **kw)

    if isinstance(opinfo, UnaryUfuncInfo):
        low, high = opinfo.domain  # inputs inside the op's domain, as torch's own samples do
        low = None if low is None else low + opinfo._domain_eps
        high = None if high is None else high - opinfo._domain_eps
        if low is not None and high is not None and not dtype.is_floating_point and high - low < 1:
            return {}  # no integer inside the domain (logit's (0, 1))
        x = make(LARGE, low=low, high=high)
        return {"large": SampleInput(x, kwargs=opinfo.sample_kwargs("cpu", dtype, x)[0])}
    if isinstance(opinfo, BinaryUfuncInfo):
        lhs, rhs = opinfo.lhs_make_tensor_kwargs, opinfo.rhs_make_tensor_kwargs
        a, b = make(LARGE, **lhs), make(LARGE, **rhs)
        col, row = make((LARGE[0], 1), **lhs), make((1, LARGE[1]), **rhs)
        kwargs = opinfo.sample_kwargs("cpu", dtype, a)[0]
        return {
            "large": SampleInput(a, args=(b,), kwargs=kwargs),
            # A column against a row: both broadcast (in-place must refuse it, like the CPU).
            "large_broadcast": SampleInput(col, args=(row,), kwargs=kwargs, broadcasts_input=True),
        }
    return {}


# ---- moving samples ---------------------------------------------------------------------------


def copy_to(device):
    """A function copying a tensor to `device` keeping its sizes, strides and storage offset.

    t.to(device) would compact a non-dense view (the point of a noncontiguous sample) and drop
    the storage around a partial view (as_strided samples index into it), so the whole storage
    is copied and viewed the same way. requires_grad is kept; the copy is a new leaf.
    """

    def f(t):
        if not isinstance(t, torch.Tensor):
            return t
        with torch.no_grad():
            n = t.untyped_storage().nbytes() // t.element_size()
            flat = t.new_empty(0).set_(t.untyped_storage(), 0, (n,), (1,)).to(device, copy=True)
            out = flat.as_strided(t.shape, t.stride(), t.storage_offset())
        return out.requires_grad_(t.requires_grad)

    return f


def on(device, sample):
    s = sample.transform(copy_to(device))
    if "device" in s.kwargs:  # factories (arange, linspace) take the device as an argument
        s.kwargs["device"] = device
    return s


def sample_device(sample):
    """Where a sample lives: its device argument, else its first tensor."""
    tensors = [t for t in pytree.tree_leaves((sample.input, sample.args)) if isinstance(t, torch.Tensor)]
    return sample.kwargs.get("device") or (tensors[0].device if tensors else "cpu")


def transposed(sample):
    """The sample with every tensor of >= 2 dims column-major (same values, transposed strides)."""
    return sample.transform(lambda t: t.mT.contiguous().mT if isinstance(t, torch.Tensor) and t.dim() >= 2 else t)


def has_2d_tensor(sample):
    return any(isinstance(t, torch.Tensor) and t.dim() >= 2 for t in pytree.tree_leaves((sample.input, sample.args, sample.kwargs)))


# ---- checks -----------------------------------------------------------------------------------


def describe(sample):
    return sample.summary() if hasattr(sample, "summary") else repr(sample)


def fallbacks():
    return ", ".join(f"{op} x{n}" for op, n in sorted(torch_foo.fallback_report().items()))


def fail(what, message):
    """Fail with a message that says it all, without a traceback: pytest would parse
    common_methods_invocations.py (25k lines) for every OpInfo frame, seconds per failure."""
    pytest.fail(f"{what}: {message}", pytrace=False)


@contextlib.contextmanager
def native(what, dtype=None):
    """Fail if the block raises or any op in it fell back to the CPU: this proves an op native."""
    torch_foo.reset_fallback_report()
    error = None
    try:
        yield
    except Exception as e:  # noqa: BLE001 - any error of the foo call is the test's failure
        error = e
    if error is not None:  # failed outside the except block, so no "during handling of" chain
        message = f"foo raised {type(error).__name__}: {error}"
        if fallbacks():
            message += f"\n(after falling back to the CPU: {fallbacks()})"
        if dtype is not None and dtype_mentioned(str(error), dtype):
            name = dtype_name(dtype)
            message += f"\nIf the foo kernel does not support {name}, opt out with a reason: 'tests: {{skip: {{{name}: \"why\"}}}}'"
        fail(what, message)
    if fallbacks():
        fail(what, f"fell back to the CPU: {fallbacks()}")


def assert_same(actual, expected, what):
    """foo results equal the CPU ones: structure, dtype, shape and values (NaN == NaN)."""
    for t in pytree.tree_leaves(actual):
        if isinstance(t, torch.Tensor) and t.device.type != "foo":
            fail(what, f"a result is on {t.device}, not foo")
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if a_spec != e_spec:
        fail(what, f"result structure {a_spec} != CPU's {e_spec}")
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if isinstance(a, torch.Tensor):
            a = a.detach().cpu()
        if isinstance(e, torch.Tensor):
            e = e.detach()
        tol = TOLERANCE.get(e.dtype, {}) if isinstance(e, torch.Tensor) else {}
        try:
            torch.testing.assert_close(a, e, equal_nan=True, **tol)
        except AssertionError as err:
            fail(what, f"result {i} differs from the CPU:\n{err}")


def _batch_norm_eval_as_cuda(cpu_sample, expected):
    """In evaluation the CPU returns 0-element save_mean/save_invstd; foo, as CUDA (and ATen's
    meta for non-CPU devices), returns running_mean and 1 / sqrt(running_var + eps)
    (docs/decisions.md). Samples: (input, weight, bias, running_mean, running_var, training,
    momentum, eps); without running statistics evaluation raises on every device."""
    args = cpu_sample.args
    if len(args) != 7 or args[4] or args[2] is None:
        return expected
    running_mean, running_var, eps = args[2], args[3], args[6]
    invstd = (running_var.double() + eps).rsqrt().to(running_var.dtype)
    return (expected[0], running_mean.detach().clone(), invstd.detach())


def _layer_norm_stats_as_cuda(cpu_sample, expected):
    """The CPU returns a 16-bit input's mean/rstd in its dtype (rounded); foo, as CUDA (and ATen's
    meta), in float32. Samples: (input, normalized_shape, weight, bias, eps)."""
    x, (shape, _, _, eps) = cpu_sample.input, cpu_sample.args
    if x.dtype not in (torch.float16, torch.bfloat16):
        return expected
    dims = tuple(range(x.dim() - len(shape), x.dim()))
    var, mean = torch.var_mean(x.detach().double(), dim=dims, correction=0, keepdim=True)
    return (expected[0], mean.float(), (var + eps).rsqrt().float())


# OpInfo name -> f(CPU sample, CPU result): the result foo must give where it follows CUDA, not the CPU.
CUDA_CONVENTIONS = {
    "native_batch_norm": _batch_norm_eval_as_cuda,
    "_native_batch_norm_legit": _batch_norm_eval_as_cuda,
    "native_layer_norm": _layer_norm_stats_as_cuda,
}


def _fmod_exact_where_the_cpu_overflows(op, cpu_sample, expected):
    """The CPU's vectorised fmod (AVX2/AVX-512: Sleef's fmodf, which fmod and remainder both use)
    returns NaN for a finite x and y != 0 when x / y overflows float, e.g. fmod(4.9375, 2**-126),
    in torch 2.11 and 2.13 alike; its scalar path (std::fmod; all of it with
    ATEN_CPU_CAPABILITY=default) and CUDA's ::fmod return the exact 0, and so does foo.
    torch 2.11's OpInfo samples hit it: make_tensor(exclude_zero=True) turns a drawn 0 into
    finfo.tiny (2**-126), so 2.11's bfloat16 fmod/remainder samples divide by 2**-126; 2.13's
    draws hold no 0. Those elements, and only those, get the exact value: math.fmod in double
    (fmod is exact and its result representable in the inputs' dtype), then remainder's
    adjustment to the divisor's sign as ATen's scalar kernel does."""
    if not isinstance(expected, torch.Tensor) or not expected.is_floating_point() or not cpu_sample.args:
        return expected
    x, y = cpu_sample.input, cpu_sample.args[0]
    if not isinstance(x, torch.Tensor):
        return expected
    x, y = torch.broadcast_tensors(x.detach(), torch.as_tensor(y, dtype=x.dtype).detach())
    broken = expected.isnan() & x.isfinite() & y.isfinite() & (y != 0)
    if not broken.any():
        return expected
    fixed = expected.detach().clone()
    for i in map(tuple, broken.nonzero().tolist()):
        a, b = float(x[i]), float(y[i])
        r = math.fmod(a, b)
        if op == "remainder" and r != 0 and (r < 0) != (b < 0):
            r += b
        fixed[i] = r
    return fixed


def _topk_ties_lowest_index_first(cpu_sample, expected):
    """Among equal values topk's indices are unspecified: the CPU's std::partial_sort picks any,
    foo (a stable sort of the row, csrc/aten/ops/sort.cpp) the lowest index first. Where the CPU's
    choice differs from that one only between equal values (the values at both index sets are
    the same at every position), the expected indices are the lowest-index-first ones. Integer
    samples tie under every torch (values in [-9, 9]); torch 2.11's bfloat16 samples do too
    (values repeat at bfloat16's precision), 2.13's not. Any other difference (a wrong value,
    another order of distinct values) still fails."""
    x = cpu_sample.input
    if not isinstance(x, torch.Tensor) or x.dim() == 0 or not isinstance(expected, tuple) or len(expected) != 2:
        return expected
    args = list(cpu_sample.args) + [None] * 4
    k = args[0] if args[0] is not None else cpu_sample.kwargs["k"]
    dim = args[1] if args[1] is not None else cpu_sample.kwargs.get("dim", -1)
    largest = args[2] if args[2] is not None else cpu_sample.kwargs.get("largest", True)
    values, indices = expected
    stable = torch.sort(x.detach(), dim=dim, descending=largest, stable=True).indices.narrow(dim, 0, k)
    at_cpu, at_stable = torch.gather(x.detach(), dim, indices), torch.gather(x.detach(), dim, stable)
    if torch.equal(indices, stable) or not torch.equal(at_cpu, at_stable):
        return expected
    return type(expected)((values, stable))  # a tuple or torch.return_types.topk


# OpInfo name -> f(CPU sample, CPU result): where foo and the CPU agree on what the op computes
# but the CPU's result is not the one to compare with (its vectorised kernel's overflow, its
# arbitrary choice among equal values). Each rewrite changes only the elements it names.
REFERENCE_REWRITES = {
    "fmod": functools.partial(_fmod_exact_where_the_cpu_overflows, "fmod"),
    "remainder": functools.partial(_fmod_exact_where_the_cpu_overflows, "remainder"),
    "topk": _topk_ties_lowest_index_first,
}


def check_against_cpu(call, sample, what, dtype, opinfo=None):
    """Run `call(sample)` on a CPU copy and on a foo copy; foo must match, natively (or, for the
    OpInfos in CUDA_CONVENTIONS, match the CPU's result rewritten to CUDA's convention; in
    REFERENCE_REWRITES, the CPU's result where it is wrong or one arbitrary choice of several).

    Where the CPU refuses the input (an in-place op whose result would broadcast, a view of a
    non-viewable layout), foo must refuse it too, without falling back to the CPU first.
    """
    cpu, foo = on("cpu", sample), on("foo", sample)
    try:
        expected, cpu_error = call(cpu), None
    except Exception as e:  # noqa: BLE001 - any refusal; foo must refuse as well
        cpu_error = e
    if cpu_error is not None:
        torch_foo.reset_fallback_report()
        try:
            call(foo)
        except Exception:  # noqa: BLE001
            if fallbacks():
                fail(what, f"raised only after falling back to the CPU: {fallbacks()}")
            return
        fail(what, f"the CPU raised {cpu_error!r}, foo did not")
    # The rewrites read the sample before the call (`sample`: the CPU copy of an in-place call
    # holds its result).
    if opinfo is not None and opinfo.name in CUDA_CONVENTIONS:
        expected = CUDA_CONVENTIONS[opinfo.name](sample, expected)
    if opinfo is not None and opinfo.name in REFERENCE_REWRITES:
        expected = REFERENCE_REWRITES[opinfo.name](sample, expected)
    with native(what, dtype):
        actual = call(foo)
    assert_same(sample.output_process_fn_grad(actual), sample.output_process_fn_grad(expected), what)


def dtype_mentioned(message, dtype):
    """Whether an error names the dtype: torch.float16, float16 or c10's Half."""
    c10 = str(torch.empty(0, dtype=dtype).type()).split(".")[-1].removesuffix("Tensor")  # Half, Long...
    return any(n in message for n in (str(dtype), dtype_name(dtype), c10))


def grad_leaves(sample):
    return [t for t in pytree.tree_leaves((sample.input, sample.args, sample.kwargs)) if isinstance(t, torch.Tensor) and t.requires_grad]


def diff_outputs(opinfo, sample):
    """Forward through the op; the outputs that require grad."""
    out = sample.output_process_fn_grad(opinfo.op(sample.input, *sample.args, **sample.kwargs))
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad]


def replace_leaves(sample, new):
    """The (input, args, kwargs) of `sample` with its grad-requiring tensors replaced by `new`."""
    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    it = iter(new)
    leaves = [next(it) if isinstance(t, torch.Tensor) and t.requires_grad else t for t in leaves]
    return pytree.tree_unflatten(leaves, spec)
