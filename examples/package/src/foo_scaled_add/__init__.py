"""foo_scaled_add: a + alpha * b on the foo device, from a separately installed package."""

import os

import torch
import torch_foo  # noqa: F401  (the foo device, and libtorch_foo loaded before the ops library)

torch.ops.load_library(os.path.join(os.path.dirname(__file__), "libfoo_scaled_add_ops.so"))


def scaled_add(a, b, alpha=1.0):
    return torch.ops.foo_pkg.scaled_add(a, b, alpha)
