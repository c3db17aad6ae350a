"""torch_foo's own kernels run clean in the sim's checked mode (issue 24; docs/emulation.md,
"Checked mode"): a copy of the project built with FOO_SIM_SANITIZE=ON (every sim kernel
instrumented; -O0, no cuda target: tests/project_copy.py), then the generated value tests of
every manifest entry with TORCH_FOO_SIM_CHECK=memcheck,racecheck. A report fails its test: it is
the stream's error, raised at the next synchronisation.

initcheck stays off here: PyTorch's own composite circular pad (`_pad_circular`) reads padding
it has not written yet and overwrites it in its next step (27 generated cases; the results are
right, and a GPU's initcheck reports the same reads).

The copy's build starts with the session (start_early) and runs niced beside the other tests,
as tests/test_rebuild.py's does."""

import re
import shutil

import pytest
from project_copy import ROOT, SKIP, ProjectBuild, run_op_tests

pytestmark = pytest.mark.slow

_early: dict = {}


def start_early(config, items=()) -> None:
    base = config._tmp_path_factory.mktemp("checked")
    src, site_dir = base / "src", base / "site"
    shutil.copytree(ROOT, src, ignore=SKIP)
    build = ProjectBuild(src, site_dir, nice=10, env={"FOO_SIM_SANITIZE": "ON"})
    config.add_cleanup(build.kill)
    _early["project"] = src, site_dir, build


@pytest.fixture(scope="module")
def checked_project(request):
    if "project" not in _early:
        start_early(request.config)
    src, site_dir, build = _early.pop("project")
    build.wait()
    assert "instrumented for the checked mode" in build.log.read_text()
    return src, site_dir


def test_every_manifest_kernel_runs_clean_under_memcheck_and_racecheck(checked_project):
    src, site_dir = checked_project
    out = run_op_tests(src, site_dir, "test_values", env={"TORCH_FOO_SIM_CHECK": "memcheck,racecheck"}, timeout=1500)
    passed = int(re.search(r"(\d+) passed", out).group(1))
    assert passed > 1000, out[-2000:]
