"""Run `python -m codegen` from the repo root in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(REPO, "tests", "codegen", "golden")


def run_codegen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


# The golden manifest's pointwise entries: one kernel and one host file each.
POINTWISE = ["exp_out", "logical_not_out", "div_out_mode", "masked_fill_scalar_"]


def outputs(out_dir: str) -> dict[str, str]:
    """Generated file name -> path, for a run of the golden manifest with --out OUT_DIR --pyi OUT_DIR/ops.pyi."""
    names = ["FooNativeFunctions.h", "FooStructured.h", "RegisterFoo.cpp", "FooCustomOps.cpp", "FooPythonOps.cpp", "ops.pyi"]
    names += [f"pointwise/{k}.{ext}" for k in POINTWISE for ext in ("cu", "cpp")]
    return {n: os.path.join(out_dir, n) for n in names}
