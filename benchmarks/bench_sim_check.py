"""Cost of the sim device's checked mode (docs/emulation.md, "Checked mode") on a kernel's own work.

Builds tests/extensions/planted_bugs twice (plain, and instrumented with ``sim_check=True``) and
times two of its correct kernels in child processes, each with the checks off and on:
``add_one`` (an independent elementwise kernel, 2^20 floats, an atomic per element) and
``block_sum`` with its barriers (cooperative, static shared memory, 1024 blocks of 256).

    .venv/bin/python benchmarks/bench_sim_check.py [--build DIR]

Prints the median milliseconds per call (after a warm-up) per build and setting.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = [os.path.join(ROOT, "tests", "extensions", "planted_bugs", f) for f in ("planted.cpp", "planted.cu")]

CHILD = """
import json, statistics, time
import torch, torch_foo
from torch_foo.utils import cpp_extension
m = cpp_extension.load(NAME, SOURCES, build_directory=BUILD, with_cuda=False, sim_check=CHECKED)
x = torch.rand(1 << 20).to("foo")
s = torch.ones(1024 * 256).to("foo")
out = {}
for label, fn in (("add_one", lambda: m.add_one(x)), ("block_sum", lambda: m.block_sum(s, True))):
    fn(); torch.foo.synchronize()
    times = []
    for _ in range(7):
        t = time.perf_counter(); fn(); torch.foo.synchronize(); times.append(time.perf_counter() - t)
    out[label] = 1e3 * statistics.median(times)
print("RESULT" + json.dumps(out))
"""


def run(build, name, checked, setting):
    env = dict(os.environ)
    env.pop("TORCH_FOO_SIM_CHECK", None)
    if setting:
        env["TORCH_FOO_SIM_CHECK"] = setting
    script = f"NAME={name!r}\nSOURCES={SOURCES!r}\nBUILD={build!r}\nCHECKED={checked!r}\n" + CHILD
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(proc.stdout + proc.stderr)
    return json.loads(proc.stdout.split("RESULT", 1)[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=None, help="build directory root (default: a temporary one)")
    args = parser.parse_args()
    root = args.build or tempfile.mkdtemp(prefix="bench_sim_check_")
    rows = [
        ("plain build, checks off", "plain", False, None),
        ("instrumented, checks off", "checked", True, None),
        ("instrumented, memcheck", "checked", True, "memcheck"),
        ("instrumented, racecheck", "checked", True, "racecheck"),
        ("instrumented, all three", "checked", True, "memcheck,racecheck,initcheck"),
    ]
    print(f"{'':28s} {'add_one ms':>12s} {'block_sum ms':>14s}")
    for label, sub, checked, setting in rows:
        build = os.path.join(root, sub)
        os.makedirs(build, exist_ok=True)
        r = run(build, f"bench_planted_{sub}", checked, setting)
        print(f"{label:28s} {r['add_one']:12.2f} {r['block_sum']:14.2f}", flush=True)


if __name__ == "__main__":
    main()
