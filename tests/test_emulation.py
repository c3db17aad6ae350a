"""The emulation layer's own C++ test (csrc/sim/tests/emulation_test.cu), built with g++ for the
sim target and run here, independent of torch: barriers, shared memory (static and
FOO_DYNAMIC_SHARED), warp collectives, atomics across host threads, deadlock reports, launch
validation and asynchrony, all with exact expected results. The same .cu file builds with nvcc
for a GPU (see its header)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "csrc"


@pytest.fixture(scope="module")
def emulation_test(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    exe = tmp_path_factory.mktemp("emulation") / "emulation_test"
    sources = sorted(str(p) for p in [*(CSRC / "sim").glob("*.cpp"), *(CSRC / "runtime" / "driver").glob("*.cpp")])
    build = subprocess.run(
        ["g++", "-std=c++17", "-O2", "-pthread", f"-I{CSRC}",
         "-x", "c++", str(CSRC / "sim" / "tests" / "emulation_test.cu"), "-x", "none", *sources, "-o", str(exe)],
        capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-4000:]
    return exe


# 1: every block on the stream's own thread; 4: blocks race on several host threads even on a
# 2-core machine, which is what the atomics tests need to mean anything.
@pytest.mark.parametrize("threads", ["1", "4"])
def test_emulation_selftest(emulation_test, threads):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_FOO_")}
    env["TORCH_FOO_SIM_THREADS"] = threads
    run = subprocess.run([str(emulation_test)], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert " 0 failed" in run.stdout, run.stdout[-2000:]


def test_invalid_thread_count_is_a_stream_error(emulation_test):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_FOO_")}
    env["TORCH_FOO_SIM_THREADS"] = "zero"
    run = subprocess.run([str(emulation_test)], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode != 0
    assert "TORCH_FOO_SIM_THREADS='zero' is invalid" in run.stderr


def test_sim_device_properties_report_the_enforced_limits():
    torch = pytest.importorskip("torch")
    import torch_foo  # noqa: F401

    if torch_foo.driver() != "sim":
        pytest.skip("sim driver only")
    p = torch.foo.get_device_properties(0)
    assert p.max_threads_per_block == 1024
    assert p.max_shared_memory_per_block == 48 * 1024
    assert p.warp_size == 32
