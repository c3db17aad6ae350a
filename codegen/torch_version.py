"""generated/TORCH_VERSION: the torch version (major.minor) whose native_functions.yaml the files
were generated from. The committed generated/ is for one version; a build against another
supported version generates into its build directory instead (CMakeLists.txt reads this file)."""

from __future__ import annotations

import importlib.metadata
import os
import re

from .render import stamp
from .resolve import Plan

TORCH_VERSION_FILE = "TORCH_VERSION"


def torch_version() -> str:
    """major.minor of the installed torch (whose torchgen codegen uses), without importing torch."""
    version = importlib.metadata.version("torch")
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"{m.group(1)}.{m.group(2)}" if m else version


def gen_torch_version(plan: Plan) -> str:
    return f"# {stamp(plan.manifest_path)}\n# torch version (major.minor) of the files next to this one\n{torch_version()}\n"


def committed_torch_version(out_dir: str) -> str | None:
    """The version recorded in out_dir, or None when there is none."""
    try:
        with open(os.path.join(out_dir, TORCH_VERSION_FILE), encoding="utf-8") as fh:
            lines = [line.strip() for line in fh if line.strip() and not line.startswith("#")]
    except FileNotFoundError:
        return None
    return lines[0] if lines else None
