"""The torch.backends entry point: `import torch` alone makes "foo" usable."""

from importlib.metadata import entry_points

import pytest

from conftest import run_python


@pytest.fixture(autouse=True)
def _needs_entry_point():
    names = [ep.value for ep in entry_points(group="torch.backends") if ep.name == "torch_foo"]
    if names != ["torch_foo:_autoload"]:
        pytest.fail(
            "entry point missing: add to pyproject.toml "
            '[project.entry-points."torch.backends"] torch_foo = "torch_foo:_autoload" and reinstall'
        )


def test_import_torch_autoloads_foo():
    code = "import torch; x = torch.empty(2, device='foo'); print(x.device, x.dtype, hasattr(torch, 'foo'))"
    r = run_python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["foo:0", "torch.float32", "True"]


def test_import_torch_foo_first_has_no_circular_import():
    # torch_foo's `import torch` runs the entry point while torch_foo is half-imported.
    code = "import torch_foo, torch; print(torch.empty(1, device='foo:0').device, torch_foo.driver())"
    r = run_python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "foo:0"


def test_import_does_not_initialise():
    code = "import torch; import torch_foo; print(torch.foo.is_initialized())"
    r = run_python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_autoload_disabled():
    code = """
import sys, torch
assert "torch_foo" not in sys.modules
try:
    torch.empty(2, device="foo")
except RuntimeError as e:
    print("unknown:", "foo" in str(e))
import torch_foo
print(torch.empty(2, device="foo").device)
"""
    r = run_python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["unknown: True", "foo:0"]
