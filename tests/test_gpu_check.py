"""`./run gpu-check DIR` (benchmarks/gpu_check.sh) and its helpers, rehearsed without a GPU: the
script parses, a rehearsal on the sim driver writes summary.md and the junit XML, the step
budget skips what does not fit, bench_gpu.py's JSON records results and their correctness, and
gpu_check_dist.py passes in one process. The GPU run itself needs a lent machine
(benchmarks/RESULTS.md, "cuda driver vs torch.cuda")."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"


def rehearse(out, timeout=240, **env):
    full = dict(os.environ, GPU_CHECK_REHEARSAL="1", PYTHON=sys.executable, TORCH_FOO_SIM_THREADS="1",
                OMP_NUM_THREADS="1")
    full.update(env)
    return subprocess.run(["bash", str(SCRIPT), str(out)], cwd=ROOT, env=full, capture_output=True, text=True,
                          timeout=timeout)


def test_script_parses_and_prints_its_usage():
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
    usage = subprocess.run(["bash", str(ROOT / "run"), "gpu-check"], capture_output=True, text=True)
    assert usage.returncode == 2 and "GPU_CHECK_REHEARSAL" in usage.stdout


def test_rehearsal_writes_the_summary_and_junit(tmp_path):
    result = rehearse(tmp_path / "out", GPU_CHECK_TESTS="tests/test_softmax_small.py",
                      GPU_CHECK_SKIP="benchmarks distributed", GPU_CHECK_COPY_TO=str(tmp_path / "copy"))
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert result.returncode == 0, summary + result.stderr
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in summary.splitlines()
            if line.startswith("| ") and not line.startswith("| step")}
    assert rows["machine"] == "PASS" and rows["smoke"] == "PASS" and rows["suite"] == "PASS", summary
    assert rows["build"] == "skipped" and rows["benchmarks"] == "skipped" and rows["sanitizers"] == "skipped"
    assert "RUNNING" not in summary and "11 of 11 smoke checks passed" in summary
    assert "failures=\"0\"" in (tmp_path / "out" / "junit-sim.xml").read_text()
    # The copy for the device tool: two files, whatever DIR holds.
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["gpu-check.tar.gz", "summary.md"]
    assert "| step | status |" in result.stdout  # the table is printed too


def test_budget_skips_steps_that_do_not_fit(tmp_path):
    result = rehearse(tmp_path / "out", GPU_CHECK_BUDGET="12", GPU_CHECK_TESTS="tests/test_softmax_small.py")
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert result.returncode == 0, summary
    assert "| suite | skipped | 0 | budget:" in summary and "| distributed | skipped | 0 | budget:" in summary


def test_bench_gpu_json_records_rates_and_correctness(tmp_path):
    out = tmp_path / "bench.json"
    subprocess.run([sys.executable, "bench_gpu.py", "--quick", "--baseline", "cpu", "--only", "add,mm 64,overhead",
                    "--json", str(out)], cwd=ROOT / "benchmarks", check=True, capture_output=True, timeout=120,
                   env=dict(os.environ, TORCH_FOO_SIM_THREADS="1", OMP_NUM_THREADS="1"))
    report = json.loads(out.read_text())
    cases = {r["case"] + " " + r["dtype"]: r for r in report["results"]}
    assert report["failures"] == 0 and report["baseline"] == "cpu"
    assert cases["mm 64^3 float32"]["matches"] and cases["mm 64^3 bfloat16"]["matches"]
    assert cases["add 262144 float32"]["unit"] == "GB/s" and cases["add 262144 float32"]["foo_rate"] > 0
    assert cases["add 1 float32"]["rel_error"] is None and cases["add 1 float32"]["foo_s"] > 0


def test_dist_check_in_one_process(tmp_path):
    out = tmp_path / "dist.json"
    result = subprocess.run([sys.executable, "gpu_check_dist.py", "--world", "1", "--json", str(out)],
                            cwd=ROOT / "benchmarks", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(out.read_text())
    assert report["ok"] and report["ranks"][0]["engine"] == "gloo"
    assert all(c["ok"] for c in report["ranks"][0]["checks"])


def test_rehearsal_never_builds(tmp_path):
    # A Python without torch_foo: the rehearsal stops instead of compiling on a shared machine.
    result = rehearse(tmp_path / "out", PYTHON=str(tmp_path / "no" / "python"))
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert result.returncode == 1 and "a rehearsal does not build" in summary, summary
    assert not (tmp_path / "out" / "build.log").exists()


def test_relative_python_and_dir_from_another_folder(tmp_path):
    python = os.path.relpath(sys.executable, tmp_path)
    full = dict(os.environ, GPU_CHECK_REHEARSAL="1", PYTHON=python, GPU_CHECK_SKIP="suite benchmarks distributed")
    result = subprocess.run(["bash", str(ROOT / "run"), "gpu-check", "out"], cwd=tmp_path, env=full,
                            capture_output=True, text=True, timeout=120)
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert result.returncode == 0 and "| smoke | PASS |" in summary, summary
