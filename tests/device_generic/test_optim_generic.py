"""PyTorch's OptimizerInfo tests, instantiated for foo (modeled on test_optim.py's
TestOptimRenewed: test_forloop_goes_right_direction, test_foreach_matches_forloop and the
state_dict round trip), on the optimizers whose steps run natively on foo
(common.NATIVE_OPTIMIZERS), for every configuration optim_db lists for them."""

import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_optimizers import optims

from common import FooTestCase, native_optim_db, to_cpu

STEPS = 3
TOLERANCE = dict(rtol=1e-5, atol=1e-6)


def _configs(optim_info, device):
    """optim_db's configurations for the optimizer: (description, constructor kwargs)."""
    return [(c.desc, dict(c.kwargs)) for c in optim_info.optim_inputs_func(device=device)]


def _fresh(kwargs):
    """A copy, so a tensor hyperparameter (lr=torch.tensor(...)) is never shared between runs."""
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}


def _problem(device):
    """A small linear least-squares problem: [weight, bias] to optimise, and the input x."""
    torch.manual_seed(0)
    weight, bias, x = torch.randn(4, 3), torch.randn(4), torch.randn(3)
    return [weight.to(device).requires_grad_(), bias.to(device).requires_grad_()], x.to(device)


def _steps(opt, params, x, n):
    losses = []
    for _ in range(n):
        opt.zero_grad()
        loss = (params[0] @ x + params[1]).pow(2).sum()
        loss.backward()
        losses.append(loss.item())
        opt.step()
    return losses


def _train(optim_cls, kwargs, device, steps=STEPS):
    params, x = _problem(device)
    opt = optim_cls(params, **_fresh(kwargs))
    return params, opt, _steps(opt, params, x, steps)


class TestOptimRenewed(FooTestCase):
    @optims(native_optim_db, dtypes=[torch.float32])
    def test_forloop_goes_right_direction(self, device, dtype, optim_info):
        """Each configuration lowers the loss on foo, and its parameters equal the CPU's."""
        for desc, kwargs in _configs(optim_info, device):
            kwargs["foreach"] = False
            params, _, losses = _train(optim_info.optim_cls, kwargs, device)
            cpu_params, _, _ = _train(optim_info.optim_cls, kwargs, "cpu")
            if not kwargs.get("maximize", False):
                self.assertLess(losses[-1], losses[0], msg=desc)
            for p, q in zip(params, cpu_params):
                self.assertEqual(p.device.type, "foo")
                self.assertEqual(to_cpu(p), q.detach(), **TOLERANCE, msg=desc)

    @optims(native_optim_db, dtypes=[torch.float32])
    def test_foreach_matches_forloop(self, device, dtype, optim_info):
        """The multi-tensor (foreach) implementation, torch's default on foo, equals the loop."""
        for desc, kwargs in _configs(optim_info, device):
            loop, _, _ = _train(optim_info.optim_cls, {**kwargs, "foreach": False}, device)
            multi, _, _ = _train(optim_info.optim_cls, {**kwargs, "foreach": True}, device)
            for a, b in zip(loop, multi):
                self.assertEqual(to_cpu(a), to_cpu(b), **TOLERANCE, msg=desc)

    @optims(native_optim_db, dtypes=[torch.float32])
    def test_state_dict_round_trip(self, device, dtype, optim_info):
        """Optimizer state lives on foo; saved and loaded into a new optimizer over copies of the
        parameters, training goes on exactly as if it had never stopped."""
        for desc, kwargs in _configs(optim_info, device):
            straight, _, _ = _train(optim_info.optim_cls, kwargs, device, steps=2 * STEPS)
            params, opt, _ = _train(optim_info.optim_cls, kwargs, device)
            copies = [p.detach().clone().requires_grad_() for p in params]
            resumed = optim_info.optim_cls(copies, **_fresh(kwargs))
            resumed.load_state_dict(opt.state_dict())
            for state in resumed.state.values():
                for name, value in state.items():
                    if isinstance(value, torch.Tensor) and value.dim() > 0:
                        self.assertEqual(value.device.type, "foo", msg=f"{desc}: state {name}")
            _steps(resumed, copies, _problem(device)[1], STEPS)
            for a, b in zip(copies, straight):
                self.assertEqual(to_cpu(a), to_cpu(b), **TOLERANCE, msg=desc)


instantiate_device_type_tests(TestOptimRenewed, globals(), only_for=("foo",))
