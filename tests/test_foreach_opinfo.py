"""The manifest's _foreach_* entries under torch's own foreach OpInfos (ForeachFuncInfo,
common_methods_invocations' foreach_*_op_db): every sample of every overload the OpInfo makes
(scalar, list, scalar list, tensor; alpha; 3 and 40 tensors of assorted shapes), out of place and
in place, on foo's kernels with the fallback forbidden, against the CPU (16-bit: no farther from
float64 than the CPU; the CPU rounds alpha * b to 16 bits before adding, foo and CUDA compute in
float and round once). op_db holds no foreach
OpInfos, so the generated op tests cannot reach them; overloads without a foo kernel take ATen's
per-tensor loop (CompositeExplicitAutograd) on native ops, as on CUDA."""

from pathlib import Path

import pytest
import torch
from torch.testing._internal import common_methods_invocations as cmi
from torch.utils import _pytree as pytree

import torch_foo  # noqa: F401 - registers the device
from codegen.manifest import parse_manifest
from conftest import foo_kernels_only

_MANIFEST = Path(__file__).resolve().parent.parent / "yaml" / "ops.yaml"
_ENTRIES = parse_manifest(_MANIFEST.read_text(), str(_MANIFEST)).aten
# "_foreach_add_.Scalar" -> "_foreach_add": the OpInfo covers the op's overloads and both variants.
NAMES = sorted({e.op.split(".")[0].rstrip("_") for e in _ENTRIES if e.op.startswith("_foreach_")})
_DB = {o.name: o for db in ("foreach_unary_op_db", "foreach_binary_op_db", "foreach_pointwise_op_db",
                            "foreach_reduce_op_db", "foreach_other_op_db") for o in getattr(cmi, db, [])}
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def test_every_manifest_foreach_op_has_an_opinfo():
    assert NAMES, "no _foreach_ entries in the manifest"
    assert [n for n in NAMES if n not in _DB] == []


def _cases():
    for name in NAMES:
        op = _DB.get(name)
        if op is None:
            continue
        for dtype in DTYPES:
            if dtype not in op.supported_dtypes("cpu"):
                continue
            for variant in ("out_of_place", "inplace"):
                fn = op.method_variant if variant == "out_of_place" else op.inplace_variant
                if fn is not None:
                    yield pytest.param(name, dtype, variant, id=f"{name}-{str(dtype)[6:]}-{variant}")


def _to(device, value, dtype=None):
    return pytree.tree_map_only(torch.Tensor, lambda t: t.detach().clone().to(device, dtype or t.dtype), value)


def _error(results, reference):
    return max(((r.cpu().double() - f).abs().nan_to_num(0).max().item() for r, f in zip(results, reference)
                if r.numel()), default=0.0)


def _ulp(results, reference):
    """One unit in the last place of the results' dtype at the reference's largest magnitude."""
    big = max((f.abs().nan_to_num(0).max().item() for f in reference if f.numel()), default=0.0)
    return torch.finfo(results[0].dtype).eps * big if results else 0.0


@pytest.mark.parametrize("name,dtype,variant", list(_cases()))
def test_matches_cpu(name, dtype, variant):
    op = _DB[name]
    fn = op.method_variant if variant == "out_of_place" else op.inplace_variant
    samples = list(op.sample_inputs("cpu", dtype, num_input_tensors=[3, 40]))
    assert samples
    for i, s in enumerate(samples):
        what = f"{name} {dtype} {variant} sample {i}: args {[type(a).__name__ for a in s.args]}, kwargs {s.kwargs}"
        cpu_in, cpu_args = _to("cpu", s.input), _to("cpu", s.args)
        try:
            expected = fn(cpu_in, *cpu_args, **s.kwargs)
        except Exception as e:  # noqa: BLE001 - the CPU refuses it: foo must refuse it the same way
            with pytest.raises(type(e)):
                with foo_kernels_only():
                    fn(_to("foo", s.input), *_to("foo", s.args), **s.kwargs)
            continue
        foo_in, foo_args = _to("foo", s.input), _to("foo", s.args)
        with foo_kernels_only():
            actual = fn(foo_in, *foo_args, **s.kwargs)
        if variant == "inplace":
            expected, actual = cpu_in, foo_in  # the lists written in place
        assert len(actual) == len(expected), what
        for a, e in zip(actual, expected):
            assert a.device.type == "foo" and a.dtype == e.dtype and a.shape == e.shape, what
        if dtype in (torch.float16, torch.bfloat16):
            ref_in = _to("cpu", s.input, torch.float64)
            reference = fn(ref_in, *_to("cpu", s.args, torch.float64), **s.kwargs)
            reference = ref_in if variant == "inplace" else reference
            foo_error, cpu_error = _error(actual, reference), _error(expected, reference)
            assert foo_error <= cpu_error + _ulp(actual, reference), (what, foo_error, cpu_error)
        else:
            for a, e in zip(actual, expected):
                torch.testing.assert_close(a.cpu(), e, equal_nan=True, msg=lambda m: f"{what}: {m}")
