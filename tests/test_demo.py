"""`python -m torch_foo demo` trains on CPU and foo and agrees; bad commands exit 2."""

import re

from conftest import run_python


def test_demo_succeeds():
    r = run_python(args=["-m", "torch_foo", "demo"], timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "driver:" in out and "cpu loss" in out and "foo loss" in out
    steps = re.findall(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+\S+$", out, re.MULTILINE)
    assert [int(s[0]) for s in steps] == list(range(8))
    assert all(abs(float(c) - float(f)) <= 1e-4 for _, c, f in steps)
    assert float(steps[-1][1]) < float(steps[0][1])  # it trained
    assert "fallback" in out and "OK" in out


def test_unknown_command_exits_2():
    r = run_python(args=["-m", "torch_foo", "nope"])
    assert r.returncode == 2
    assert "usage" in r.stderr and "demo" in r.stderr
