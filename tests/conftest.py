"""Shared setup and helpers for the torch_foo tests.

The driver is chosen once per process, on first device use, from the
environment, so the defaults below are set at conftest import, before any test
(or torch_foo itself) can touch a device. A variable already set by the user
wins: `TORCH_FOO_DRIVER=cuda pytest` runs the same tests on a GPU.

tests/codegen/ sits under this conftest but must run before the extension is
built, so nothing here imports torch_foo at import time or touches a device for
those tests.
"""

import contextlib
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TORCH_FOO_DRIVER", "sim")
# Subprocesses inherit this; in this process the autouse fixture below forces it.
os.environ.setdefault("TORCH_FOO_FALLBACK", "silent")

TESTS = Path(__file__).resolve().parent
_NO_DEVICE_DIRS = (TESTS / "codegen",)

# Pointwise ops with CPU kernels, candidates for "an op not in the manifest".
_FALLBACK_CANDIDATES = ("sin", "cos", "hypot", "atan2", "erf", "expm1", "log1p", "lgamma", "digamma")


def torch_minor() -> str:
    """The installed torch's major.minor ("2.13"), read without importing it (tests/codegen/ runs
    before the build, and importing torch would autoload torch_foo)."""
    from importlib.metadata import version

    return ".".join(version("torch").split(".")[:2])


def another_torch_minor() -> str:
    """A supported torch (README, "Which torch") other than the installed one, for tests that fake
    what another torch generated: 2.11, or 2.13 where 2.11 is installed."""
    return "2.13" if torch_minor() == "2.11" else "2.11"


def needs_kineto_device_kernels():
    """A skip mark for tests that find foo's kernels in a Kineto torch.profiler trace: they are
    there only where torch_foo was built against a torch with the PrivateUse1 Kineto registry
    (asked of the build, which found torch's header or not: csrc/runtime/profiler.h)."""
    import torch_foo

    return pytest.mark.skipif(
        not torch_foo._C._profiler_traces_device_kernels(),
        reason="this torch has no PrivateUse1 Kineto profiler registry (torch/csrc/profiler/standalone/"
        "privateuse1_profiler.h: torch 2.11 lacks it, 2.13 has it), so foo's device kernels cannot appear "
        "in torch.profiler's Kineto traces; the legacy use_device='foo' path still times foo's ops",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes minutes on the 2-core CI machine (still runs in CI)")
    # Measured coverage: this process and every torch_foo process the tests start count the calls
    # of each manifest kernel (csrc/aten/core/call_counts.h); pytest_sessionfinish checks the sums.
    import tempfile

    config._foo_call_counts = tempfile.mkdtemp(prefix="foo-call-counts-")
    os.environ["TORCH_FOO_CALL_COUNTS_DIR"] = config._foo_call_counts


def _whole_suite(session):
    """Whether this run is the whole suite: every test file, nothing deselected, nothing failed."""
    opt = session.config.option
    tests_dir = Path(__file__).resolve().parent
    args = [Path(a.split("::")[0]).resolve() for a in session.config.args]
    return (not opt.keyword and not opt.markexpr and not getattr(opt, "deselect", None) and not getattr(opt, "lf", False)
            and not opt.collectonly and session.testsfailed == 0 and session.testscollected > 0
            and all(a in (tests_dir, tests_dir.parent) for a in args))


def pytest_sessionfinish(session, exitstatus):
    """The suite reaches every kernel of the manifest (issue 26's measured coverage): summed over
    this process and the torch_foo processes the tests started, each kernel was called at least
    once. Checked on whole-suite runs only (a selection reaches what it selects)."""
    import json
    import shutil

    directory = getattr(session.config, "_foo_call_counts", None)
    if directory is None or not _whole_suite(session) or exitstatus != 0:
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
        return
    import torch_foo

    calls = dict(torch_foo._C._call_counts())
    for name in os.listdir(directory):
        with open(os.path.join(directory, name)) as f:
            for kernel, n in json.load(f).items():
                calls[kernel] = calls.get(kernel, 0) + n
    shutil.rmtree(directory, ignore_errors=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen.manifest import parse_manifest

    manifest_path = Path(__file__).resolve().parent.parent / "yaml" / "ops.yaml"
    manifest = parse_manifest(manifest_path.read_text(), str(manifest_path))
    entries = list(manifest.aten) + list(manifest.custom)
    missed = sorted({(e.kernel, e.line) for e in entries if not calls.get(e.kernel)}, key=lambda k: k[1])
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reporter.write("\n")  # after the progress line, which has no newline yet
    if missed:
        lines = [f"  {kernel} (yaml/ops.yaml:{line})" for kernel, line in missed]
        reporter.write_line(f"coverage: {len(missed)} manifest kernels were never called by the suite:", red=True)
        for line in lines:
            reporter.write_line(line, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        reporter.write_line(f"coverage: every manifest kernel was called ({len({e.kernel for e in entries})} kernels, "
                            f"{sum(calls.values())} calls)")


def niced(cmd, nice):
    """`cmd` run at niceness `nice` (0: as is), for a build started beside the tests. nice(1), not
    preexec_fn: that is unsafe in a process with threads (the sim's, autograd's)."""
    import shutil

    return (["nice", "-n", str(nice)] if nice and shutil.which("nice") else []) + list(cmd)


def pytest_collection_modifyitems(session, config, items):
    """A module that must run before another one (`RUNS_BEFORE = "test_x.py"`: both use a resource
    the other edits, tests/project_copy.py's shared copy) moves its tests right before that
    module's first test; everything else keeps pytest's order."""
    def file_of(item):
        return Path(str(item.fspath)).name

    for module_file in {file_of(i) for i in items if getattr(getattr(i, "module", None), "RUNS_BEFORE", None)}:
        moving = [i for i in items if file_of(i) == module_file]
        target = moving[0].module.RUNS_BEFORE
        rest = [i for i in items if file_of(i) != module_file]
        at = next((n for n, i in enumerate(rest) if file_of(i) == target), None)
        if at is not None:
            items[:] = rest[:at] + moving + rest[at:]


def pytest_collection_finish(session):
    """A test module with a slow setup independent of the other tests (a build of a copy of the
    project, of its examples) defines `start_early(config, items)`; it starts here, once, when the
    session's tests are known (items: the module's), and runs while the tests before it do."""
    if session.config.option.collectonly:
        return
    by_module = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "start_early"):
            by_module.setdefault(module, []).append(item)
    for module, items in by_module.items():
        module.start_early(session.config, items)


@pytest.fixture(autouse=True)
def _isolate(request):
    """Each device test starts on foo:0 with the silent policy; policy tests set their own."""
    if any(d in Path(request.path).resolve().parents for d in _NO_DEVICE_DIRS):
        yield
        return
    import torch
    import torch_foo

    torch_foo.set_fallback_policy("silent")
    torch.foo.set_device(0)
    yield
    torch_foo.set_fallback_policy("silent")
    torch.foo.set_device(0)


@contextlib.contextmanager
def foo_kernels_only():
    """What runs inside runs on foo's own kernels: a CPU fallback raises at once (policy "error",
    naming the op), and the fallback report, reset on entry, is still empty on exit (nothing fell
    back where an exception was caught). The one way the tests say "no CPU fallback"."""
    import torch_foo

    torch_foo.reset_fallback_report()
    torch_foo.set_fallback_policy("error")
    try:
        yield
    finally:
        torch_foo.set_fallback_policy("silent")
    assert torch_foo.fallback_report() == {}, f"fell back to the CPU: {torch_foo.fallback_report()}"


@contextlib.contextmanager
def cuda_paths():
    """Inside, the sim device launches exactly the kernels cuda launches: no sim-only fast path
    (sim/fast_paths.h). How a test runs cuda's kernels on sim."""
    import torch_foo

    before = torch_foo.sim_only_paths()
    torch_foo.set_sim_only_paths(False)
    try:
        yield
    finally:
        torch_foo.set_sim_only_paths(before)


@pytest.fixture
def no_fallback():
    """The whole test runs on foo's own kernels (foo_kernels_only)."""
    with foo_kernels_only():
        yield


@pytest.fixture
def two_devices():
    """Skip a test that needs foo:0 and foo:1 (e.g. on a one-GPU cuda run)."""
    import torch

    if torch.foo.device_count() < 2:
        pytest.skip("needs 2 foo devices")


def assert_foo_equal(actual, expected, device="foo:0"):
    """`actual` lives on `device` and holds exactly `expected` (a CPU tensor): dtype, shape, values."""
    import torch

    assert actual.device == torch.device(device)
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


def base_name(op):
    """'aten::sin.out' -> 'sin': fallback report keys may carry namespace and overload."""
    return op.split("::")[-1].split(".")[0]


def fallback_count(name):
    """Fallback-report calls of op `name`, summed over its overloads."""
    import torch_foo

    return sum(n for op, n in torch_foo.fallback_report().items() if base_name(op) == name)


def native_aten_ops():
    """Base names of the aten ops that have a foo (PrivateUse1) kernel registered."""
    import torch

    regs = torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
    return {base_name(op) for op in regs if op.startswith("aten::")}


def fallback_op():
    """(name, fn) of a unary-callable pointwise op that is not native, so it falls back."""
    import torch

    native = native_aten_ops()
    for name in _FALLBACK_CANDIDATES:
        if name not in native:
            fn = getattr(torch, name)
            if name in ("hypot", "atan2"):
                return name, (lambda x, fn=fn: fn(x, x))
            return name, fn
    pytest.skip(f"all of {_FALLBACK_CANDIDATES} are native; pick another fallback candidate")


def run_python(code=None, args=(), env=None, timeout=300):
    """Run a fresh interpreter (code via -c, or args) on the same torch_foo; returns CompletedProcess."""
    import torch_foo

    full_env = dict(os.environ)
    # Where this process found torch_foo (source tree with an in-place build, or
    # site-packages): put first on the child's path so it tests the same package.
    package_root = str(Path(torch_foo.__file__).resolve().parents[1])
    if package_root not in site.getsitepackages():
        full_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH")) if p
        )
    full_env.update(env or {})
    cmd = [sys.executable] + (["-c", code] if code is not None else list(args))
    # cwd is tests/, not the repo root, so the source tree cannot shadow an installed build.
    return subprocess.run(cmd, cwd=TESTS, env=full_env, capture_output=True, text=True, timeout=timeout)
