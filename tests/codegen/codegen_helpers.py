"""Run `python -m codegen` from the repo root in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(REPO, "tests", "codegen", "golden")
EXPECTED = os.path.join(GOLDEN, "expected")


def run_codegen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


def files_under(root: str) -> list[str]:
    """The files below root, as sorted '/'-separated relative paths."""
    found = []
    for dirpath, _, names in os.walk(root):
        found += [os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/") for n in names]
    return sorted(found)


def outputs(out_dir: str) -> dict[str, str]:
    """Generated file name -> path, for a run of the golden manifest with --out OUT_DIR
    --pyi OUT_DIR/ops.pyi: the files of golden/expected."""
    return {n: os.path.join(out_dir, n) for n in files_under(EXPECTED)}
