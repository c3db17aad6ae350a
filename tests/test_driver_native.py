"""The drivers' own C++ test (csrc/runtime/driver/tests/driver_test.cpp), built and run here:
it exercises the sim driver without torch — memory, stream asynchrony and ordering, events,
sticky async errors, out-of-memory — and is the place to look first when a runtime test fails."""

import shutil
import subprocess
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parents[1] / "csrc"
DRIVER_DIR = CSRC / "runtime" / "driver"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_driver_selftest(tmp_path):
    exe = tmp_path / "driver_test"
    # The driver layer hosts the emulator (driver() installs its stream queue), so it links csrc/sim.
    sources = sorted(str(p) for p in [*DRIVER_DIR.glob("*.cpp"), *(CSRC / "sim").glob("*.cpp")])
    sources.append(str(DRIVER_DIR / "tests" / "driver_test.cpp"))
    build = subprocess.run(["g++", "-std=c++17", "-O1", "-pthread", f"-I{CSRC}", *sources, "-o", str(exe)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert " 0 failed" in run.stdout, run.stdout[-2000:]
