"""The CPU fallback: correct values, counting, policies, and what must never fall back."""

import warnings

import pytest
import torch

import torch_foo
from conftest import assert_foo_equal, fallback_count, fallback_op, run_python


def _input(device="foo:0"):
    cpu = torch.linspace(-2, 2, 12, dtype=torch.float32).reshape(3, 4)
    return cpu, cpu.to(device)


def test_fallback_op_matches_cpu_and_is_counted():
    name, fn = fallback_op()
    cpu, x = _input()
    torch_foo.reset_fallback_report()
    out = fn(x)
    assert_foo_equal(out, fn(cpu))
    fn(x)
    assert fallback_count(name) == 2, torch_foo.fallback_report()


def test_fallback_keeps_the_device(two_devices):
    name, fn = fallback_op()
    cpu, x = _input("foo:1")
    assert_foo_equal(fn(x), fn(cpu), device="foo:1")
    assert_foo_equal(fn(x.t()), fn(cpu.t()), device="foo:1")  # strided input


def test_report_is_a_copy_and_resets():
    name, fn = fallback_op()
    _, x = _input()
    fn(x)
    report = torch_foo.fallback_report()
    assert isinstance(report, dict) and report
    assert all(isinstance(k, str) and isinstance(v, int) and v > 0 for k, v in report.items())
    report.clear()
    assert torch_foo.fallback_report()
    torch_foo.reset_fallback_report()
    assert torch_foo.fallback_report() == {}


def test_policy_error_raises_naming_the_op():
    name, fn = fallback_op()
    _, x = _input()
    torch_foo.set_fallback_policy("error")
    assert torch_foo.get_fallback_policy() == "error"
    with pytest.raises(RuntimeError, match=name):
        fn(x)


def test_policy_silent_does_not_warn():
    name, fn = fallback_op()
    _, x = _input()
    torch_foo.set_fallback_policy("silent")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(x)
    assert [str(w.message) for w in caught if name in str(w.message)] == []


def test_policy_warn_warns_once_per_op():
    # In a fresh process: the once-per-op memory is process-wide, and other
    # tests here already ran the op. The policy comes from the environment.
    name, _ = fallback_op()
    call = f"torch.{name}(x, x)" if name in ("hypot", "atan2") else f"torch.{name}(x)"
    code = f"""
import warnings, torch, torch_foo
print(torch_foo.get_fallback_policy())
x = torch.linspace(-2, 2, 12).to("foo")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    {call}; {call}; {call}
print(sum(issubclass(w.category, UserWarning) and "{name}" in str(w.message) for w in caught))
"""
    r = run_python(code, env={"TORCH_FOO_FALLBACK": "warn"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["warn", "1"], r.stdout + r.stderr


def test_bad_policy_rejected():
    with pytest.raises(ValueError):
        torch_foo.set_fallback_policy("loud")
    assert torch_foo.get_fallback_policy() == "silent"


def test_views_and_factories_never_fall_back():
    torch_foo.reset_fallback_report()
    cpu = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x = cpu.to("foo")
    views = {
        "view": (x.view(-1), cpu.view(-1)),
        "t": (x.t(), cpu.t()),
        "transpose": (x.transpose(0, 1), cpu.transpose(0, 1)),
        "slice": (x[::2], cpu[::2]),
        "select": (x[1], cpu[1]),
        "as_strided": (x.as_strided((2, 2), (1, 6), 3), cpu.as_strided((2, 2), (1, 6), 3)),
        "reshape": (x.reshape(6, 4), cpu.reshape(6, 4)),
        "expand": (x[:1].expand(3, 6), cpu[:1].expand(3, 6)),
        "permute": (x.unsqueeze(2).permute(2, 1, 0), cpu.unsqueeze(2).permute(2, 1, 0)),
    }
    e = torch.empty(3, 5, device="foo", dtype=torch.float16)
    s = torch.empty_strided((3, 5), (1, 3), device="foo")
    assert e.shape == (3, 5) and e.dtype == torch.float16 and e.device == torch.device("foo:0")
    assert s.stride() == (1, 3) and s.dtype == torch.float32 and s.device == torch.device("foo:0")
    assert torch_foo.fallback_report() == {}  # checked before .cpu(): only views ran
    for name, (v, expected) in views.items():
        assert v._is_view(), name
        assert_foo_equal(v, expected)
    assert torch_foo.fallback_report() == {}


def test_random_ops_never_fall_back():
    torch_foo.reset_fallback_report()
    try:
        torch.manual_seed(0)
        a = torch.randn(3, device="foo")
    except RuntimeError:
        pass  # not native: the fallback must refuse it rather than run it on the CPU
    else:
        assert a.device == torch.device("foo:0") and a.dtype == torch.float32 and a.shape == (3,)
        torch.manual_seed(0)
        b = torch.randn(3, device="foo")
        assert torch.equal(a.cpu(), b.cpu())  # seeded through torch.foo.manual_seed_all
        assert torch.isfinite(a.cpu()).all()
    assert torch_foo.fallback_report() == {}
