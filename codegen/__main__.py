"""python -m codegen [--manifest yaml/ops.yaml] [--out generated] [--pyi torch_foo/ops.pyi] [--check]"""

from __future__ import annotations

import argparse
import os
import sys

from .aten import load_aten
from .gen_custom import gen_custom
from .gen_header import gen_header
from .gen_pyi import gen_pyi
from .gen_pointwise import gen_pointwise
from .gen_python import gen_python
from .gen_register import gen_register
from .gen_structured_header import gen_structured_header
from .manifest import ManifestError, parse_manifest
from .output import stale, write_if_changed
from .resolve import resolve


def display_path(path: str) -> str:
    """The manifest path as stamped and reported: relative to the working directory when inside it."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


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
    files = {
        os.path.join(out_dir, "FooNativeFunctions.h"): gen_header(plan),
        os.path.join(out_dir, "FooStructured.h"): gen_structured_header(plan),
        os.path.join(out_dir, "RegisterFoo.cpp"): gen_register(plan),
        os.path.join(out_dir, "FooCustomOps.cpp"): gen_custom(plan),
        os.path.join(out_dir, "FooPythonOps.cpp"): gen_python(plan),
        pyi_path: gen_pyi(plan),
    }
    files.update({os.path.join(out_dir, path): text for path, text in gen_pointwise(plan).items()})
    return files


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
    owned = [os.path.join(args.out, POINTWISE_DIR)]
    if args.check:
        bad = stale(files, owned)
        if bad:
            print("codegen: stale or missing: " + ", ".join(bad) + "; run `python -m codegen`", file=sys.stderr)
            return 1
        return 0
    for path in write_if_changed(files, owned):
        print(f"codegen: {'wrote' if path in files else 'deleted'} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
