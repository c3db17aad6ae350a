"""A training step runs on foo with zero CPU fallbacks, and matches the CPU.

Until every op a training step needs is native these tests fail on purpose: the failure
message lists the ops that fell back, most frequent first -- the to-do list for yaml/ops.yaml.
"""

import copy

import pytest
import torch

import torch_foo
from torch_foo import demo

STEPS = 3


def _todo(report):
    """The fallback report as a to-do list, most calls first."""
    lines = [f"  {n:6d}  {op}" for op, n in sorted(report.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "ops that fell back to the CPU (add them to yaml/ops.yaml):\n" + "\n".join(lines)


def test_demo_has_zero_fallbacks(capsys):
    status = demo.main()  # resets the fallback report before it trains
    report = torch_foo.fallback_report()
    out = capsys.readouterr().out
    if report:
        pytest.fail(f"the demo (exit status {status}) fell back to the CPU.\n{_todo(report)}")
    assert "every op ran natively" in out


def _train(model, inputs, targets):
    """A few AdamW steps on one batch; the loss of each step (tensors on the model's device)."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses


def test_mlp_adamw_step_native_and_matches_cpu():
    torch.manual_seed(0)
    cpu_model = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.ReLU(), torch.nn.Linear(24, 5))
    foo_model = copy.deepcopy(cpu_model).to("foo")
    inputs, targets = torch.randn(16, 12), torch.randint(0, 5, (16,))
    foo_inputs, foo_targets = inputs.to("foo"), targets.to("foo")

    cpu_losses = _train(cpu_model, inputs, targets)
    torch_foo.reset_fallback_report()
    foo_losses = _train(foo_model, foo_inputs, foo_targets)
    report = torch_foo.fallback_report()  # before any comparison copies the results back

    problems = [_todo(report)] if report else []
    try:
        torch.testing.assert_close([x.cpu() for x in foo_losses], cpu_losses, rtol=1e-5, atol=1e-5)
        for (name, p), q in zip(foo_model.named_parameters(), cpu_model.parameters()):
            assert p.device.type == "foo", f"{name} left the foo device"
            torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-5, atol=1e-5, msg=lambda m, n=name: f"{n}: {m}")
    except AssertionError as e:
        problems.append(f"foo differs from the CPU: {e}")
    if problems:
        pytest.fail("\n".join(problems))
