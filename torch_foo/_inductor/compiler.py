"""Compiles the kernels of one Inductor graph into one shared library and loads it (docs/compile.md).

A graph's generated source (every kernel of the graph, each with a C entry point) is compiled the
way ``torch_foo.utils.cpp_extension`` compiles an extension's ``.cu`` file: as host C++ against
torch_foo's emulation for the sim target (always), and by nvcc for the cuda target when torch_foo
was built with it and nvcc is there (``FOO_USE_CUDA=ON|OFF`` decides instead). The library links
only libtorch_foo and includes no torch header, so a compile costs seconds, not the tens of
seconds of a torch extension; one compile per graph, not per kernel.

The result lands in a disk cache keyed by the source, the compile commands (flags, compilers,
target) and the torch_foo build, so a warm run compiles nothing. Several processes (DDP ranks,
compile workers) may ask for the same library at once: a file lock per key serialises them, and
the library is written to a temporary name and renamed into place, so no process loads a
partial file.
"""

import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time

from torch_foo.utils import cpp_extension as _ext

# What this process did, for tests and the benchmark: libraries compiled / found in the cache,
# and the seconds spent compiling.
stats = {"compiled": 0, "cache_hits": 0, "compile_seconds": 0.0}

_loaded = {}  # cache key -> _Module (a library is loaded once per process)
_lock = threading.Lock()

_ARG_TYPES = {"p": ctypes.c_void_p, "i": ctypes.c_int64, "d": ctypes.c_int32}


def cache_dir():
    """Where compiled kernel libraries live: ``TORCH_FOO_INDUCTOR_CACHE_DIR``, else ``foo/`` in
    Inductor's cache directory (``TORCHINDUCTOR_CACHE_DIR``, by default
    ``/tmp/torchinductor_<user>``)."""
    root = os.environ.get("TORCH_FOO_INDUCTOR_CACHE_DIR")
    if root:
        return root
    from torch._inductor.runtime.cache_dir_utils import cache_dir as inductor_cache_dir

    return os.path.join(inductor_cache_dir(), "foo")


def _with_cuda():
    # The same rule as cpp_extension.load's default (with_cuda=None) for a .cu source.
    return _ext._want_cuda(None, ["kernels.cu"])


def _cxx():
    return os.environ.get("CXX", "c++")


def _host_command(src, out, cuda_objects, cuda_ldflags, with_cuda):
    includes = [f"-I{p}" for p in _ext.include_paths()]
    return ([_cxx(), "-std=c++17", "-O2", "-fPIC", "-shared", "-w"] + _ext._foo_cflags(with_cuda) + includes
            + ["-x", "c++", src, "-x", "none", "-o", out] + cuda_objects + _ext._foo_ldflags() + cuda_ldflags)


def _cuda_command(nvcc, src, out):
    includes = [f"-I{p}" for p in _ext.include_paths()]
    return ([nvcc, "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC", "-w",
             "-DFOO_KERNEL_TARGET_CUDA"] + _ext._cuda_arch_flags() + includes + ["-x", "cu", "-c", src, "-o", out])


def _key(source, with_cuda):
    import torch_foo

    parts = [source, repr(_host_command("SRC", "OUT", ["CUDA_OBJ"] if with_cuda else [], [], with_cuda)),
             getattr(torch_foo, "__version__", "?"), _library_identity()]
    if with_cuda:
        parts += [repr(_cuda_command(_ext.find_nvcc(), "SRC", "OUT"))]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _library_identity():
    # A rebuilt libtorch_foo may change the emulation's ABI: its size and time are in the key.
    lib = os.path.join(_ext.library_paths()[0], "libtorch_foo.so")
    try:
        st = os.stat(lib)
        return f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return "?"


def _run(cmd, what, workdir):
    # not text=True: a compiler's output need not be UTF-8 (nvcc's can hold raw bytes)
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    result.stdout = result.stdout.decode("utf-8", errors="replace")
    if result.returncode != 0:
        raise RuntimeError(f"torch_foo inductor: {what} failed (source kept in {workdir}):\n"
                           f"{' '.join(cmd)}\n{result.stdout[-6000:]}")


def compile_library(source):
    """The path of the shared library built from ``source`` (compiled now unless cached)."""
    with_cuda = _with_cuda()
    key = _key(source, with_cuda)
    root = cache_dir()
    final = os.path.join(root, key[:2], key, "kernels.so")
    if os.path.exists(final):
        stats["cache_hits"] += 1
        return key, final
    os.makedirs(os.path.dirname(final), exist_ok=True)
    with open(os.path.join(os.path.dirname(final), "lock"), "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)  # another process may be compiling this key
        if os.path.exists(final):
            stats["cache_hits"] += 1
            return key, final
        start = time.time()
        workdir = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(final))
        src = os.path.join(workdir, "kernels.cu")
        with open(src, "w") as f:
            f.write(source)
        cuda_objects, cuda_ldflags = [], []
        if with_cuda:
            nvcc = _ext.find_nvcc()
            obj = os.path.join(workdir, "kernels.cuda.o")
            _run(_cuda_command(nvcc, src, obj), "nvcc (cuda target)", workdir)
            cuda_objects = [obj]
            cuda_ldflags = [f"-L{_ext._cuda_lib_dir(nvcc)}", "-lcudart_static", "-ldl", "-lrt", "-lpthread"]
        tmp_lib = os.path.join(workdir, "kernels.so")
        _run(_host_command(src, tmp_lib, cuda_objects, cuda_ldflags, with_cuda), "the host compiler (sim target)",
             workdir)
        shutil.copy(src, os.path.join(os.path.dirname(final), "kernels.cu"))
        os.replace(tmp_lib, final)  # atomic: other processes see no library or the whole one
        shutil.rmtree(workdir, ignore_errors=True)
        stats["compiled"] += 1
        stats["compile_seconds"] += time.time() - start
    return key, final


class KernelError(RuntimeError):
    """A generated foo kernel failed to launch (bad configuration, device error)."""


class _Kernel:
    """One generated kernel's C entry point: ``kernel(device, *pointers_and_sizes)``."""

    __slots__ = ("name", "_fn")

    def __init__(self, library, name, signature):
        fn = getattr(library, name)
        fn.argtypes = [_ARG_TYPES[c] for c in signature]
        fn.restype = ctypes.c_char_p  # the error message, or NULL
        self.name = name
        self._fn = fn

    def __call__(self, *args):
        error = self._fn(*args)
        if error is not None:
            raise KernelError(f"{self.name}: {error.decode(errors='replace')}")


class _Module:
    def __init__(self, path, kernels):
        self.path = path
        self._library = ctypes.CDLL(path)
        for name, signature in kernels.items():
            setattr(self, name, _Kernel(self._library, name, signature))


def load_module(source, kernels):
    """Compiles (or finds in the cache) and loads the library of ``source``.

    ``kernels``: entry point name -> argument kinds (``d`` the device index, ``p`` a pointer,
    ``i`` an int64). Returns an object with one callable attribute per kernel.
    """
    with _lock:
        key, path = compile_library(source)
        module = _loaded.get(key)
        if module is None:
            module = _loaded[key] = _Module(path, kernels)
        return module


def raw_stream(device_index):
    """The current foo stream of a device as Inductor's wrapper names streams (its c10 id)."""
    import torch

    return torch.foo.current_stream(device_index).stream_id


def preamble():
    """The C++ every generated library starts with (helpers of the generated expressions)."""
    from torch_foo._inductor.preamble import PREAMBLE

    return PREAMBLE
