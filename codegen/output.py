"""Write generated files only when their content changes; or report which are stale."""

from __future__ import annotations

import os


def orphans(files: dict[str, str], owned_dirs: list[str]) -> list[str]:
    """Files in owned_dirs that are not generated any more (a kernel left the manifest)."""
    wanted = {os.path.normpath(p) for p in files}
    out = []
    for d in owned_dirs:
        if os.path.isdir(d):
            out.extend(p for p in (os.path.join(d, n) for n in os.listdir(d)) if os.path.normpath(p) not in wanted)
    return sorted(out)


def stale(files: dict[str, str], owned_dirs: list[str] = ()) -> list[str]:
    """Paths whose file is missing or differs from the wanted content, or must be deleted."""
    out = []
    for path, content in sorted(files.items()):
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                if fh.read() == content:
                    continue
        except FileNotFoundError:
            pass
        out.append(path)
    return out + orphans(files, list(owned_dirs))


def write_if_changed(files: dict[str, str], owned_dirs: list[str] = ()) -> tuple[list[str], list[str]]:
    """Write the stale files (atomically) and delete the orphans; return both lists of paths."""
    changed = stale(files)
    for path in changed:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(files[path])
        os.replace(tmp, path)
    removed = orphans(files, list(owned_dirs))
    for path in removed:
        os.remove(path)
    return changed, removed
