"""The sim device's checked mode (docs/emulation.md, "Checked mode"): planted bugs are reported.

tests/extensions/planted_bugs holds one kernel per bug class the checked mode reports, and
correct twins. The extension is built once (JIT, instrumented: ``load(..., sim_check=True)``);
one child process with ``TORCH_FOO_SIM_CHECK=memcheck,racecheck,initcheck`` runs every case
(the setting is read once per process) and reports, per case, the error raised by the
synchronize after it, or the result. Each test asserts on its case: the kernel, block, thread
and address named in the report.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_foo
from torch_foo.utils import cpp_extension

pytestmark = pytest.mark.slow

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = [os.path.join(HERE, "extensions", "planted_bugs", f) for f in ("planted.cpp", "planted.cu")]
NAME = "foo_planted_bugs"

# Runs in the child: loads the (already built) extension and every case, prints JSON.
CHILD = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch_foo
    from torch_foo.utils import cpp_extension

    m = cpp_extension.load(NAME, SOURCES, build_directory=BUILD, with_cuda=False, sim_check=True)
    results = {}

    def case(name, fn):
        try:
            value, address = fn()
            torch.foo.synchronize()
            results[name] = {"error": None, "value": value.cpu().tolist(), "address": address}
        except RuntimeError as e:
            results[name] = {"error": str(e), "address": address_of.get(name)}

    address_of = {}

    def past_end():
        y = m.past_end(1000)
        address_of["past_end"] = hex(y.data_ptr() + 4000)
        return y, address_of["past_end"]

    def negative_index():
        y = m.negative_index(torch.ones(1000).to("foo"))
        address_of["negative_index"] = hex(y.data_ptr() - 4)
        return y, address_of["negative_index"]

    def use_after_free():
        t = torch.ones(1000).to("foo")
        address = t.data_ptr()
        del t  # back to the caching allocator: poisoned until reused
        address_of["use_after_free"] = hex(address)
        return m.read_stale(address, 32), hex(address)

    def shared_past_end():
        return m.shared_past_end(torch.ones(64).to("foo")), None

    def missing_barrier():
        return m.block_sum(torch.ones(4 * 256).to("foo"), False), None

    def with_barrier():
        return m.block_sum(torch.ones(4 * 256).to("foo"), True), None

    def missing_syncwarp():
        return m.warp_rotate(torch.arange(32.0).to("foo"), False), None

    def with_syncwarp():
        return m.warp_rotate(torch.arange(32.0).to("foo"), True), None

    def uninitialised():
        y = m.scale_uninitialised(1000)
        return y, None

    def correct():
        y, count = m.add_one(torch.arange(1000.0).to("foo"))
        return torch.cat([y[:3], count.float()]), None

    def library_ops():  # torch_foo's own kernels on checked memory
        x = torch.randn(300, 7).to("foo")
        return torch.stack([(x * 2 + 1).sum(), x.softmax(-1).sum(), (x @ x.T).trace()]), None

    for fn in (past_end, negative_index, use_after_free, shared_past_end, missing_barrier, with_barrier,
               missing_syncwarp, with_syncwarp, uninitialised, correct, library_ops):
        case(fn.__name__, fn)
    print("RESULTS" + json.dumps(results))
    """
)


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    root = os.environ.get("TORCH_FOO_TEST_EXTENSIONS_DIR")
    build = os.path.join(root, NAME) if root else str(tmp_path_factory.mktemp(NAME))
    os.makedirs(build, exist_ok=True)
    return build


@pytest.fixture(scope="module")
def planted(build_dir):
    """The extension, built instrumented, loaded into this (unchecked) process."""
    return cpp_extension.load(NAME, SOURCES, build_directory=build_dir, with_cuda=False, sim_check=True)


@pytest.fixture(scope="module")
def checked_results(planted, build_dir):
    # One host thread: blocks run in order, so the first block with a finding is block 0.
    env = dict(os.environ, TORCH_FOO_SIM_CHECK="memcheck,racecheck,initcheck", TORCH_FOO_SIM_THREADS="1")
    script = f"NAME = {NAME!r}\nSOURCES = {SOURCES!r}\nBUILD = {build_dir!r}\n" + CHILD
    proc = subprocess.run([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULTS"))
    return json.loads(line[len("RESULTS"):])


def _error(results, name):
    error = results[name]["error"]
    assert error, f"{name}: no report; the kernel returned {results[name].get('value')}"
    return error


def test_past_the_end_write(checked_results):
    e = _error(checked_results, "past_end")
    assert "foo sim memcheck: invalid write of 4 bytes at " + checked_results["past_end"]["address"] in e
    # i = 1000 = 3 * 256 + 232
    assert "kernel planted::past_end, block (3,0,0), thread (232,0,0)" in e
    assert "0 bytes past the end of the 4000-byte allocation" in e
    assert "planted.cu:11" in e  # the source line of the store


def test_negative_index(checked_results):
    e = _error(checked_results, "negative_index")
    assert "invalid write of 4 bytes at " + checked_results["negative_index"]["address"] in e
    assert "kernel planted::negative_index, block (0,0,0), thread (0,0,0)" in e
    assert "4 bytes before the 4000-byte allocation" in e


def test_use_after_free(checked_results):
    e = _error(checked_results, "use_after_free")
    assert "invalid read of 4 bytes at " + checked_results["use_after_free"]["address"] in e
    assert "kernel planted::read_stale, block (0,0,0), thread (0,0,0)" in e
    assert "0 bytes inside a 4096-byte allocation" in e and "use after free" in e


def test_shared_memory_out_of_bounds(checked_results):
    e = _error(checked_results, "shared_past_end")
    assert "memcheck: invalid write of 4 bytes of shared memory" in e
    assert "kernel planted::shared_past_end, block (0,0,0), thread (0,0,0)" in e
    assert "byte offset 256 of the launch's 256 bytes of dynamic shared memory" in e


def test_missing_barrier(checked_results):
    e = _error(checked_results, "missing_barrier")
    assert "foo sim racecheck: write-after-read hazard on __shared__ memory at 0x" in e
    assert "kernel planted::block_sum_missing_barrier, block (0,0,0)" in e
    # thread 0 read s[128] (adding it to s[0]) before thread 128 wrote it
    assert "thread (128,0,0) writes 4 bytes that thread (0,0,0) read, with no __syncthreads between them" in e


def test_missing_syncwarp(checked_results):
    e = _error(checked_results, "missing_syncwarp")
    assert "racecheck: write-after-read hazard on dynamic shared memory at 0x" in e
    assert "kernel planted::warp_rotate_missing_syncwarp, block (0,0,0)" in e
    assert "thread (1,0,0) writes 4 bytes that thread (0,0,0) read" in e
    assert "same warp, and no __syncwarp or warp collective either" in e


def test_uninitialised_read(checked_results):
    e = _error(checked_results, "uninitialised")
    assert "foo sim initcheck: read of 4 uninitialised bytes at 0x" in e
    assert "kernel planted::scale, block (0,0,0), thread (0,0,0)" in e
    assert "0 bytes into the 4000-byte allocation" in e and "never written since it was allocated" in e


def test_correct_kernels_run_clean(checked_results):
    for name in ("with_barrier", "with_syncwarp", "correct", "library_ops"):
        assert checked_results[name]["error"] is None, checked_results[name]["error"]
    assert checked_results["with_barrier"]["value"] == [256.0] * 4
    assert checked_results["with_syncwarp"]["value"] == [float((i + 1) % 32) for i in range(32)]
    assert checked_results["correct"]["value"] == [1.0, 2.0, 3.0, 1000.0]


def test_unchecked_process_reports_nothing(planted):
    """Without TORCH_FOO_SIM_CHECK the same instrumented kernels run as before: no report."""
    y = planted.past_end(1000)
    torch.foo.synchronize()
    assert y.cpu()[999].item() == 999.0
    assert planted.block_sum(torch.ones(4 * 256).to("foo"), True).cpu().tolist() == [256.0] * 4


def test_bad_setting_is_an_error():
    env = dict(os.environ, TORCH_FOO_SIM_CHECK="memchek")
    proc = subprocess.run([sys.executable, "-c", "import torch; torch.ones(1, device='foo')"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode != 0
    assert "TORCH_FOO_SIM_CHECK='memchek' is invalid" in proc.stdout


def test_sim_check_flag_of_every_build_route(monkeypatch):
    """load's and FooExtension's sim_check, and FOO_SIM_SANITIZE when it is None."""
    monkeypatch.delenv("FOO_SIM_SANITIZE", raising=False)
    assert not cpp_extension._want_sim_check(None)
    monkeypatch.setenv("FOO_SIM_SANITIZE", "ON")
    assert cpp_extension._want_sim_check(None) and not cpp_extension._want_sim_check(False)
    monkeypatch.setenv("FOO_SIM_SANITIZE", "maybe")
    with pytest.raises(ValueError, match="FOO_SIM_SANITIZE"):
        cpp_extension._want_sim_check(None)
    assert "-fsanitize=kernel-address" in cpp_extension._foo_cflags(False, True)
    assert "-DFOO_SIM_CHECKED" not in cpp_extension._foo_cflags(False, False)
    ext = cpp_extension.FooExtension("x", ["x.cpp", "x.cu"], sim_check=True)
    assert ext.foo_sim_check is True
