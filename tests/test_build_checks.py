"""What the build catches, and the layering it enforces (docs/decisions.md, "A build that catches
mistakes"):
- a kernel whose definition drifts from its declaration fails the link of a shared library built
  with cmake/FooChecks.cmake's foo_complete_link (as libtorch_foo is), naming the symbol; a tiny
  CMake project proves it in seconds;
- the layers include only what docs/decisions.md's table allows (a scan of the sources), and in
  the real build the torch-free layers compile without torch's include directories.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import another_torch_minor

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "csrc"


def _tool(name: str) -> str | None:
    """A build tool from this venv (./run installs cmake and ninja there), else from PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


CALLER = """
#include "kernels/core/dispatch.h"

FOO_DECLARE_KERNEL(void, scale, (foo::kernels::Stream, float*, long, float))

void run_scale(float* data) { FOO_CALL_KERNEL(scale, nullptr, data, 4, 2.0f); }
"""

# The kernel's definition, as a .cu file's launcher would be after its parameter type drifted.
DEFINITION = """
namespace foo::kernels::sim {{
void scale(void*, {pointer} data, long n, float a) {{
  for (long i = 0; i < n; ++i) data[i] *= a;
}}
}}
"""

PROJECT = """
cmake_minimum_required(VERSION 3.25)
project(complete_link_check LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
include("{root}/cmake/FooChecks.cmake")
add_library(kernels SHARED caller.cpp definition.cpp)
target_include_directories(kernels PRIVATE "{root}/csrc")
foo_complete_link(kernels)
"""


def _build(src: Path, pointer: str) -> subprocess.CompletedProcess:
    (src / "definition.cpp").write_text(DEFINITION.format(pointer=pointer))
    build = src / "build"
    cmake, ninja = _tool("cmake"), _tool("ninja")
    configure = subprocess.run([cmake, "-S", str(src), "-B", str(build), "-G", "Ninja",
                                f"-DCMAKE_MAKE_PROGRAM={ninja}"], capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    return subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(_tool("cmake") is None or _tool("ninja") is None, reason="needs cmake and ninja")
def test_a_drifted_kernel_fails_the_link_naming_the_symbol(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(PROJECT.format(root=ROOT.as_posix()))
    (tmp_path / "caller.cpp").write_text(CALLER)

    drifted = _build(tmp_path, "double*")
    assert drifted.returncode != 0, "a library with an undefined kernel linked"
    log = drifted.stdout + drifted.stderr
    assert "undefined reference" in log and "foo::kernels::sim::scale(void*, float*, long, float)" in log, log[-3000:]

    fixed = _build(tmp_path, "float*")  # the same project links once the definition matches
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_libtorch_foo_links_completely():
    text = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"^foo_complete_link\(torch_foo\)", text, re.M), "libtorch_foo must link with foo_complete_link"


# --- Layering -------------------------------------------------------------------------------

_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
_TORCH = ("ATen/", "c10/", "torch/", "pybind11/", "Python.h", "caffe2/")


def _includes(folder: Path, pattern: str):
    for path in sorted(folder.glob(pattern)):
        if "tests" in path.relative_to(CSRC).parts:
            continue
        for kind, name in _INCLUDE.findall(path.read_text()):
            yield path.relative_to(ROOT).as_posix(), kind, name


# folder -> (what its quoted includes may start with, whether torch headers are allowed)
LAYERS = {
    "sim": (("sim/",), False),
    # "": its own files, by bare name. kernels/core/launch_trace.h, kernels/core/launch_blocking.h: the launch
    # hooks the kernels' launch path calls and the driver defines (torch-free; kernels include no
    # driver).
    "runtime/driver": (("sim/", "runtime/driver/", "", "kernels/core/launch_trace.h", "kernels/core/launch_blocking.h"), False),
    # The shared core of the kernels includes no op family: an op builds on it, never the reverse.
    "kernels/core": (("kernels/core/", "sim/"), False),
    "kernels/ops": (("kernels/core/", "kernels/ops/", "sim/"), False),
}


@pytest.mark.parametrize("layer", list(LAYERS))
def test_layer_includes_only_what_it_may(layer):
    allowed, torch_ok = LAYERS[layer]
    bad = []
    for path, kind, name in _includes(CSRC / layer, "*.*"):
        if kind == '"' and not any(name.startswith(a) if a else "/" not in name for a in allowed):
            bad.append(f"{path}: #include \"{name}\"")
        if kind == "<" and not torch_ok and name.startswith(_TORCH):
            bad.append(f"{path}: #include <{name}>")
    assert bad == [], f"csrc/{layer} may include only {allowed} and no torch header:\n" + "\n".join(bad)


def test_kernel_op_families_include_no_other_family():
    """An op family's files (kernels/ops/<family>*.{h,cu}) build on kernels/core/ only: what two
    families share belongs in the core, so a family can be read, moved or deleted alone."""
    bad = []
    for path, _, name in _includes(CSRC / "kernels" / "ops", "*.*"):
        if name.startswith("kernels/ops/"):
            family = Path(path).name.split(".")[0]
            if not Path(name).name.startswith(family):
                bad.append(f"{path}: #include \"{name}\"")
    assert bad == [], "move what op families share into csrc/kernels/core/:\n" + "\n".join(bad)


# aten folder -> the aten folders it must not include: the core serves the op files and the glue
# (fallback, autocast) and knows neither; the op files do not reach into the glue.
ATEN_LAYERS = {"core": ("aten/ops/", "aten/glue/"), "glue": ("aten/ops/",), "ops": ("aten/glue/",)}


@pytest.mark.parametrize("folder", list(ATEN_LAYERS))
def test_aten_folder_includes_only_what_it_may(folder):
    bad = [f"{path}: #include \"{name}\"" for path, kind, name in _includes(CSRC / "aten" / folder, "*.*")
           if kind == '"' and name.startswith(ATEN_LAYERS[folder])]
    assert bad == [], f"csrc/aten/{folder} may not include {ATEN_LAYERS[folder]}:\n" + "\n".join(bad)


def test_op_implementations_include_their_kernel_headers_only():
    """The header with every declaration changes with every manifest edit; a file including it
    would recompile each time (README, "The developer loop")."""
    bad = [path for path, _, name in _includes(CSRC / "aten", "**/*.*") if name == "FooNativeFunctions.h"]
    assert bad == [], "include generated/native/<kernel>.h instead of FooNativeFunctions.h in: " + ", ".join(bad)


def _build_ninja() -> str | None:
    found = sorted(ROOT.glob("build/*/build.ninja"))
    return found[0].read_text() if found else None


@pytest.mark.parametrize("target", ["foo_device", "foo_kernels_sim", "foo_kernels_cuda"])
def test_torch_free_layers_compile_without_torch_includes(target):
    ninja = _build_ninja()
    if ninja is None:
        pytest.skip("no build directory (./run build makes one)")
    # Each object's build statement is followed by its indented variables (FLAGS, INCLUDES, ...).
    blocks = re.findall(rf"^build CMakeFiles/{target}\.dir/\S+\.o: .*\n((?:  .*\n)+)", ninja, re.M)
    if not blocks:
        pytest.skip(f"{target} is not part of this build")
    for block in blocks:
        assert "torch/include" not in block and "cmake_pch" not in block, block


# --- Another torch version --------------------------------------------------------------------

_COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "build", "__pycache__", ".pytest_cache", "*.so", "tests")


@pytest.mark.skipif(_tool("cmake") is None or _tool("ninja") is None, reason="needs cmake and ninja")
def test_another_torch_generates_into_the_build_directory(tmp_path):
    """generated/ is committed for the torch of generated/TORCH_VERSION; configuring against
    another (here: the committed files claim another supported one) must generate into the build directory
    and leave the committed files alone. Configure and codegen only: seconds, no compile."""
    src, other = tmp_path / "src", another_torch_minor()
    shutil.copytree(ROOT, src, ignore=_COPY_IGNORE)
    claim = f"# committed for another torch\n{other}\n"
    (src / "generated" / "TORCH_VERSION").write_text(claim)
    committed = {p: p.read_bytes() for p in [*(src / "generated").rglob("*"), src / "torch_foo" / "ops.pyi"]
                 if p.is_file()}
    build = src / "build"
    cmake = _tool("cmake")
    configure = subprocess.run(
        [cmake, "-S", str(src), "-B", str(build), "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
         "-DFOO_USE_CUDA=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
        capture_output=True, text=True, timeout=600)
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    assert f"generated/ is for torch {other}" in configure.stdout, configure.stdout[-3000:]
    gen = subprocess.run([cmake, "--build", str(build), "--target", "foo_codegen"],
                         capture_output=True, text=True, timeout=600)
    assert gen.returncode == 0, gen.stdout[-3000:] + gen.stderr[-3000:]

    assert (build / "generated" / "RegisterFoo_0.cpp").is_file()
    assert (build / "generated" / "native" / "mm_out.h").is_file()
    assert (build / "generated" / "pointwise" / "add_out.cu").is_file()
    assert (build / "generated" / "ops.pyi").is_file()
    assert (build / "generated" / "TORCH_VERSION").read_text() != claim
    now = {p: p.read_bytes() for p in committed}
    assert now == committed, "the committed generated files changed"
