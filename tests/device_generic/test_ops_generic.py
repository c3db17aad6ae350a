"""PyTorch's OpInfo tests, instantiated for foo, on the manifest's ops (modeled on test_ops.py:
TestCommon.test_errors, test_out's wrong-device and unsafe-dtype cases, and TestFakeTensor's
fake-versus-real comparison). tests/ops/ already compares values, layouts, out=, in-place and
gradients with the CPU; these check what it does not: error behaviour, out= refusals, and that
each kernel's outputs have exactly the metadata (shape, dtype, strides) its meta function
predicts, which torch.compile relies on."""

import itertools

import torch
from torch._prims_common import compare_tensor_meta
from torch._subclasses.fake_tensor import DynamicOutputShapeException, FakeTensorMode
from torch.testing._internal.common_device_type import OpDTypes, instantiate_device_type_tests, ops
from torch.utils import _pytree as pytree

from common import FooTestCase, has_foo_kernel, manifest_skip, native_opinfos
from optest import on

NATIVE_OPS = native_opinfos()


def xfail_ops(test_class, test_name, op_variants):
    """Expected failures of (op, variant) pairs for one OpInfo test. torch 2.12+ has skipOps and
    xfail in common_device_type; torch 2.11 has them in common_methods_invocations, keyed by name."""
    try:
        from torch.testing._internal.common_device_type import skipOps, xfail

        return skipOps([xfail(op, variant) for op, variant in op_variants])
    except ImportError:
        from torch.testing._internal.common_methods_invocations import skipOps, xfail

        return skipOps(test_class, test_name, [xfail(op, variant) for op, variant in op_variants])
SAMPLES = 4  # per op: the first OpInfo samples (they include 0-d, empty and broadcast inputs)


def _first_samples(op, device, dtype, n=SAMPLES):
    """Made on the CPU and copied (making inputs on foo would need random ops foo may lack)."""
    return [on(device, s) for s in itertools.islice(op.sample_inputs_func(op, "cpu", dtype, False), n)]


def _out_samples(op, device, dtype, n):
    """Samples of an op's out= variant: nonzero(as_tuple=True) has none (torch rejects a tuple
    out= with a TypeError before any device check)."""
    return [s for s in _first_samples(op, device, dtype, n) if not s.kwargs.get("as_tuple")]


def _tensors(x):
    return [t for t in pytree.tree_leaves(x) if isinstance(t, torch.Tensor)]


class TestCommon(FooTestCase):
    @ops([o for o in NATIVE_OPS if o.error_inputs_func is not None], dtypes=OpDTypes.none)
    def test_errors(self, device, op):
        """Invalid inputs raise the error (type and message) PyTorch specifies for every device."""
        try:
            error_inputs = list(op.error_inputs(device))
        except NotImplementedError as e:
            if "random op" in str(e) and not has_foo_kernel("aten::random_.from"):
                self.skipTest("making these inputs on foo needs random_ (not native on foo yet)")
            raise
        for ei in error_inputs:
            si = ei.sample_input
            with self.assertRaisesRegex(ei.error_type, ei.error_regex):
                op(si.input, *si.args, **si.kwargs)

    @ops([o for o in NATIVE_OPS if o.supports_out], dtypes=OpDTypes.any_one)
    def test_out_on_wrong_device(self, device, dtype, op):
        """out= on the CPU for foo inputs is refused, not silently written (test_out's case 4)."""
        if manifest_skip(op, dtype):
            self.skipTest(manifest_skip(op, dtype))
        for sample in _out_samples(op, device, dtype, 2):
            expected = op(sample.input, *sample.args, **sample.kwargs)
            out = pytree.tree_map(lambda t: torch.empty_like(t, device="cpu") if isinstance(t, torch.Tensor) else t, expected)
            with self.assertRaises(RuntimeError):
                op(sample.input, *sample.args, **sample.kwargs, out=out)

    @ops([o for o in NATIVE_OPS if o.supports_out], allowed_dtypes=(torch.float32,))
    def test_out_unsafe_dtype(self, device, dtype, op):
        """A float result in an integer out= (test_out's case 5) is refused exactly when the CPU
        refuses it, with the CPU's exception type (cat: TypeError; cumsum accepts: out's dtype is
        its compute dtype)."""
        if manifest_skip(op, dtype):
            self.skipTest(manifest_skip(op, dtype))
        for cpu_sample in _out_samples(op, "cpu", dtype, 2):
            sample = on(device, cpu_sample)
            expected = op(sample.input, *sample.args, **sample.kwargs)
            results = _tensors(expected)
            if not results or any(torch.can_cast(t.dtype, torch.int64) for t in results):
                continue

            def int64_out(where):
                return pytree.tree_map(
                    lambda t: torch.empty_like(t, dtype=torch.int64, device=where) if isinstance(t, torch.Tensor) else t,
                    expected,
                )

            try:
                op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs, out=int64_out("cpu"))
                cpu_error = None
            except (RuntimeError, TypeError) as e:
                cpu_error = type(e)
            if cpu_error is None:
                op(sample.input, *sample.args, **sample.kwargs, out=int64_out(device))
            else:
                with self.assertRaises(cpu_error):
                    op(sample.input, *sample.args, **sample.kwargs, out=int64_out(device))


class TestFakeTensor(FooTestCase):
    @ops(NATIVE_OPS, dtypes=OpDTypes.any_one)
    # The only dtype of this variant is complex; foo computes no complex dtype and raises
    # NotImplementedError naming the op and dtype (docs/torch-foo-vs-cuda.md §11).
    @xfail_ops("TestFakeTensor", "test_fake_matches_real", [("nn.functional.silu", "complex")])
    def test_fake_matches_real(self, device, dtype, op):
        """Under FakeTensorMode (how torch.compile traces) each op predicts the device, shape,
        dtype and strides that foo's kernel really produces."""
        if manifest_skip(op, dtype):
            self.skipTest(manifest_skip(op, dtype))
        for sample in _first_samples(op, device, dtype):
            real = op(sample.input, *sample.args, **sample.kwargs)
            with FakeTensorMode() as mode:
                fake_sample = pytree.tree_map(
                    lambda t: mode.from_tensor(t) if isinstance(t, torch.Tensor) else t,
                    (sample.input, sample.args, sample.kwargs),
                )
                try:
                    fake = op(fake_sample[0], *fake_sample[1], **fake_sample[2])
                except DynamicOutputShapeException:  # nonzero, argwhere, masked_select
                    self.skipTest("its output shape depends on the data; FakeTensorMode refuses it on every device")
            real_t, fake_t = _tensors(real), _tensors(fake)
            self.assertEqual(len(real_t), len(fake_t))
            for r, f in zip(real_t, fake_t):
                self.assertEqual(f.device, r.device)
                compare_tensor_meta(r, f, check_strides=True)


instantiate_device_type_tests(TestCommon, globals(), only_for=("foo",))
instantiate_device_type_tests(TestFakeTensor, globals(), only_for=("foo",))
