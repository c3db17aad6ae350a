"""torch.profiler on foo: device kernels with their device time, attributed to the aten op that
launched them (Kineto path), and the legacy use_device="foo" path with non-negative times."""

import json
import os

import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import torch_foo  # noqa: F401
from conftest import needs_kineto_device_kernels

needs_kineto = needs_kineto_device_kernels()
DEVICE_ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def kernels(prof):
    return [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]


def ops_by_id(prof):
    """torch's ops (events linked to nothing), by their correlation id."""
    return {e.id: e for e in prof.events() if e.device_type == DeviceType.CPU and e.linked_correlation_id == 0}


def launching_op(prof, kernel):
    """The CPU op a device kernel is attributed to (through its correlation id)."""
    return ops_by_id(prof).get(kernel.linked_correlation_id)


def test_device_kernels_are_traced_wherever_torch_has_the_registry():
    """The Kineto tests skip where the build found no PrivateUse1 Kineto registry: that must be
    because torch lacks it (2.11), never because the build missed the one torch ships."""
    from torch.utils.cpp_extension import include_paths

    header = "torch/csrc/profiler/standalone/privateuse1_profiler.h"
    has_registry = any(os.path.exists(os.path.join(d, header)) for d in include_paths())
    assert torch_foo._C._profiler_traces_device_kernels() == has_registry


def test_device_activity_is_supported():
    assert ProfilerActivity.PrivateUse1 in torch.profiler.supported_activities()


@needs_kineto
def test_kernels_are_linked_to_the_ops_that_launched_them():
    a = torch.randn(48, 32, device="foo")
    b = torch.randn(32, 16, device="foo")
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        c = torch.mm(a, b)
        d = torch.relu(c)
        torch.foo.synchronize()
    torch.testing.assert_close(d.cpu(), torch.relu(a.cpu() @ b.cpu()))

    ks = kernels(prof)
    names = [k.name for k in ks]
    assert "foo::gemm" in names, names
    for k in ks:
        assert k.device_index == 0
        assert k.time_range.end >= k.time_range.start
        op = launching_op(prof, k)
        assert op is not None, f"kernel {k.name} is linked to no op"
    gemm = next(k for k in ks if k.name == "foo::gemm")
    assert launching_op(prof, gemm).name == "aten::mm"
    assert gemm.time_range.elapsed_us() > 0
    # The kernel ran after its launch began (device times are on the CPU events' clock).
    assert gemm.time_range.start >= launching_op(prof, gemm).time_range.start - 1
    relu_ops = {launching_op(prof, k).name for k in ks if k is not gemm}
    assert relu_ops == {"aten::relu"}, relu_ops


@needs_kineto
def test_key_averages_count_device_time_under_the_op():
    a = torch.randn(64, 64, device="foo")
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        for _ in range(3):
            a = torch.mm(a, a) / 8
        torch.foo.synchronize()
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["aten::mm"].count == 3
    assert rows["aten::mm"].device_time_total > 0
    assert rows["foo::gemm"].count == 3
    assert rows["foo::gemm"].device_type == DeviceType.PrivateUse1
    # The launches appear on the CPU side, as cudaLaunchKernel does for CUDA.
    assert rows["fooLaunchKernel"].count >= 3
    for r in prof.key_averages():
        assert r.cpu_time_total >= 0 and r.device_time_total >= 0, r.key
    table = prof.key_averages().table(sort_by="device_time_total", row_limit=5)
    assert "foo::gemm" in table


@needs_kineto
def test_chrome_trace_has_kernels_with_their_ops(tmp_path):
    a = torch.randn(16, 16, device="foo")
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        torch.mm(a, a)
        torch.foo.synchronize()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernel = next(e for e in events if e.get("cat") == "kernel" and e["name"] == "foo::gemm")
    op = next(e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::mm")
    assert kernel["args"]["External id"] == op["args"]["External id"]
    assert kernel["dur"] >= 0 and kernel["pid"] == 0
    assert kernel["args"]["grid"] and kernel["args"]["block"]
    launch = next(e for e in events if e["name"] == "fooLaunchKernel")
    assert launch["args"]["External id"] == op["args"]["External id"]
    flows = [e for e in events if e.get("cat") == "ac2g"]
    assert {e["ph"] for e in flows} == {"s", "f"}


def test_cpu_only_profile_has_no_device_events():
    a = torch.randn(16, 16, device="foo")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.mm(a, a)
        torch.foo.synchronize()
    assert kernels(prof) == []
    assert any(e.name == "aten::mm" for e in prof.events())


@needs_kineto
def test_a_session_sees_only_its_own_kernels():
    a = torch.randn(16, 16, device="foo")
    with profile(activities=DEVICE_ACTIVITIES):
        torch.mm(a, a)
    torch.mm(a, a)  # between sessions: not recorded anywhere
    torch.foo.synchronize()
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        torch.relu(a)
        torch.foo.synchronize()
    assert [k.name for k in kernels(prof) if k.name == "foo::gemm"] == []
    assert kernels(prof), "the relu kernel is missing"


@needs_kineto
def test_second_device_and_side_stream(two_devices):
    a = torch.randn(32, 32, device="foo:1")
    s = torch.foo.Stream(1)
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        with torch.foo.stream(s):
            torch.mm(a, a)
        torch.foo.synchronize(1)
    gemm = next(k for k in kernels(prof) if k.name == "foo::gemm")
    assert gemm.device_index == 1
    assert launching_op(prof, gemm).name == "aten::mm"


@needs_kineto
def test_backward_kernels_are_attributed_on_the_autograd_thread():
    w = torch.randn(16, 16, device="foo", requires_grad=True)
    x = torch.randn(8, 16, device="foo")
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        (x @ w).sum().backward()
        torch.foo.synchronize()
    gemm_ops = [launching_op(prof, k) for k in kernels(prof) if k.name == "foo::gemm"]
    assert len(gemm_ops) >= 2  # forward mm and the weight gradient's mm
    assert all(op is not None and op.name == "aten::mm" for op in gemm_ops)
    threads = {op.thread for op in gemm_ops}
    assert len(threads) == 2, "forward and backward kernels should come from two threads"


def test_legacy_use_device_path_has_device_times():
    a = torch.randn(64, 64, device="foo")
    with torch.autograd.profiler.profile(use_device="foo") as prof:
        b = torch.mm(a, a).relu().sum()
    assert b.device.type == "foo"
    rows = {r.key: r for r in prof.key_averages()}
    for r in rows.values():
        assert r.cpu_time_total >= 0, (r.key, r.cpu_time_total)
        assert r.self_cpu_time_total >= 0, (r.key, r.self_cpu_time_total)
    assert rows["aten::mm"].device_time_total > 0
    assert prof.self_cpu_time_total >= 0
    assert "foo" in prof.key_averages().table(row_limit=5).lower()


@pytest.mark.parametrize("use_kineto", [False, True])
def test_legacy_api_with_record_function_and_exception(use_kineto):
    a = torch.randn(8, 8, device="foo")
    with pytest.raises(ValueError, match="boom"):
        with torch.autograd.profiler.profile(use_device="foo", use_kineto=use_kineto) as prof:
            with torch.profiler.record_function("my_block"):
                torch.mm(a, a)
            raise ValueError("boom")
    names = [e.name for e in prof.function_events]
    assert "my_block" in names and "aten::mm" in names
    # The profiler is off again: a new one starts cleanly.
    with torch.autograd.profiler.profile(use_device="foo", use_kineto=use_kineto) as prof2:
        torch.mm(a, a)
    assert any(e.name == "aten::mm" for e in prof2.function_events)
