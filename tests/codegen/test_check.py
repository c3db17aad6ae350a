"""--check and write-if-changed."""

from __future__ import annotations

import os

from codegen_helpers import outputs, run_codegen

MANIFEST = "tests/codegen/golden/ops.yaml"


def _args(out: str) -> list[str]:
    return ["--manifest", MANIFEST, "--out", out, "--pyi", os.path.join(out, "ops.pyi")]


def test_check_missing_then_fresh_then_stale(tmp_path):
    out = str(tmp_path)
    r = run_codegen(*_args(out), "--check")
    assert r.returncode == 1
    assert "RegisterFoo.cpp" in r.stderr and "python -m codegen" in r.stderr
    assert not os.listdir(out), "--check must write nothing"

    assert run_codegen(*_args(out)).returncode == 0
    r = run_codegen(*_args(out), "--check")
    assert r.returncode == 0, r.stderr

    path = outputs(out)["FooNativeFunctions.h"]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("// edited by hand\n")
    r = run_codegen(*_args(out), "--check")
    assert r.returncode == 1
    assert "FooNativeFunctions.h" in r.stderr and "RegisterFoo.cpp" not in r.stderr


def test_unchanged_files_keep_their_mtime(tmp_path):
    out = str(tmp_path)
    assert run_codegen(*_args(out)).returncode == 0
    files = outputs(out)
    old = 1_000_000_000
    for path in files.values():
        os.utime(path, (old, old))
    stale = files["RegisterFoo.cpp"]
    with open(stale, "w", encoding="utf-8") as fh:
        fh.write("stale\n")
    os.utime(stale, (old, old))

    r = run_codegen(*_args(out))
    assert r.returncode == 0, r.stderr
    for name, path in files.items():
        if path == stale:
            assert os.stat(path).st_mtime != old, "a stale file must be rewritten"
        else:
            assert os.stat(path).st_mtime == old, f"{name} was rewritten although unchanged"
    assert r.stdout.strip() == f"codegen: wrote {stale}"
