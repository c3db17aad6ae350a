"""Issue 11's table in one command: per-op overhead (bench_overhead.py), sim throughput on large
operands (bench_throughput.py) and model training steps (bench_models.py), each row foo against
torch on the CPU measured side by side in this one process. One thread on each side gives
comparable columns on a shared machine (benchmarks/RESULTS.md says why):

    OMP_NUM_THREADS=1 TORCH_FOO_SIM_THREADS=1 .venv/bin/python benchmarks/bench_speed.py

Arguments after the script name go to none of the three: run a script on its own for its options.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_models  # noqa: E402
import bench_overhead  # noqa: E402
import bench_throughput  # noqa: E402

PARTS = (
    ("Per-op overhead (µs per call)", bench_overhead, []),
    ("Throughput on large operands", bench_throughput, ["--seconds", "0.7"]),
    ("Model training steps", bench_models, ["--seconds", "1"]),
)

if __name__ == "__main__":
    for title, module, argv in PARTS:
        print(f"\n## {title}\n", flush=True)
        sys.argv = [module.__file__, *argv]
        module.main()
