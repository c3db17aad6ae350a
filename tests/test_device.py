"""torch.foo device management: count, current device (per thread), properties, generated methods."""

import os
import threading

import pytest
import torch

import torch_foo
from conftest import run_python


def test_driver_and_count():
    assert torch_foo.driver() in ("sim", "cuda")
    assert torch.foo.is_available()
    torch.empty(1, device="foo")
    assert torch.foo.is_initialized()
    if torch_foo.driver() == "sim" and "TORCH_FOO_SIM_DEVICES" not in os.environ:
        assert torch.foo.device_count() == 2


def test_sim_device_count_from_env():
    r = run_python(
        "import torch, torch_foo; print(torch.foo.device_count())",
        env={"TORCH_FOO_DRIVER": "sim", "TORCH_FOO_SIM_DEVICES": "3"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "3"


def test_set_and_current_device(two_devices):
    assert torch.foo.current_device() == 0
    torch.foo.set_device(1)
    assert torch.foo.current_device() == 1
    assert torch.empty(2, device="foo").device == torch.device("foo:1")
    torch.foo.set_device("foo:0")
    assert torch.foo.current_device() == 0
    torch.foo.set_device(torch.device("foo", 1))
    assert torch.foo.current_device() == 1
    with pytest.raises(RuntimeError):
        torch.foo.set_device(torch.foo.device_count())
    with pytest.raises(ValueError):
        torch.foo.set_device("cpu")


@pytest.mark.parametrize("arg", [1, "foo:1", torch.device("foo", 1)])
def test_device_context(two_devices, arg):
    with torch.foo.device(arg):
        assert torch.foo.current_device() == 1
        x = torch.empty(3, device="foo")
        assert x.device == torch.device("foo:1")
    assert torch.foo.current_device() == 0


def test_device_context_none_and_device_of(two_devices):
    with torch.foo.device(None):
        assert torch.foo.current_device() == 0
    x = torch.empty(1, device="foo:1")
    with torch.foo.device_of(x):
        assert torch.foo.current_device() == 1
    with torch.foo.device_of(torch.empty(1)):  # CPU tensor: no change
        assert torch.foo.current_device() == 0
    assert torch.foo.current_device() == 0


def test_current_device_is_per_thread(two_devices):
    seen = {}

    def worker():
        torch.foo.set_device(1)
        seen["thread"] = torch.foo.current_device()
        seen["tensor"] = torch.empty(1, device="foo").device

    torch.foo.set_device(0)
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"thread": 1, "tensor": torch.device("foo:1")}
    assert torch.foo.current_device() == 0


def test_accelerator_is_foo():
    assert torch.accelerator.current_accelerator() == torch.device("foo")
    assert torch.accelerator.device_count() == torch.foo.device_count()
    assert torch.accelerator.current_device_index() == 0


def test_device_properties():
    p = torch.foo.get_device_properties(0)
    assert isinstance(p.name, str) and p.name
    assert p.total_memory > 0
    assert p.multi_processor_count > 0
    assert p.max_threads_per_block >= 32
    assert p.max_shared_memory_per_block > 0
    assert p.warp_size == 32
    assert torch.foo.get_device_name("foo:0") == p.name
    assert torch.foo.get_device_capability(torch.device("foo", 0)) == (p.major, p.minor)
    assert torch.foo.get_device_properties(None) == p  # None -> current device (0)


def test_amp_and_module_hooks():
    assert torch.foo.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.foo.is_bf16_supported()
    assert torch.foo._is_in_bad_fork() is False
    assert torch.foo is torch_foo.device


def test_generated_tensor_methods(two_devices):
    x = torch.arange(4, dtype=torch.float32)
    assert not x.is_foo
    y = x.foo()
    assert y.is_foo and y.device == torch.device("foo:0") and y.dtype == torch.float32
    z = x.foo(1)
    assert z.device == torch.device("foo:1")
    assert torch.equal(z.cpu(), x)


def test_generated_module_and_storage_methods():
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 2)
    w = m.weight.detach().clone()
    assert m.foo() is m
    assert m.weight.device == torch.device("foo:0") and m.weight.dtype == torch.float32
    assert torch.equal(m.weight.detach().cpu(), w)
    s = torch.arange(4, dtype=torch.uint8).untyped_storage().foo()
    assert s.is_foo and s.device == torch.device("foo:0")
