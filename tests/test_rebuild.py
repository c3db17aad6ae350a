"""The developer loop, end to end: add an op to a copy of the project's manifest, rerun the
documented build (pip install --no-build-isolation, reusing the build directory), and find the
op registered and working. Slow by nature (one full build of the copy, cuda target off, then
incremental rebuilds), so everything shares one copy and one build.

The first test is the promise of the manifest: a unary and a binary pointwise aten op are one
entry each and nothing else, and their generated op tests pass.

The copy's first build is the suite's longest step (minutes on the 2-core CI machine), so it
starts when the session does (`start_early`, called by conftest.py once tests are collected) and
runs niced beside the other tests; the fixture waits for it. The copy compiles with -O0: these
tests check what is regenerated, recompiled and registered, which optimisation does not change,
and -O0 compiles the sim's kernels 3-4x faster (reduce.cu: 34 s at -O3, 9 s at -O0). It is the
copy tests/test_sim_checked_build.py runs on first (tests/project_copy.py: one build serves both,
with the checked mode compiled in).
"""

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from project_copy import ProjectBuild, built_shared_copy, run_op_tests, shared_copy


DEG2RAD_KERNEL = """
#include <ATen/ATen.h>
#include "native/deg2rad_out.h"

namespace foo::native {
// self * (pi / 180), as the CPU computes it, through foo's mul; out arrives undefined from the
// functional overload.
at::Tensor& deg2rad_out(const at::Tensor& self, at::Tensor& out) {
  auto result = at::mul(self, 3.14159265358979323846 / 180.0);
  if (!out.defined()) out = result;
  else out.resize_(result.sizes()).copy_(result);
  return out;
}
}  // namespace foo::native
"""

TWICE_KERNEL = """
#include <ATen/ATen.h>
#include "native/twice.h"

namespace foo::native {
at::Tensor twice(const at::Tensor& x) { return at::add(x, x); }
}  // namespace foo::native
"""


def _build(src: Path, site_dir: Path) -> list[str]:
    """The documented build of the copy, in the foreground; returns compiled files."""
    return ProjectBuild(src, site_dir).wait()


def _compiles(src: Path, compiled: list[str], source: str) -> bool:
    """Whether `source` was compiled: by itself, or inside a compiled unity unit
    (cmake/FooUnity.cmake) whose text includes it."""
    for unit in compiled:
        if source in unit:
            return True
        if "/Unity/" in unit:
            for text in (src / "build").glob("*/" + unit.removesuffix(".o")):
                if source in text.read_text():
                    return True
    return False


def _run_python(site_dir: Path, code: str) -> str:
    """Runs `code` against the copy's install only: -S keeps this venv's editable torch_foo
    (and its import hook) out; autoload is off so no other torch_foo is pulled in."""
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0", TORCH_FOO_DRIVER="sim",
               PYTHONPATH=os.pathsep.join([str(site_dir), sysconfig.get_paths()["purelib"]]))
    result = subprocess.run([sys.executable, "-S", "-c", textwrap.dedent(code)], env=env,
                            capture_output=True, text=True, timeout=300, cwd=site_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def start_early(config, items=()) -> None:
    """Starts the copy's first build (conftest.py calls this when the session's tests are
    collected); tests/test_sim_checked_build.py shares the copy and runs on it first."""
    shared_copy(config)


@pytest.fixture(scope="module")
def project(request):
    src, site_dir, compiled = built_shared_copy(request.config)
    assert any("RegisterFoo" in f for f in compiled), compiled
    return src, site_dir


def _tree(src: Path) -> dict[str, str]:
    """Relative path -> content of the hand-written files (not generated/, not the stub, not the
    bytecode the copy's earlier test runs left)."""
    out = {}
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src).as_posix()
        if (path.is_file() and not rel.startswith(("generated/", "build/")) and rel != "torch_foo/ops.pyi"
                and "__pycache__" not in rel):
            out[rel] = path.read_text(errors="replace")
    return out


POINTWISE_ENTRIES = """\
  - op: expm1.out
    kernel: expm1_out
    pointwise: {dtypes: floating, formula: "math::expm1(self)"}
  - op: atan2.out
    kernel: atan2_out
    pointwise: {dtypes: floating, formula: "math::atan2(self, other)"}
"""


def test_pointwise_ops_are_one_manifest_entry_each(project):
    src, site_dir = project
    manifest = src / "yaml" / "ops.yaml"
    text = manifest.read_text()
    # Not declared yet (formulas of other ops may call math::expm1/atan2).
    assert "op: expm1" not in text and "op: atan2" not in text
    before = _tree(src)
    manifest.write_text(text.replace("\naten:\n", "\naten:\n" + POINTWISE_ENTRIES, 1))

    compiled = _build(src, site_dir)

    # Nothing written by hand but the manifest; the build generated and compiled the rest.
    changed = sorted(p for p, t in _tree(src).items() if before.get(p) != t)
    assert changed == ["yaml/ops.yaml"], changed
    for name in ("expm1_out", "atan2_out"):
        assert _compiles(src, compiled, f"pointwise/{name}.cpp"), compiled
        assert _compiles(src, compiled, f"pointwise_{name}_cu"), compiled
    # Unity units are chosen by a hash of each file's name: two new ops recompile at most two
    # units of each target, not every unit after them.
    assert len([f for f in compiled if "/Unity/" in f]) <= 4, compiled
    # No hand-written source depends on them: none recompiles.
    assert not [f for f in compiled if "/csrc/" in f], compiled
    _run_python(site_dir, """
        import torch, torch_foo
        for op in ("aten::expm1", "aten::expm1.out", "aten::expm1_", "aten::atan2", "aten::atan2.out", "aten::atan2_"):
            assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "PrivateUse1"), op
    """)
    out = run_op_tests(src, site_dir, "expm1 or atan2")
    assert " passed" in out and "failed" not in out, out[-3000:]


def _append(path: Path, text: str):
    path.write_text(path.read_text() + text)


def test_added_aten_op_is_registered_and_only_changed_files_recompile(project):
    src, site_dir = project
    manifest = src / "yaml" / "ops.yaml"
    text = manifest.read_text()
    # An op no kernel family claims (neg, the earlier choice, is native now).
    assert "deg2rad" not in text
    manifest.write_text(text.replace("\naten:\n", "\naten:\n  - op: deg2rad.out\n    kernel: deg2rad_out\n", 1))
    (src / "csrc" / "aten" / "ops" / "test_added_deg2rad.cpp").write_text(DEG2RAD_KERNEL)

    compiled = _build(src, site_dir)

    assert any("test_added_deg2rad" in f for f in compiled), compiled
    assert any("RegisterFoo" in f for f in compiled), compiled
    # Nothing that does not see the manifest recompiles: the runtime and drivers stay built.
    untouched = [f for f in compiled if "/runtime/" in f or "/sim/" in f or "kernels" in f]
    assert untouched == [], untouched
    out = _run_python(site_dir, """
        import torch, torch_foo
        assert torch_foo.__file__.startswith(%r), torch_foo.__file__
        for op in ("aten::deg2rad", "aten::deg2rad.out", "aten::deg2rad_"):
            assert torch._C._dispatch_has_kernel_for_dispatch_key(op, "PrivateUse1"), op
        torch_foo.set_fallback_policy("error")
        x = torch.tensor([1.5, -2.0, 0.0, 180.0])
        y = torch.deg2rad(x.to("foo"))
        assert y.device.type == "foo" and y.dtype == torch.float32
        assert torch.equal(y.cpu(), torch.deg2rad(x))
        z = x.to("foo"); z.deg2rad_()
        assert torch.equal(z.cpu(), torch.deg2rad(x))
        print("deg2rad ok")
    """ % str(site_dir))
    assert "deg2rad ok" in out


def test_added_custom_op_gets_a_binding(project):
    src, site_dir = project
    _append(src / "yaml" / "ops.yaml", '  - schema: "foo::twice(Tensor x) -> Tensor"\n    kernel: twice\n')
    (src / "csrc" / "aten" / "ops" / "test_added_twice.cpp").write_text(TWICE_KERNEL)

    compiled = _build(src, site_dir)

    assert any("test_added_twice" in f for f in compiled), compiled
    assert any("FooPythonOps" in f for f in compiled), compiled
    out = _run_python(site_dir, """
        import torch, torch_foo
        x = torch.arange(5, dtype=torch.float32)
        y = torch_foo.ops.twice(x.to("foo"))
        assert y.device.type == "foo" and y.dtype == torch.float32
        assert torch.equal(y.cpu(), 2 * x)
        assert torch.equal(torch.ops.foo.twice(x.to("foo")).cpu(), 2 * x)
        print("twice ok")
    """)
    assert "twice ok" in out
