"""Build helpers for C++/CUDA extensions of the foo device (docs/extensions.md).

``cmake_prefix_path`` and ``include_paths()`` mirror ``torch.utils.cmake_prefix_path`` and
``torch.utils.cpp_extension.include_paths()``; ``torch_foo.utils.cpp_extension`` mirrors
``torch.utils.cpp_extension``.
"""

import importlib.util
import os


def _package_dir():
    # Where the built library lives: next to torch_foo._C. In an editable install that is not the
    # source tree's torch_foo/ but the install directory scikit-build-core maps it to.
    return os.path.dirname(importlib.util.find_spec("torch_foo._C").origin)


def library_dir():
    """The directory holding libtorch_foo.so."""
    return _package_dir()


def include_paths():
    """Include directories of torch_foo's public headers (``torch_foo/kernel.h``, ``torch_foo/extension.h``)."""
    return [os.path.join(_package_dir(), "include")]


def __getattr__(name):
    # Computed on first use, as the package directory needs torch_foo._C located.
    if name == "cmake_prefix_path":
        return os.path.join(_package_dir(), "share", "cmake")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
