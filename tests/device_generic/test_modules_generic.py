"""PyTorch's ModuleInfo tests, instantiated for foo (modeled on test_modules.py: TestModule's
test_forward, test_factory_kwargs, test_non_contiguous_tensors and test_cpu_gpu_parity, here
parity with the CPU), on the modules that run natively on foo (common.NATIVE_MODULES)."""

import copy

import torch
from torch.nn.parameter import is_lazy
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_modules import TrainEvalMode, modules
from torch.testing._internal.common_utils import freeze_rng_state
from torch.utils import _pytree as pytree

from common import FooTestCase, native_module_db, to_cpu

TOLERANCE = dict(rtol=1e-4, atol=1e-5)  # float32 sums may be ordered differently on foo
INPUTS = 3  # per module: the first ModuleInputs (constructor and forward arguments)


def _inputs(module_info, device, dtype, requires_grad, training):
    inputs = module_info.module_inputs_func(module_info, device=device, dtype=dtype,
                                            requires_grad=requires_grad, training=training)
    return [i for i in inputs if i.forward_input is not None][:INPUTS]


def _tensors(x):
    return [t for t in pytree.tree_leaves(x) if isinstance(t, torch.Tensor)]


def _noncontiguous(t):
    """The same values in memory twice as wide: every dim strided."""
    if not isinstance(t, torch.Tensor) or t.dim() == 0:
        return t
    wide = torch.empty(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype, device=t.device)[..., ::2]
    with torch.no_grad():
        wide.copy_(t)
    return wide.requires_grad_(t.requires_grad)


class TestModule(FooTestCase):
    @modules(native_module_db, allowed_dtypes=(torch.float32,))
    def test_forward(self, device, dtype, module_info, training):
        """The module runs on foo, its outputs stay there, and match its reference if it has one."""
        for module_input in _inputs(module_info, device, dtype, False, training):
            with freeze_rng_state():
                args, kwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
                m = module_info.module_cls(*args, **kwargs).to(device).to(dtype)
                m.train(training)
                args, kwargs = module_input.forward_input.args, module_input.forward_input.kwargs
                outputs = m(*args, **kwargs)
                for t in _tensors(outputs):
                    self.assertEqual(t.device.type, "foo")
                if module_input.reference_fn is not None:  # computed on the CPU: it may use any op
                    cpu_args, cpu_kwargs = to_cpu((args, kwargs))
                    expected = module_input.reference_fn(copy.deepcopy(m).cpu(), *cpu_args, **cpu_kwargs)
                    self.assertEqual(to_cpu(outputs), expected)

    @modules(native_module_db, allowed_dtypes=(torch.float32,), train_eval_mode=TrainEvalMode.train_only)
    def test_factory_kwargs(self, device, dtype, module_info, training):
        """device=/dtype= at construction put every parameter and buffer on foo."""
        for module_input in _inputs(module_info, device, dtype, False, training):
            args, kwargs = module_input.constructor_input.args, dict(module_input.constructor_input.kwargs)
            try:
                m = module_info.module_cls(*args, **kwargs, device=device, dtype=dtype)
            except TypeError:  # the module takes no factory kwargs (it creates no tensors)
                continue
            for name, t in [*m.named_parameters(), *m.named_buffers()]:
                self.assertEqual(str(t.device), device, name)
                if t.dtype.is_floating_point:
                    self.assertEqual(t.dtype, dtype, name)

    @modules(native_module_db, allowed_dtypes=(torch.float32,))
    def test_cpu_parity(self, device, dtype, module_info, training):
        """Forward outputs, input gradients and parameter gradients equal the CPU's for the same
        weights and inputs (test_cpu_gpu_parity, with foo in the GPU's place)."""
        for module_input in _inputs(module_info, device, dtype, True, training):
            args, kwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
            with freeze_rng_state():
                m_foo = module_info.module_cls(*args, **kwargs).to(device).to(dtype)
            m_foo.train(training)
            if any(is_lazy(p) for p in m_foo.parameters()):  # Lazy*: materialise before copying
                with torch.no_grad():
                    m_foo(*module_input.forward_input.args, **module_input.forward_input.kwargs)
            m_cpu = copy.deepcopy(m_foo).to("cpu")

            # Leaf copies on both sides: some module_inputs_funcs make inputs by ops on the device
            # (KLDivLoss's log, GaussianNLLLoss's abs), whose .grad autograd would not keep.
            f_args, f_kwargs = pytree.tree_map(
                lambda t: t.detach().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t,
                (module_input.forward_input.args, module_input.forward_input.kwargs),
            )
            cpu_args, cpu_kwargs = pytree.tree_map(
                lambda t: t.detach().cpu().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t,
                (f_args, f_kwargs),
            )
            out_foo, out_cpu = m_foo(*f_args, **f_kwargs), m_cpu(*cpu_args, **cpu_kwargs)
            self.assertEqual(to_cpu(out_foo), out_cpu, **TOLERANCE)

            grads_foo = [t for t in _tensors(out_foo) if t.requires_grad]
            grads_cpu = [t for t in _tensors(out_cpu) if t.requires_grad]
            if not grads_foo:
                continue
            seeds = [torch.randn_like(t, device="cpu") for t in grads_cpu]
            torch.autograd.backward(grads_cpu, seeds)
            torch.autograd.backward(grads_foo, [s.to(device) for s in seeds])
            leaves_foo = [t for t in _tensors((f_args, f_kwargs)) if t.requires_grad]
            leaves_cpu = [t for t in _tensors((cpu_args, cpu_kwargs)) if t.requires_grad]
            for a, b in zip(leaves_foo, leaves_cpu):
                self.assertEqual(to_cpu(a.grad), b.grad, **TOLERANCE)
            for (name, a), b in zip(m_foo.named_parameters(), m_cpu.parameters()):
                self.assertEqual(to_cpu(a.grad), b.grad, **TOLERANCE, msg=name)

    @modules(native_module_db, allowed_dtypes=(torch.float32,), train_eval_mode=TrainEvalMode.train_only)
    def test_non_contiguous_tensors(self, device, dtype, module_info, training):
        """Strided (non-contiguous) inputs give the same outputs as contiguous ones."""
        for module_input in _inputs(module_info, device, dtype, False, training):
            args, kwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
            with freeze_rng_state():
                m = module_info.module_cls(*args, **kwargs).to(device).to(dtype)
            f_args, f_kwargs = module_input.forward_input.args, module_input.forward_input.kwargs
            nc_args, nc_kwargs = pytree.tree_map(_noncontiguous, (f_args, f_kwargs))
            self.assertEqual(to_cpu(m(*nc_args, **nc_kwargs)), to_cpu(m(*f_args, **f_kwargs)), **TOLERANCE)


instantiate_device_type_tests(TestModule, globals(), only_for=("foo",))
