"""The demo behind ``python -m torch_foo demo``.

Trains one small MLP twice from the same weights on the same batch -- once on the
CPU, once on foo:0 -- and compares the loss series. Exit status 1 when they
differ by more than TOLERANCE, so the demo doubles as an end-to-end check.
"""

import copy
import os

import torch

import torch_foo

TOLERANCE = 1e-4
STEPS = 8


def _make_model():
    return torch.nn.Sequential(
        torch.nn.Linear(16, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 4),
    )


def _train(model, inputs, targets):
    """Plain SGD on one fixed batch; returns the loss of each step as Python floats."""
    device = next(model.parameters()).device
    inputs, targets = inputs.to(device), targets.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _print_devices():
    count = torch.foo.device_count()
    print(f"driver: {torch_foo.driver()}   devices: {count}")
    for i in range(count):
        print(f"  foo:{i}  {torch.foo.get_device_name(i)}")
    return count


def _print_fallback_report():
    report = sorted(torch_foo.fallback_report().items(), key=lambda kv: (-kv[1], kv[0]))
    if not report:
        print("fallback report: none -- every op ran natively on foo")
        return
    print("fallback report (ops run on the CPU through the fallback; candidates for yaml/ops.yaml):")
    for op, count in report:
        print(f"  {count:6d}  {op}")


def main():
    # Keep the user's policy if they chose one; otherwise silence the per-op
    # warnings, since the report at the end lists the same ops.
    if "TORCH_FOO_FALLBACK" not in os.environ:
        torch_foo.set_fallback_policy("silent")
        print("fallback policy: silent (TORCH_FOO_FALLBACK unset; the report below lists fallbacks)")
    else:
        print(f"fallback policy: {torch_foo.get_fallback_policy()} (from TORCH_FOO_FALLBACK)")

    if _print_devices() == 0:
        print("FAIL: no foo device available")
        return 1

    torch.manual_seed(0)
    cpu_model = _make_model()
    foo_model = copy.deepcopy(cpu_model).to("foo:0")
    inputs = torch.randn(64, 16)
    targets = torch.randint(0, 4, (64,))

    torch_foo.reset_fallback_report()
    cpu_losses = _train(cpu_model, inputs, targets)
    foo_losses = _train(foo_model, inputs, targets)

    print(f"{'step':>4}  {'cpu loss':>12}  {'foo loss':>12}  {'|diff|':>10}")
    for step, (c, f) in enumerate(zip(cpu_losses, foo_losses)):
        print(f"{step:>4}  {c:12.8f}  {f:12.8f}  {abs(c - f):10.3e}")
    max_diff = max(abs(c - f) for c, f in zip(cpu_losses, foo_losses))
    print(f"max |cpu - foo| loss difference: {max_diff:.3e} (tolerance {TOLERANCE:.0e})")
    _print_fallback_report()

    if not max_diff <= TOLERANCE:  # `not <=` so that NaN fails too
        print(f"FAIL: the foo losses differ from the CPU losses by {max_diff:.3e} > {TOLERANCE:.0e}")
        return 1
    print("OK: foo matches the CPU")
    return 0
