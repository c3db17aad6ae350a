"""python -m codegen [--manifest yaml/ops.yaml] [--out generated] [--pyi torch_foo/ops.pyi] [--check]"""

from __future__ import annotations

import argparse
import os
import sys

from .aten import load_aten
from .gen_custom import gen_custom
from .gen_custom_py import gen_custom_py
from .gen_header import KERNEL_HEADER_DIR, gen_headers
from .gen_pointwise import gen_pointwise
from .gen_pyi import gen_pyi
from .gen_python import gen_python
from .gen_register import gen_register_shards
from .gen_structured_header import gen_structured_header
from .manifest import ManifestError, parse_manifest
from .output import stale, write_if_changed
from .resolve import resolve
from .torch_version import TORCH_VERSION_FILE, committed_torch_version, gen_torch_version, torch_version


def display_path(path: str) -> str:
    """The manifest path as stamped and reported: relative to the working directory when inside it."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def custom_ops_path(pyi_path: str) -> str:
    """The generated Python registrations (fake, autograd) of the custom ops: beside the stub,
    torch_foo/_custom_ops.py for the committed torch version."""
    return os.path.join(os.path.dirname(pyi_path), "_custom_ops.py")


POINTWISE_DIR = "pointwise"  # under --out: one kernel (.cu) and host (.cpp) file per pointwise entry


def generate(manifest_path: str, out_dir: str, pyi_path: str) -> dict[str, str]:
    """All generated files, path -> content. Raises ManifestError."""
    shown = display_path(manifest_path)
    try:
        with open(manifest_path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        raise ManifestError(shown, 1, f"cannot read the manifest ({e.strerror})", "pass --manifest PATH") from None
    plan = resolve(parse_manifest(text, shown), load_aten())
    files = {os.path.join(out_dir, rel): content for rel, content in gen_headers(plan).items()}
    files.update({os.path.join(out_dir, name): content for name, content in gen_register_shards(plan).items()})
    files.update({os.path.join(out_dir, path): text for path, text in gen_pointwise(plan).items()})
    files.update({
        os.path.join(out_dir, "FooStructured.h"): gen_structured_header(plan),
        os.path.join(out_dir, "FooCustomOps.cpp"): gen_custom(plan),
        os.path.join(out_dir, "FooPythonOps.cpp"): gen_python(plan),
        os.path.join(out_dir, TORCH_VERSION_FILE): gen_torch_version(plan),
        pyi_path: gen_pyi(plan),
        custom_ops_path(pyi_path): gen_custom_py(plan),
    })
    return files


def owned_dirs(out_dir: str) -> list[str]:
    """Folders whose every file codegen writes: a file there it no longer generates is stale."""
    return [os.path.join(out_dir, KERNEL_HEADER_DIR), os.path.join(out_dir, POINTWISE_DIR)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m codegen", description="Generate torch_foo's registrations and bindings.")
    p.add_argument("--manifest", default="yaml/ops.yaml", help="the op manifest (default: %(default)s)")
    p.add_argument("--out", default="generated", help="output folder for the C++ files (default: %(default)s)")
    p.add_argument("--pyi", default="torch_foo/ops.pyi", help="where to write the stub (default: %(default)s)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if any output is stale")
    args = p.parse_args(argv)
    try:
        files = generate(args.manifest, args.out, args.pyi)
    except ManifestError as e:
        print(e, file=sys.stderr)
        return 1
    if args.check:
        committed = committed_torch_version(args.out)
        if committed is not None and committed != torch_version():
            # The build generates into its build directory for this torch (CMakeLists.txt).
            print(f"codegen: {args.out}/ is generated for torch {committed}, not the installed {torch_version()}: "
                  "the manifest is valid; the committed files were not compared", file=sys.stderr)
            return 0
        bad = stale(files, owned_dirs(args.out))
        if bad:
            print("codegen: stale or missing: " + ", ".join(bad) + "; run `python -m codegen`", file=sys.stderr)
            return 1
        return 0
    written, removed = write_if_changed(files, owned_dirs(args.out))
    for path in written:
        print(f"codegen: wrote {path}")
    for path in removed:
        print(f"codegen: removed {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
