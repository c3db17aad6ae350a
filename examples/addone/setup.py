# The setuptools route, as with torch.utils.cpp_extension.CUDAExtension: only the import differs.
#   python setup.py build_ext --inplace      (or pip install --no-build-isolation .)
from setuptools import setup

from torch_foo.utils.cpp_extension import BuildExtension, FooExtension

setup(
    name="addone",
    ext_modules=[FooExtension("addone", ["addone.cpp", "addone.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
