"""torch_foo: an out-of-tree PyTorch backend whose device is ``foo``.

Importing this package makes ``torch.device("foo")`` usable: it renames
PrivateUse1, loads the C++ library (ops, device guard, hooks, allocator register
themselves at load) and registers ``torch.foo``. Nothing here selects the driver
or touches a device; that happens on first use (lazy init in the C++ runtime).
"""


# Defined before anything else, and before `import torch`: when torch_foo is
# imported first, `import torch` below runs torch's entry-point autoload, which
# loads "torch_foo:_autoload" from this half-initialised module. The name must
# already exist then, or the autoload fails with an AttributeError.
def _autoload():
    """Entry point of the ``torch.backends`` group, called at the end of ``import torch``.

    The work is done by importing this package (which the entry-point loader has
    already done by the time this runs), so it does nothing itself.
    """


import sys  # noqa: E402

import torch  # noqa: E402  (after _autoload on purpose, see above)
import torch.utils.backend_registration as _backend_registration  # noqa: E402

# Rename in Python too, not only in C++ at library load: the Python side keeps its
# own copy of the name (used by nn modules) and patches DeviceType/ProfilerActivity.
# Renaming again to the same name is accepted by c10, so the guard only avoids
# redoing the Python-side patching.
if _backend_registration._privateuse1_backend_name != "foo":
    torch.utils.rename_privateuse1_backend("foo")

from torch_foo import _C  # noqa: E402  (library load registers ops/guard/hooks)
from torch_foo import device  # noqa: E402
from torch_foo import ops  # noqa: E402
from torch_foo import fake_ops  # noqa: E402,F401  (hand-written fake impls of custom ops)
from torch_foo import _custom_ops  # noqa: E402,F401  (generated: fake impls and autograd of the custom ops)
from torch_foo import distributed  # noqa: E402,F401  (registers the fooccl c10d backend)
from torch_foo import _autograd_exit  # noqa: E402,F401  (exit after a foo backward never aborts)
from torch_foo import _call_counts  # noqa: E402

_call_counts.install()  # only with TORCH_FOO_CALL_COUNTS_DIR set (the test suite's coverage check)

if getattr(torch, "foo", None) is not device:
    torch._register_device_module("foo", device)
# `import torch.foo.memory` / `from torch.foo.memory import _snapshot`, as for torch.cuda.memory
# (torch._register_device_module puts only torch.foo itself in sys.modules).
sys.modules.setdefault("torch.foo.memory", device.memory)

# torch.compile: Dynamo's device interface and Inductor's refusal, once those are imported.
from torch_foo import _compile  # noqa: E402
from torch_foo._compile import InductorUnsupportedError  # noqa: E402,F401

_compile.install()

# generate_methods_for_privateuse1_backend raises if the methods exist already
# (e.g. after importlib.reload), so add them only once.
if not hasattr(torch.Tensor, "is_foo"):
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=True, for_module=True, for_storage=True
    )


def _get_version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch_foo")
    except PackageNotFoundError:  # running from a source tree without install
        return "0.0.0+local"


__version__ = _get_version()

_POLICIES = ("warn", "silent", "error")


def driver():
    """Which driver backs the device: ``"sim"`` or ``"cuda"`` (selects it if not yet selected)."""
    return _C._driver()


def fallback_report():
    """Ops that ran on the CPU through the fallback so far, as ``{op: count}`` (a copy)."""
    return dict(_C._fallback_report())


def reset_fallback_report():
    """Forget the fallback counts gathered so far."""
    _C._reset_fallback_report()


def set_fallback_policy(policy):
    """Set what happens when an op falls back to the CPU: ``"warn"`` (once per op), ``"silent"``, ``"error"``."""
    if policy not in _POLICIES:
        raise ValueError(f"fallback policy must be one of {_POLICIES}, got {policy!r}")
    _C._set_fallback_policy(policy)


def get_fallback_policy():
    """The current CPU-fallback policy."""
    return _C._get_fallback_policy()


def set_sim_only_paths(enabled):
    """Let the sim device take its sim-only fast paths (the default), or launch exactly the kernels
    cuda launches (``False``; the environment's ``TORCH_FOO_SIM_ONLY_PATHS=0`` does it for a
    process). Each fast path computes the same bits as cuda's kernel; turning them off is how cuda's
    kernels are tested on sim. No effect on the cuda driver, which has none."""
    _C._set_sim_only_paths(bool(enabled))


def sim_only_paths():
    """Whether the sim device takes its sim-only fast paths (``set_sim_only_paths``)."""
    return _C._sim_only_paths()


__all__ = [
    "InductorUnsupportedError",
    "device",
    "driver",
    "fallback_report",
    "get_fallback_policy",
    "ops",
    "reset_fallback_report",
    "set_fallback_policy",
    "set_sim_only_paths",
    "sim_only_paths",
]
