"""Write generated files only when their content changes; or report which are stale.

Folders listed as owned (generated/pointwise/) hold only generated files: a file there that
codegen no longer produces (its entry left the manifest) is stale and gets deleted, or the
build would keep compiling and registering it.
"""

from __future__ import annotations

import os


def _extra(files: dict[str, str], owned: list[str]) -> list[str]:
    wanted = {os.path.normpath(p) for p in files}
    out = []
    for folder in owned:
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                path = os.path.normpath(os.path.join(folder, name))
                if os.path.isfile(path) and path not in wanted:
                    out.append(path)
    return sorted(out)


def stale(files: dict[str, str], owned: list[str] | None = None) -> list[str]:
    """Paths whose file is missing or differs from the wanted content, or is no longer wanted."""
    out = []
    for path, content in sorted(files.items()):
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                if fh.read() == content:
                    continue
        except FileNotFoundError:
            pass
        out.append(path)
    return out + _extra(files, owned or [])


def write_if_changed(files: dict[str, str], owned: list[str] | None = None) -> list[str]:
    """Write the stale files (atomically), delete the unwanted ones; return their paths."""
    changed = stale(files, owned)
    for path in changed:
        if path not in files:
            os.remove(path)
            continue
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(files[path])
        os.replace(tmp, path)
    return changed
