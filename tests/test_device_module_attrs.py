"""What torch's own Python code reads from ``torch.foo`` by name, as it reads ``torch.cuda``.

PyTorch looks device modules up with ``getattr(torch, device_type)`` and then reads attributes by
name, often through ``getattr(mod, name, default)`` or ``hasattr``: a missing attribute changes
behaviour silently instead of raising. The worst case was ``_initialized``: without it
``torch.utils.checkpoint`` neither stashed nor restored foo's RNG state, so a checkpointed dropout
recomputed with another mask and the gradients were wrong with no error.
"""

import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# (attribute, where torch's Python reads it from torch.<device type>) — the 2.13 use sites that
# matter for a foo user; each is exercised below or in the test named.
USE_SITES = [
    ("_initialized", "utils/checkpoint.py: stash/restore device RNG state only when true"),
    ("get_rng_state", "utils/checkpoint.py get_device_states, random.py fork_rng"),
    ("set_rng_state", "utils/checkpoint.py set_device_states, random.py fork_rng"),
    ("device", "utils/checkpoint.py, random.py fork_rng: `with mod.device(i)`"),
    ("device_count", "random.py fork_rng, serialization.py, distributed"),
    ("is_available", "serialization.py, _utils.py _get_available_device_type"),
    ("current_device", "distributed (FSDP, DTensor), nn.parallel"),
    ("set_device", "distributed (init_device_mesh, FSDP)"),
    ("current_stream", "distributed (FSDP, DDP), autograd engine hooks"),
    ("stream", "distributed (FSDP), utils.data pin memory"),
    ("Stream", "distributed (FSDP)"),
    ("Event", "distributed (FSDP)"),
    ("synchronize", "autograd/profiler.py, distributed"),
    ("memory_stats", "distributed (FSDP memory tracker)"),
    ("memory_allocated", "distributed memory tracking"),
    ("memory_reserved", "distributed memory tracking"),
    ("memory_summary", "distributed"),
    ("empty_cache", "distributed"),
    ("get_amp_supported_dtype", "amp/autocast_mode.py: which dtypes autocast may take (not cuda)"),
    ("is_initialized", "distributed/_tools"),
    ("default_generators", "_prims/rng_prims.py graph-safe RNG"),
    ("_get_generator", "_functorch/_aot_autograd/utils.py get_default_generator"),
]
# autocast asks these of a device module other than cuda's (torch.cuda answers elsewhere).
ASKED_OF_OTHER_DEVICES_ONLY = {"get_amp_supported_dtype"}


@pytest.mark.parametrize("name,site", USE_SITES, ids=[n for n, _ in USE_SITES])
def test_device_module_has_what_torch_reads(name, site):
    torch.ones(1, device="foo")  # the driver is up, as in every use site
    assert hasattr(torch.foo, name), f"torch.foo.{name} is missing; torch reads it in {site}"
    if name not in ASKED_OF_OTHER_DEVICES_ONLY:
        assert hasattr(torch.cuda, name), f"torch.cuda.{name} is gone in this torch: update the list"


def _block(lin, x):
    return F.dropout(torch.relu(lin(x)), p=0.5, training=True) * 3


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("device", ["foo:0", "foo:1"])
def test_checkpointed_dropout_has_uncheckpointed_gradients(device, use_reentrant):
    if torch.device(device).index >= torch.foo.device_count():
        pytest.skip("needs 2 foo devices")
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 64).to(device)
    x0 = torch.randn(32, 64).to(device)

    def grads(checkpointed):
        lin.zero_grad()
        x = x0.clone().requires_grad_()
        torch.manual_seed(1)  # seeds foo too, as it seeds cuda
        y = checkpoint(_block, lin, x, use_reentrant=use_reentrant) if checkpointed else _block(lin, x)
        # Draw between forward and backward, as the rest of a model would: the recomputation
        # must still see the forward's mask.
        torch.rand(100, device=device)
        y.square().sum().backward()
        return [t.detach().cpu() for t in (y, x.grad, lin.weight.grad, lin.bias.grad)]

    plain, ckpt = grads(False), grads(True)
    assert plain[0].device.type == "cpu" and plain[0].dtype == torch.float32
    assert (plain[0] == 0).any() and (plain[0] != 0).any(), "dropout dropped nothing or everything"
    for a, b in zip(plain, ckpt):
        assert torch.equal(a, b)
    # checkpoint restored foo's generator and then put the forward's successor state back.
    torch.manual_seed(1)
    _block(lin, x0)
    torch.rand(100, device=device)
    after_plain = torch.foo.get_rng_state(device)
    torch.manual_seed(1)
    y = checkpoint(_block, lin, x0.clone().requires_grad_(), use_reentrant=use_reentrant)
    torch.rand(100, device=device)
    y.sum().backward()
    assert torch.equal(torch.foo.get_rng_state(device), after_plain)


def test_initialized_follows_the_driver():
    """False in a fresh process until foo is used (checkpoint must not start the driver itself)."""
    code = (
        "import torch, torch_foo\n"
        "print(torch.foo._initialized)\n"
        "torch.ones(1, device='foo')\n"
        "print(torch.foo._initialized)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_get_generator_is_the_default_generator(two_devices):
    try:  # AOT Autograd's graph-safe RNG asks torch.<device type>._get_generator through it (2.13)
        from torch._functorch._aot_autograd.utils import get_default_generator
    except ImportError:  # torch 2.11 has no such helper (its graph-safe RNG is CUDA's only): ask foo directly
        get_default_generator = torch.foo._get_generator

    for i in range(2):
        gen = get_default_generator(torch.device("foo", i))
        assert gen.device == torch.device("foo", i)
        # Seeding through `gen` reseeds what the op without a generator draws from.
        torch.foo.manual_seed_all(7)
        first = torch.rand(4, device=f"foo:{i}", generator=gen).cpu()
        gen.manual_seed(7)
        assert torch.equal(torch.rand(4, device=f"foo:{i}").cpu(), first)
