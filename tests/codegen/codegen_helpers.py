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


def outputs(out_dir: str) -> dict[str, str]:
    """Generated file name -> path, for a run with --out OUT_DIR --pyi OUT_DIR/ops.pyi."""
    names = ["FooNativeFunctions.h", "RegisterFoo.cpp", "FooCustomOps.cpp", "FooPythonOps.cpp", "ops.pyi"]
    return {n: os.path.join(out_dir, n) for n in names}
