"""foo_stable: one cp310-abi3 binary for every Python >= 3.10 and (through torch's stable ABI and
torch_foo's C ABI) every torch the stable ABI covers."""

import torch
import torch_foo  # noqa: F401  (the foo device and libtorch_foo, before the extension loads)

from foo_stable import _C  # noqa: F401,E402  (registers torch.ops.foo_stable)


def relu(x):
    return torch.ops.foo_stable.relu(x)
