"""Write generated files only when their content changes; or report which are stale."""

from __future__ import annotations

import os


def stale(files: dict[str, str]) -> list[str]:
    """Paths whose file is missing or differs from the wanted content."""
    out = []
    for path, content in sorted(files.items()):
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                if fh.read() == content:
                    continue
        except FileNotFoundError:
            pass
        out.append(path)
    return out


def write_if_changed(files: dict[str, str]) -> list[str]:
    """Write the stale files (atomically); return their paths."""
    changed = stale(files)
    for path in changed:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(files[path])
        os.replace(tmp, path)
    return changed
