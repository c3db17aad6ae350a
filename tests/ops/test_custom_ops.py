"""Tests generated from the custom entries of yaml/ops.yaml that declare a `reference:`.

A custom op has no OpInfo; its entry says what it computes (`reference:`, a torch expression
over its arguments), and that is the CPU reference. Every such op gets, for the dtypes its
formula claims and inputs from the schema (same shapes, broadcast, 0-d, empty, transposed, 40k
elements): values and result dtype/shape/strides against the reference and the fake
implementation, the generated binding against torch.ops, `torch.library.opcheck` (schema, fake,
autograd registration, AOT dispatch), its `derivatives:` against CPU autograd of the reference,
`gradcheck` in float64, and an unclaimed dtype raising cleanly. Every foo call runs inside
`native(...)`: nothing may fall back to the CPU.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import torch_foo
from optest import TOLERANCE, assert_same, claimed_dtypes, dtype_name, fail, load_manifest, native, where

ENTRIES = [e for e in load_manifest().custom if e.reference is not None]
FLOATING = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
UNCLAIMED = (torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool)

# Shapes of the tensor arguments, per sample (cycled when an op takes more tensors than listed).
SHAPES = {
    "same": [(5, 7)],
    "broadcast": [(3, 1, 6), (6,)],
    "scalar": [()],
    "empty": [(0, 4)],
    "transposed": [(5, 7)],  # each tensor a transposed view of a (7, 5) one
    "large": [(129, 311)],  # many blocks and ragged tails
}
GRAD_SAMPLES = ("same", "broadcast", "transposed")
OPCHECK_SAMPLES = ("same", "broadcast", "transposed")
# A value per non-tensor argument type, away from typical defaults so that they matter.
SCALAR_VALUES = {"float": 0.75, "Scalar": 1.5, "int": 3, "bool": True, "SymInt": 3}


def _name(entry):
    return entry.schema.split("(")[0].strip()


def _overload(entry):
    name = _name(entry).removeprefix("foo::")
    base, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.foo, base), overload or "default")


def _dtypes(entry):
    claimed = claimed_dtypes(entry)
    return [d for d in FLOATING if claimed is None or dtype_name(d) in claimed]


def _args(entry, sample, dtype, device, requires_grad=False, seed=0):
    """Positional tensors and keyword scalars of one sample, made on the CPU then moved."""
    g = torch.Generator().manual_seed(seed)
    schema = _overload(entry)._schema
    tensors, kwargs, i = [], {}, 0
    for a in schema.arguments:
        if isinstance(a.type, torch.TensorType):
            shape = SHAPES[sample][i % len(SHAPES[sample])]
            i += 1
            if sample == "transposed":
                t = torch.randn(shape[::-1], generator=g, dtype=torch.float64).to(dtype).to(device).t()
            else:
                t = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).to(device)
            tensors.append(t.requires_grad_(requires_grad))
        else:
            kwargs[a.name] = SCALAR_VALUES[str(a.type)]
    return tensors, kwargs


def _reference(entry, tensors, kwargs):
    """The entry's reference expression on CPU tensors."""
    schema = _overload(entry)._schema
    names = [a.name for a in schema.arguments if isinstance(a.type, torch.TensorType)]
    env = {"torch": torch, "math": math, **dict(zip(names, tensors)), **kwargs}
    return eval(entry.reference.text, env)  # noqa: S307 - the manifest's own expression


def _cpu(tensors):
    return [t.detach().cpu() for t in tensors]


def _params(cases, with_dtype=True):
    out = []
    for e in ENTRIES:
        for sample in cases:
            for dtype in (_dtypes(e) if with_dtype else [torch.float32]):
                out.append(pytest.param(e, sample, dtype, id=f"{_name(e)}-{dtype_name(dtype)}-{sample}"))
    return out


def _fake_result(op, tensors, kwargs):
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in tensors]
        out = op(*fakes, **kwargs)
        return out.shape, out.stride(), out.dtype


@pytest.mark.parametrize("entry, sample, dtype", _params(SHAPES))
def test_values(entry, sample, dtype):
    """Values against the reference (computed in float64), dtype and shape against the reference
    in the inputs' dtype, strides against the fake implementation."""
    op = _overload(entry)
    what = f"{where(entry)}: {_name(entry)} {dtype_name(dtype)} {sample}"
    tensors, kwargs = _args(entry, sample, dtype, "foo")
    with native(what, dtype):
        out = op(*tensors, **kwargs)
    cpu = _cpu(tensors)
    like = _reference(entry, cpu, kwargs)
    expected = _reference(entry, [t.double() for t in cpu], kwargs).to(like.dtype)
    if out.dtype != like.dtype or out.shape != like.shape:
        fail(what, f"result {out.dtype} {tuple(out.shape)}, the reference's {like.dtype} {tuple(like.shape)}")
    assert_same(out, expected, what)
    fake = _fake_result(op, tensors, kwargs)
    if (out.shape, out.stride(), out.dtype) != fake:
        fail(what, f"the kernel's result {(tuple(out.shape), out.stride(), out.dtype)} is not its fake implementation's {fake}")


@pytest.mark.parametrize("entry", ENTRIES, ids=_name)
def test_binding_agrees_with_torch_ops(entry):
    """torch_foo.ops.<name> (the generated PythonArgParser binding) and torch.ops.foo run one kernel."""
    tensors, kwargs = _args(entry, "broadcast", torch.float32, "foo")
    binding = getattr(torch_foo.ops, _name(entry).removeprefix("foo::").split(".")[0])
    with native(f"{where(entry)}: {_name(entry)}"):
        fast, boxed = binding(*tensors, **kwargs), _overload(entry)(*tensors, **kwargs)
    assert fast.device.type == "foo"
    assert torch.equal(fast.cpu(), boxed.cpu())


# opcheck's test_autograd_registration refuses devices other than CPU/CUDA/XPU
# (torch/testing/_internal/optests/autograd_registration.py: "NYI devices"); test_autograd_registration
# below makes its check for foo's key.
OPCHECK_UTILS = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")


@pytest.mark.parametrize("entry, sample, dtype", _params(OPCHECK_SAMPLES, with_dtype=False))
def test_opcheck(entry, sample, dtype):
    """torch.library.opcheck: schema, fake implementation (shape, dtype, strides) and AOT dispatch
    (torch.compile's tracing, forward and backward), with inputs that require grad when the entry
    declares derivatives."""
    tensors, kwargs = _args(entry, sample, dtype, "foo", requires_grad=bool(entry.derivatives))
    torch.library.opcheck(_overload(entry), tuple(tensors), kwargs, test_utils=OPCHECK_UTILS)


@pytest.mark.parametrize("entry", ENTRIES, ids=_name)
def test_autograd_registration(entry):
    """opcheck's autograd_registration check, for foo: an op with derivatives has its autograd at
    an autograd key (register_autograd: Autograd, which covers AutogradPrivateUse1), not in its
    backend kernel; an op without them has none, and its result never requires grad."""
    name = _overload(entry).name()
    registered = any(torch._C._dispatch_has_kernel_for_dispatch_key(name, k) for k in ("AutogradPrivateUse1", "Autograd"))
    assert registered == bool(entry.derivatives), f"{where(entry)}: {name}: autograd registered: {registered}"
    tensors, kwargs = _args(entry, "same", torch.float32, "foo", requires_grad=True)
    out = _overload(entry)(*tensors, **kwargs)
    assert out.requires_grad == bool(entry.derivatives)
    if entry.derivatives:
        assert type(out.grad_fn).__name__.startswith("GeneratedBackwardFor_foo_"), out.grad_fn


def _grad_params(cases):
    return [p for p in _params(cases, with_dtype=False) if p.values[0].derivatives]


@pytest.mark.parametrize("entry, sample, dtype", _grad_params(GRAD_SAMPLES))
def test_gradient(entry, sample, dtype):
    """The gradients of the entry's `derivatives:` on foo equal CPU autograd through the reference."""
    what = f"{where(entry)}: {_name(entry)} gradient {sample}"
    tensors, kwargs = _args(entry, sample, dtype, "foo", requires_grad=True)
    cpu = [t.detach().cpu().requires_grad_() for t in tensors]
    expected = _reference(entry, cpu, kwargs)
    grad_out = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1))
    expected_grads = torch.autograd.grad(expected, cpu, grad_out)
    with native(what):
        out = _overload(entry)(*tensors, **kwargs)
        grads = torch.autograd.grad(out, tensors, grad_out.to("foo"))
    names = [a.name for a in _overload(entry)._schema.arguments if isinstance(a.type, torch.TensorType)]
    for name, got, want in zip(names, grads, expected_grads):
        if got.shape != want.shape:
            fail(what, f"the gradient of '{name}' has shape {tuple(got.shape)}, the input {tuple(want.shape)}")
        assert_same(got, want, f"{what}, gradient of '{name}'")


@pytest.mark.parametrize("entry, sample, dtype", _grad_params(("same", "broadcast")))
def test_gradcheck(entry, sample, dtype):
    """torch.autograd.gradcheck of the derivatives on foo in float64 (small inputs)."""
    tensors, kwargs = _args(entry, sample, torch.float64, "foo", requires_grad=True)
    small = [t.detach()[(slice(0, 2),) * t.dim()].clone().requires_grad_() for t in tensors]
    assert torch.autograd.gradcheck(lambda *ts: _overload(entry)(*ts, **kwargs), small)


@pytest.mark.parametrize("entry", ENTRIES, ids=_name)
def test_unclaimed_dtype_raises_cleanly(entry):
    """A dtype the formula does not claim raises naming it, unless the iterator promotes it into a
    claimed one (integers in a *_float_op): then it must compute the reference's values."""
    claimed = {dtype_name(d) for d in _dtypes(entry)}
    for dtype in UNCLAIMED:
        if dtype_name(dtype) in claimed:
            continue
        what = f"{where(entry)}: {_name(entry)} {dtype_name(dtype)}"
        tensors, kwargs = _args(entry, "same", dtype, "foo")
        torch_foo.reset_fallback_report()
        try:
            out = _overload(entry)(*tensors, **kwargs)
        except (NotImplementedError, RuntimeError) as e:
            assert dtype_name(dtype) in str(e), f"{what}: the error does not name the dtype: {e}"
            assert _name(entry) in str(e), f"{what}: the error does not name the op: {e}"
        else:
            assert dtype_name(out.dtype) in claimed, f"{what}: computed in unclaimed {out.dtype}"
            expected = _reference(entry, [t.cpu().to(out.dtype) for t in tensors], kwargs)
            assert_same(out, expected, what)
        assert not torch_foo.fallback_report(), f"{what}: fell back to the CPU"


@pytest.mark.parametrize("entry", ENTRIES, ids=_name)
def test_compiles_in_one_graph_with_its_gradients(entry):
    """torch.compile(fullgraph=True, backend="aot_eager") traces the op (fake implementation) and,
    with derivatives, its backward: results and gradients equal eager mode's."""
    torch._dynamo.reset()
    op = _overload(entry)
    tensors, kwargs = _args(entry, "broadcast", torch.float32, "foo", requires_grad=bool(entry.derivatives))
    compiled = torch.compile(lambda *ts: op(*ts, **kwargs) * 2, backend="aot_eager", fullgraph=True)
    out, eager = compiled(*tensors), op(*tensors, **kwargs) * 2
    assert out.device.type == "foo"
    torch.testing.assert_close(out.cpu(), eager.cpu())
    if entry.derivatives:
        grad_out = torch.randn(out.shape, generator=torch.Generator().manual_seed(2)).to("foo")
        got = torch.autograd.grad(out, tensors, grad_out)
        want = torch.autograd.grad(eager, tensors, grad_out)
        for g, w in zip(got, want):
            torch.testing.assert_close(g.cpu(), w.cpu())
