"""torch.foo device management: count, current device (per thread), properties, generated methods."""

import os
import threading
import types

import pytest
import torch

import torch_foo
from conftest import assert_foo_equal, run_python


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


# --- torch.accelerator and device queries (OpenReg's test_device.py, torch.cuda's properties) -----

COMPUTE_DTYPES = {
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool,
}


def test_accelerator_device_index_api(two_devices):
    torch.accelerator.set_device_index(1)
    assert torch.accelerator.current_device_index() == 1 == torch.foo.current_device()
    assert torch.empty(1, device="foo").device == torch.device("foo:1")
    torch.accelerator.set_device_index(0)
    with torch.accelerator.device_index(None):
        assert torch.accelerator.current_device_index() == 0
    with torch.accelerator.device_index(1):
        assert torch.accelerator.current_device_index() == 1
    assert torch.accelerator.current_device_index() == 0


def test_device_contexts_restore_after_exceptions(two_devices):
    with pytest.raises(ValueError):
        with torch.accelerator.device_index(1):
            assert torch.randn(2, device="foo").device.index == 1
            raise ValueError
    assert torch.accelerator.current_device_index() == 0
    with pytest.raises(RuntimeError, match="nested"):
        with torch.accelerator.device_index(1):
            with torch.foo.device(0):
                raise RuntimeError("nested")
    assert torch.foo.current_device() == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda: torch.accelerator.set_device_index(5),
        lambda: torch.foo.set_device(5),
        lambda: torch.foo.get_device_properties(5),
        lambda: torch.foo.Stream(5),
        lambda: torch.empty(1, device="foo:5"),
        lambda: torch.ones(1).to("foo:5"),
        lambda: torch.accelerator.get_device_capability("foo:5"),
    ],
    ids=["set_device_index", "set_device", "properties", "stream", "empty", "to", "capability"],
)
def test_invalid_device_index_names_index_and_count(call):
    count = torch.foo.device_count()
    with pytest.raises((RuntimeError, IndexError), match=rf"\b5\b[^\n]*\b{count}\b"):
        call()
    assert torch.foo.current_device() == 0  # the failed call changed nothing


def test_device_capability(two_devices):
    capability = torch.accelerator.get_device_capability("foo:0")
    assert isinstance(capability, dict) and capability["supported_dtypes"] == COMPUTE_DTYPES
    assert torch.accelerator.get_device_capability("foo:1") == capability
    assert torch.accelerator.get_device_capability() == capability  # current device
    # Only bytes move for the others: they allocate and copy, no kernel computes them.
    assert torch.complex64 not in capability["supported_dtypes"]
    x = torch.tensor([1 + 2j]).to("foo")
    assert x.dtype == torch.complex64 and x.cpu().item() == 1 + 2j


def test_full_device_properties(two_devices):
    p0, p1 = torch.foo.get_device_properties(0), torch.foo.get_device_properties(1)
    for index, p in enumerate((p0, p1)):
        assert p.warp_size == 32 and p.max_threads_per_block == 1024
        assert p.max_threads_per_multi_processor >= p.max_threads_per_block
        assert 0 < p.shared_memory_per_block == p.max_shared_memory_per_block <= p.shared_memory_per_block_optin
        assert p.shared_memory_per_multiprocessor >= p.shared_memory_per_block
        assert p.regs_per_multiprocessor > 0 and p.L2_cache_size >= 0
        assert isinstance(p.is_integrated, bool) and isinstance(p.is_multi_gpu_board, bool)
        assert p.total_memory == torch.foo.mem_get_info(index)[1]
        assert p.name in repr(p)
    assert p0.uuid and p0.uuid != p1.uuid
    if torch_foo.driver() == "sim":
        # The limits the emulator enforces at every launch (csrc/runtime/driver/launch_limits.h).
        assert p0.shared_memory_per_block == 48 * 1024 and p0.name == "foo-sim"


def test_mem_get_info_follows_the_driver():
    torch.foo.empty_cache()
    free, total = torch.foo.mem_get_info()
    assert 0 < free <= total == torch.foo.get_device_properties().total_memory
    assert torch.accelerator.get_memory_info(0)[1] == total
    if torch_foo.driver() != "sim":
        return  # a GPU's free memory also moves with other processes
    assert torch.accelerator.get_memory_info(0) == (free, total)
    x = torch.empty(8 << 20, dtype=torch.uint8, device="foo")  # a fresh 8 MiB block from the driver
    assert torch.foo.mem_get_info()[0] == free - (8 << 20)
    del x
    torch.foo.empty_cache()
    assert torch.foo.mem_get_info()[0] == free


def test_concurrent_device_switching_threads(two_devices):
    errors = []
    barrier = threading.Barrier(4)

    def worker(i):
        try:
            barrier.wait()
            for _ in range(5):
                index = i % 2
                torch.accelerator.set_device_index(index)
                z = torch.full((8, 8), float(i), device="foo") @ torch.ones(8, 8, device="foo")
                if z.device.index != index or torch.accelerator.current_device_index() != index:
                    errors.append((i, z.device, torch.accelerator.current_device_index()))
                if z.sum().item() != 8 * 8 * 8 * i:
                    errors.append((i, "value"))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert torch.foo.current_device() == 0


def test_init_and_state_after_errors():
    torch.foo.init()
    assert torch.foo.is_initialized() and torch.accelerator.device_count() == torch.foo.device_count()
    with pytest.raises(RuntimeError):
        torch.ones(5, 5, device="foo") @ torch.ones(3, 3, device="foo")
    assert torch.accelerator.current_device_index() == 0
    assert_foo_equal(torch.ones(2, 3, device="foo") @ torch.ones(3, 2, device="foo"), torch.full((2, 2), 3.0))


def test_backend_module_registration():
    assert torch._C._get_privateuse1_backend_name() == "foo"
    torch.utils.rename_privateuse1_backend("foo")  # renaming again to the same name is fine
    with pytest.raises(RuntimeError, match="has already been set"):
        torch.utils.rename_privateuse1_backend("dev")
    assert torch.utils.backend_registration._get_custom_mod_func("device_count")() == torch.foo.device_count()
    with pytest.raises(RuntimeError, match="Try to call torch.foo"):
        torch.utils.backend_registration._get_custom_mod_func("no_such_function")
    with pytest.raises(RuntimeError, match="Expected one of cpu"):
        torch._register_device_module("dev", types.ModuleType("fake"))
    with pytest.raises(RuntimeError, match="The runtime module of 'foo' has already been registered"):
        torch._register_device_module("foo", types.ModuleType("fake"))
    with pytest.raises(RuntimeError, match="The custom device module of"):
        torch.utils.generate_methods_for_privateuse1_backend()
    from torch._C._autograd import DeviceType
    from torch._C._profiler import ProfilerActivity

    # torch's rename mirrors the name into ProfilerActivity and DeviceType where it has
    # _rename_profiler_activity (2.13); torch 2.11's rename does not, and foo adds nothing of its own.
    if hasattr(torch.utils.backend_registration, "_rename_profiler_activity"):
        assert ProfilerActivity.FOO == ProfilerActivity.PrivateUse1 and DeviceType.FOO == DeviceType.PrivateUse1
    else:
        assert not hasattr(ProfilerActivity, "FOO") and not hasattr(DeviceType, "FOO")


def test_generated_methods_for_devices_and_packed_sequences(two_devices):
    assert torch.empty(2).foo(torch.device("foo")).device == torch.device("foo:0")
    assert torch.empty(2).foo(1).device == torch.device("foo:1")
    packed = torch.nn.utils.rnn.PackedSequence(torch.rand(5, 3), torch.tensor([1, 1, 1, 1, 1]))
    assert not packed.is_foo and packed.foo().is_foo and packed.foo().data.is_foo


def test_legacy_tensor_types():
    for dtype, name in {torch.float32: "FloatTensor", torch.int64: "LongTensor", torch.bool: "BoolTensor"}.items():
        assert torch.empty(2, dtype=dtype, device="foo").type() == f"torch.foo.{name}"
    assert torch.randn(4, device="foo").untyped_storage().is_foo
