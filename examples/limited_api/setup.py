# The limited-API / stable-ABI route: one cp310-abi3 wheel.
#   python setup.py bdist_wheel --py-limited-api=cp310     (or pip wheel --no-build-isolation .)
from setuptools import setup

from torch_foo.utils.cpp_extension import BuildExtension, FooExtension

setup(
    name="foo_stable",
    version="0.1.0",
    packages=["foo_stable"],
    ext_modules=[
        FooExtension(
            "foo_stable._C",
            ["csrc/relu.cpp", "csrc/relu.cu"],
            limited_api=True,  # Py_LIMITED_API, torch's stable ABI only, no libtorch_python
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    options={"bdist_wheel": {"py_limited_api": "cp310"}},
)
