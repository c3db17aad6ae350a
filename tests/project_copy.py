"""A copy of the project built the documented way (pip install --no-build-isolation into a private
target) in the background, and its generated op tests run against that install: shared by
tests/test_rebuild.py (the developer loop) and tests/test_sim_checked_build.py (the checked mode).
Copies compile with -O0 and without the cuda target: what they check does not depend on
optimisation, and -O0 compiles the sim's kernels 3-4x faster (reduce.cu: 34 s at -O3, 9 s).

The two modules share one copy (`shared_copy`), built once with FOO_SIM_SANITIZE=ON: a full build
of a copy is the suite's largest cost (190 compile jobs, niced beside the tests on the 2-core
machine), and the developer loop is the same with the checked mode compiled in (instrumented
kernels check nothing unless TORCH_FOO_SIM_CHECK asks). The checked-mode test runs first, on the
copy as built; conftest.py orders it before tests/test_rebuild.py, which edits the copy."""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import niced

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "__pycache__", ".pytest_cache", "*.so", "*.egg-info")


class ProjectBuild:
    """The documented build (README, ./run build) of the copy into a private target, running in
    the background; wait() returns the compiled files. Its output goes to a file: a pipe nobody
    reads would fill up and stall pip."""

    def __init__(self, src: Path, site_dir: Path, nice: int = 0, env: dict | None = None):
        # Appended to the user's CMAKE_ARGS, and the checked mode compiled in: the same for every
        # build of the copy (a change would reconfigure and recompile everything).
        cmake_args = (os.environ.get("CMAKE_ARGS", "") + " -DCMAKE_CXX_FLAGS_RELEASE='-O0 -DNDEBUG'").strip()
        env = {**os.environ, "FOO_USE_CUDA": "OFF", "FOO_SIM_SANITIZE": "ON", "CMAKE_ARGS": cmake_args, **(env or {})}
        cmd = [sys.executable, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-deps",
               "--upgrade", "--target", str(site_dir), str(src)]
        self.log = site_dir.parent / "build.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(niced(cmd, nice), cwd=src, env=env, stdout=log, stderr=subprocess.STDOUT)

    def wait(self) -> list[str]:
        returncode = self.proc.wait(timeout=1500)
        output = self.log.read_text()
        assert returncode == 0, output[-8000:]
        return re.findall(r"Building \w+ object (\S+)", output)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_copy_tests(src: Path, site_dir: Path, test_file: str, selection: str | None = None, env: dict | None = None,
                   timeout: int = 1200) -> str:
    """The copy's tests in `test_file` (relative to its root), `selection` of them, against the
    copy's install. The install comes first on the path, so the copy's source torch_foo/ (no _C
    there) cannot shadow it; the copy's root after it gives tests/ops the copy's codegen (its
    manifest parser)."""
    env = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "TORCH_FOO_DRIVER": "sim",
           "PYTHONPATH": os.pathsep.join([str(site_dir), str(src), sysconfig.get_paths()["purelib"]]), **(env or {})}
    cmd = [sys.executable, "-S", "-m", "pytest", str(src / test_file), "-q", "-p", "no:cacheprovider"]
    if selection:
        cmd += ["-k", selection]
    result = subprocess.run(cmd, cwd=site_dir, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    return result.stdout


def run_op_tests(src: Path, site_dir: Path, selection: str, env: dict | None = None, timeout: int = 1200) -> str:
    """The copy's generated op tests (tests/ops) for `selection`."""
    return run_copy_tests(src, site_dir, "tests/ops/test_ops.py", selection, env, timeout)


_shared: dict = {}


def shared_copy(config) -> tuple[Path, Path, ProjectBuild]:
    """The session's one copy of the project and its first build, started on the first call
    (a module's start_early), niced so the tests running beside it keep their pace:
    (source, install target, build)."""
    if "copy" not in _shared:
        base = config._tmp_path_factory.mktemp("project_copy")
        src, site_dir = base / "src", base / "site"
        shutil.copytree(ROOT, src, ignore=SKIP)
        build = ProjectBuild(src, site_dir, nice=10)
        config.add_cleanup(build.kill)  # a session that stops early does not leave a build behind
        _shared["copy"] = src, site_dir, build
    return _shared["copy"]


def built_shared_copy(config) -> tuple[Path, Path, list[str]]:
    """The shared copy once its first build has finished: (source, install target, files compiled)."""
    src, site_dir, build = shared_copy(config)
    if "compiled" not in _shared:
        _shared["compiled"] = build.wait()
        assert "instrumented for the checked mode" in build.log.read_text()
    return src, site_dir, _shared["compiled"]
