"""torch_foo's own kernels run clean in the sim's checked mode (issue 24; docs/emulation.md,
"Checked mode"): a copy of the project built with FOO_SIM_SANITIZE=ON (every sim kernel
instrumented; -O0, no cuda target: tests/project_copy.py), then the generated value tests of
every manifest entry with TORCH_FOO_SIM_CHECK=memcheck,racecheck. A report fails its test: it is
the stream's error, raised at the next synchronisation.

initcheck stays off here: PyTorch's own composite circular pad (`_pad_circular`) reads padding
it has not written yet and overwrites it in its next step (27 generated cases; the results are
right, and a GPU's initcheck reports the same reads).

The copy is the one tests/test_rebuild.py then edits (tests/project_copy.py: one build of a
copy, started with the session and niced beside the other tests); this module runs before that
one, on the copy as built (conftest.py orders them)."""

import re

import pytest
from project_copy import built_shared_copy, run_copy_tests, run_op_tests, shared_copy

pytestmark = pytest.mark.slow
RUNS_BEFORE = "test_rebuild.py"  # which edits the shared copy (conftest.py orders the two)


def start_early(config, items=()) -> None:
    shared_copy(config)


@pytest.fixture(scope="module")
def checked_project(request):
    src, site_dir, _ = built_shared_copy(request.config)
    return src, site_dir


def test_every_manifest_kernel_runs_clean_under_memcheck_and_racecheck(checked_project):
    src, site_dir = checked_project
    out = run_op_tests(src, site_dir, "test_values", env={"TORCH_FOO_SIM_CHECK": "memcheck,racecheck"}, timeout=1500)
    passed = int(re.search(r"(\d+) passed", out).group(1))
    assert passed > 1000, out[-2000:]


def test_elementwise_whole_vectors_run_clean_and_right(checked_project):
    """The checked build runs the elementwise kernel's 16-byte vector accesses as a GPU does (the
    fast sim build leaves them to its element loop: kernels/core/elementwise.cuh, kWholeVectors):
    every alignment and tail case of tests/test_elementwise.py, its values and its accesses."""
    src, site_dir = checked_project
    out = run_copy_tests(src, site_dir, "tests/test_elementwise.py", env={"TORCH_FOO_SIM_CHECK": "memcheck,racecheck"})
    assert int(re.search(r"(\d+) passed", out).group(1)) >= 10, out[-2000:]
