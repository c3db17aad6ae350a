"""C++/CUDA extensions of foo (docs/extensions.md): examples/ built and run on the sim device.

Each example compiles once per session, into one build directory shared by the tests; the .cu
sources compile for the sim target, and the setuptools example (addone) for the cuda target too
when nvcc is present, so that route's nvcc build and link are proven without a GPU.

The examples built by a separate process (setuptools, pip) start building when the session does
(`start_early`, called by conftest.py), one after the other, niced, beside the tests before these;
their fixtures wait for them.
"""

import os
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

import torch_foo
import torch_foo.utils
from conftest import niced
from torch_foo.utils import cpp_extension

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def _build_root(config) -> pathlib.Path:
    # TORCH_FOO_TEST_EXTENSIONS_DIR keeps the builds between runs (incremental), for development.
    kept = os.environ.get("TORCH_FOO_TEST_EXTENSIONS_DIR")
    if kept:
        os.makedirs(kept, exist_ok=True)
        return pathlib.Path(kept)
    return config._tmp_path_factory.mktemp("foo_extensions")


@pytest.fixture(scope="module")
def build_root(request):
    if "root" not in _early:
        _early["root"] = _build_root(request.config)
    return _early["root"]


def _run(cmd, nice=0, **kwargs):
    result = subprocess.run(niced(cmd, nice), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{result.stdout[-6000:]}"
    return result.stdout


# fixture name -> the function that builds its example out of process, given the build root.
_PROCESS_BUILDS = {}
_early = {}  # "root": the build root; fixture name -> the Future of its build


def _process_build(fixture_name):
    def register(build):
        _PROCESS_BUILDS[fixture_name] = build
        return build
    return register


def start_early(config, items) -> None:
    """Starts the out-of-process builds the collected tests need, in one background thread."""
    wanted = [name for name in _PROCESS_BUILDS if any(name in item.fixturenames for item in items)]
    if not wanted:
        return
    _early["root"] = root = _build_root(config)
    pool = ThreadPoolExecutor(max_workers=1)
    config.add_cleanup(lambda: pool.shutdown(wait=True, cancel_futures=True))
    for name in wanted:
        _early[name] = pool.submit(_PROCESS_BUILDS[name], root, 10)


def _wait_for_build(name, root):
    """The out-of-process build of fixture `name`: the early one, else one run now."""
    future = _early.pop(name, None)
    return future.result() if future is not None else _PROCESS_BUILDS[name](root, 0)


def test_headers_and_cmake_package_are_installed():
    (include,) = torch_foo.utils.include_paths()
    for header in ("torch_foo/kernel.h", "torch_foo/extension.h", "kernels/core/kernel.h", "kernels/core/dispatch.h",
                   "kernels/core/elementwise.cuh", "kernels/ops/reduce.h", "sim/emulation.h", "runtime/stream.h",
                   "runtime/allocator.h", "aten/core/elementwise.h", "aten/core/kernel_dtype.h", "kernels/core/math.cuh",
                   "kernels/core/formulas.cuh", "kernels/core/block_reduce.h"):
        assert os.path.isfile(os.path.join(include, header)), header
    config = os.path.join(torch_foo.utils.cmake_prefix_path, "TorchFoo", "TorchFooConfig.cmake")
    with open(config) as f:
        text = f.read()
    assert "TorchFoo::torch_foo" in text and "@FOO_" not in text  # configured
    assert os.path.isfile(os.path.join(os.path.dirname(config), "TorchFooKernels.cmake"))
    assert os.path.isfile(os.path.join(torch_foo.utils.library_dir(), "libtorch_foo.so"))


@_process_build("addone")
def _build_addone(build_root, nice):
    lib = build_root / "addone_lib"
    cuda = "ON" if cpp_extension.find_nvcc() else "OFF"  # prove the nvcc route wherever nvcc is
    env = dict(os.environ, FOO_USE_CUDA=cuda)
    if "TORCH_CUDA_ARCH_LIST" not in env:
        env.setdefault("FOO_CUDA_ARCHITECTURES", "90")  # one architecture proves the route at half the nvcc time
    _run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(lib), "--build-temp",
          str(build_root / "addone_tmp")], nice, cwd=os.path.join(EXAMPLES, "addone"), env=env)
    return lib


@pytest.fixture(scope="module")
def addone(build_root):
    """examples/addone through setup.py (FooExtension + BuildExtension), pybind11."""
    lib = _wait_for_build("addone", build_root)
    sys.path.insert(0, str(lib))
    try:
        import addone
    finally:
        sys.path.remove(str(lib))
    return addone


def test_addone_setuptools(addone, build_root):
    x = torch.randn(1000)
    y = addone.add_one(x.to("foo:1"))
    assert y.device == torch.device("foo:1") and y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), x + 1, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="add_one: expected a foo tensor"):
        addone.add_one(x)
    with pytest.raises(RuntimeError, match="add_one: expected float32"):
        addone.add_one(x.double().to("foo"))
    # With nvcc, the cuda target was compiled by nvcc and linked in too (it cannot run here).
    cuda_objects = [p for p in (build_root / "addone_tmp").rglob("addone.cu.o") if p.parent.name == "cuda"]
    assert bool(cuda_objects) == bool(cpp_extension.find_nvcc())


@pytest.fixture(scope="module")
def d_sigmoid(build_root):
    """examples/d_sigmoid: load() just in time, pybind11, autograd."""
    sys.path.insert(0, os.path.join(EXAMPLES, "d_sigmoid"))
    try:
        import d_sigmoid
    finally:
        sys.path.pop(0)
    d_sigmoid.build(build_directory=str(build_root / "d_sigmoid"), with_cuda=False)
    return d_sigmoid


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_d_sigmoid_forward_backward(d_sigmoid, dtype):
    x = torch.randn(2, 300, dtype=dtype)
    xf = x.to("foo").requires_grad_()
    y = d_sigmoid.d_sigmoid(xf)
    grad = torch.randn_like(x)
    y.backward(grad.to("foo"))
    xc = x.clone().requires_grad_()
    opmath = torch.float32 if dtype == torch.bfloat16 else dtype  # as the kernel computes
    expected = torch.sigmoid(xc.to(opmath)).to(dtype)
    expected.backward(grad)
    assert y.device.type == "foo" and y.dtype == dtype and xf.grad.dtype == dtype
    torch.testing.assert_close(y.detach().cpu(), expected.detach())
    torch.testing.assert_close(xf.grad.cpu(), xc.grad)
    with pytest.raises(ValueError, match="d_sigmoid.forward: foo has no kernel for dtype int64"):
        d_sigmoid.build().forward(torch.ones(3, dtype=torch.long, device="foo"))  # pybind11: ValueError


def test_load_is_cached_and_incremental(d_sigmoid, build_root):
    build = build_root / "d_sigmoid"
    objects = {p: p.stat().st_mtime_ns for p in build.glob("*.o")}
    assert len(objects) == 2  # the host .cpp and the sim wrapper of the .cu
    ninja = subprocess.run(["ninja", "-C", str(build), "-n"], stdout=subprocess.PIPE, text=True).stdout
    assert "no work to do" in ninja
    assert {p: p.stat().st_mtime_ns for p in build.glob("*.o")} == objects


def test_compile_error_names_the_users_file_and_line(build_root, tmp_path):
    bad = tmp_path / "bad_kernel.cu"
    bad.write_text("#include <torch_foo/kernel.h>\n\n__global__ void k(float* x) { x[0] = undeclared; }\n")
    with pytest.raises(RuntimeError, match=r"bad_kernel\.cu:3:"):
        cpp_extension.load("bad_kernel", [str(bad)], build_directory=str(build_root / "bad"), with_cuda=False,
                           is_python_module=False)


@pytest.fixture(scope="module")
def layer_norm(build_root):
    """examples/layer_norm: load() of a TORCH_LIBRARY op (no pybind11)."""
    src = os.path.join(EXAMPLES, "layer_norm")
    cpp_extension.load("layer_norm", [os.path.join(src, "layer_norm.cpp"), os.path.join(src, "layer_norm.cu")],
                       build_directory=str(build_root / "layer_norm"), with_cuda=False, is_python_module=False)
    return torch.ops.foo_ext.layer_norm_rows


@pytest.mark.parametrize("shape", [(3, 5, 300), (4, 33), (1, 1)])
def test_fused_layer_norm_matches_composite_ops(layer_norm, shape):
    x = torch.randn(shape) * 3 + 1
    w, b = torch.randn(shape[-1]), torch.randn(shape[-1])
    y = layer_norm(x.to("foo"), w.to("foo"), b.to("foo"), 1e-5)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    expected = (x - mean) / torch.sqrt(var + 1e-5) * w + b
    assert y.device.type == "foo" and y.dtype == torch.float32 and y.shape == x.shape
    torch.testing.assert_close(y.cpu(), expected, rtol=1e-5, atol=1e-5)


def test_fused_layer_norm_errors(layer_norm):
    w = torch.ones(20000, device="foo")
    with pytest.raises(RuntimeError, match="layer_norm::layer_norm_rows: invalid launch"):
        layer_norm(torch.ones(2, 20000, device="foo"), w, w, 1e-5)  # the row exceeds shared memory
    with pytest.raises(RuntimeError, match="expected float32"):
        layer_norm(torch.ones(2, 4, device="foo", dtype=torch.float64), w[:4], w[:4], 1e-5)


@_process_build("scaled_add")
def _build_package(build_root, nice):
    target = build_root / "package"
    env = dict(os.environ, FOO_USE_CUDA="OFF", CMAKE_BUILD_PARALLEL_LEVEL="2")
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
          "--target", str(target), os.path.join(EXAMPLES, "package")], nice, env=env)
    return target


@pytest.fixture(scope="module")
def scaled_add(build_root):
    """examples/package: a pyproject.toml package (scikit-build-core, find_package(TorchFoo))."""
    target = _wait_for_build("scaled_add", build_root)
    sys.path.insert(0, str(target))
    try:
        import foo_scaled_add
    finally:
        sys.path.remove(str(target))
    return foo_scaled_add.scaled_add


def test_package_elementwise_broadcast_and_promotion(scaled_add):
    a = torch.randn(4, 1, 5)
    b = torch.randint(-5, 5, (3, 1), dtype=torch.int32)
    out = scaled_add(a.to("foo"), b.to("foo"), 0.5)
    assert out.device.type == "foo" and out.dtype == torch.float32 and out.shape == (4, 3, 5)
    torch.testing.assert_close(out.cpu(), a + 0.5 * b)
    ints = scaled_add(b.to("foo"), b.to("foo"), 2)
    assert ints.dtype == torch.int32
    torch.testing.assert_close(ints.cpu(), b + 2 * b)
    halves = scaled_add(a.half().to("foo"), a.half().to("foo"), 0.5)  # computes in float, cast<half_t>
    assert halves.dtype == torch.float16
    torch.testing.assert_close(halves.cpu(), (a.half().float() * 1.5).half())
    with pytest.raises(NotImplementedError, match=r"\"foo_pkg::scaled_add\" not implemented for 'ComplexFloat'"):
        scaled_add(a.to(torch.complex64).to("foo"), a.to(torch.complex64).to("foo"), 1)


@_process_build("foo_stable")
def _build_limited_api(build_root, nice):
    out = build_root / "limited_api"
    out.mkdir(exist_ok=True)
    _run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(out), "build", "--build-base",
          str(out / "build"), "bdist_wheel", "--py-limited-api=cp310", "-d", str(out / "dist")], nice,
         cwd=os.path.join(EXAMPLES, "limited_api"), env=dict(os.environ, FOO_USE_CUDA="OFF"))
    return out


@pytest.fixture(scope="module")
def foo_stable(build_root):
    """examples/limited_api: one cp310-abi3 wheel through torch's stable ABI and torch_foo's C ABI."""
    out = _wait_for_build("foo_stable", build_root)
    wheels = sorted((out / "dist").glob("foo_stable-*.whl"))
    assert wheels and wheels[-1].name.endswith("-cp310-abi3-linux_x86_64.whl"), wheels
    site = out / "site"
    import zipfile
    with zipfile.ZipFile(wheels[-1]) as wheel:
        wheel.extractall(site)
    sys.path.insert(0, str(site))
    try:
        import foo_stable
    finally:
        sys.path.remove(str(site))
    return foo_stable


def test_limited_api_wheel_runs_and_uses_no_torch_cpp_symbol(foo_stable):
    x = torch.randn(1000)
    y = foo_stable.relu(x.to("foo:1"))
    assert y.device == torch.device("foo:1") and y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), x.clamp_min(0), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="foo_stable::relu: expected float32"):
        foo_stable.relu(torch.ones(3, dtype=torch.float64, device="foo"))
    # The evidence behind docs/extensions.md: no C++ symbol of torch (c10::, at::, torch::), only
    # the stable C shim; of Python only the Limited API; of torch_foo its C ABI and the torch-free
    # emulation entry points.
    (library,) = (pathlib.Path(foo_stable.__file__).parent).glob("_C.abi3.so")
    undefined = subprocess.run(f"nm -D --undefined-only {library} | c++filt", shell=True, check=True,
                               stdout=subprocess.PIPE, text=True).stdout
    symbols = [line.split(None, 1)[1] for line in undefined.splitlines() if line.strip()]
    assert not [s for s in symbols if s.startswith(("c10::", "at::", "torch::"))]
    assert {s for s in symbols if s.startswith(("Py", "_Py"))} <= {"PyModule_Create2"}
    assert "torch_foo_native_stream" in symbols and "aoti_torch_get_current_stream" in symbols
