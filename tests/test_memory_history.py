"""torch.foo.memory: the submodule, memory history and snapshots in torch.cuda.memory._snapshot()'s
format (read back with torch.cuda._memory_viz), set_per_process_memory_fraction, and
caching_allocator_alloc/delete."""

import gc
import inspect
import pickle

import pytest
import torch
import torch.cuda._memory_viz as memory_viz
from runtime_helpers import held

MIB = 1 << 20
THIS_FILE = __file__


@pytest.fixture(autouse=True)
def _quiet():
    gc.collect()
    torch.foo.synchronize()
    yield
    torch.foo.memory._record_memory_history(enabled=None, clear_history=True)
    for i in range(torch.foo.device_count()):
        torch.foo.set_per_process_memory_fraction(1.0, i)


def _line_below():
    """The line number of the line after the caller's."""
    return inspect.currentframe().f_back.f_lineno + 1


def test_memory_is_a_submodule_like_torch_cuda_memory():
    import torch.foo.memory
    import torch_foo.memory
    from torch.foo.memory import _dump_snapshot, _record_memory_history, _snapshot, memory_allocated

    assert torch.foo.memory is torch_foo.memory
    assert torch.foo.memory._snapshot is _snapshot and callable(_dump_snapshot)
    assert callable(_record_memory_history)
    assert memory_allocated is torch.foo.memory_allocated
    for name in ("memory_reserved", "memory_stats", "memory_snapshot", "empty_cache",
                 "set_per_process_memory_fraction", "caching_allocator_alloc", "caching_allocator_delete"):
        assert hasattr(torch.cuda.memory, name) and getattr(torch.foo.memory, name) is getattr(torch.foo, name)


def _train_step():
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).to("foo")
    opt = torch.optim.Adam(model.parameters())
    x_line = _line_below()
    x = torch.randn(16, 32, device="foo")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return model, opt, x_line


def _events(snapshot, device=0):
    return snapshot["device_traces"][device]


def test_snapshot_of_a_training_step_loads_in_memory_viz(tmp_path, capsys):
    torch.foo.memory._record_memory_history(enabled="all", context="all", stacks="python")
    model, opt, x_line = _train_step()
    dump = tmp_path / "snapshot.pickle"
    torch.foo.memory._dump_snapshot(str(dump))
    torch.foo.memory._record_memory_history(enabled=None)
    with open(dump, "rb") as f:
        snapshot = pickle.load(f)

    assert set(snapshot) >= {"segments", "device_traces"}
    assert len(snapshot["device_traces"]) == torch.foo.device_count()
    events = _events(snapshot)
    actions = {e["action"] for e in events}
    assert {"alloc", "free_requested", "free_completed"} <= actions
    for e in events:
        assert set(e) >= {"action", "addr", "size", "stream", "frames", "time_us"}
        assert e["size"] > 0 and isinstance(e["stream"], int)
    times = [e["time_us"] for e in events]
    assert times == sorted(times)
    # The randn's allocation names this file and line, as on cuda.
    here = [e for e in events if e["action"] == "alloc"
            and any(f["filename"] == THIS_FILE and f["line"] == x_line for f in e["frames"])]
    assert here, [e["frames"][:3] for e in events if e["action"] == "alloc"][:5]
    assert any(f["name"] == "_train_step" for f in here[0]["frames"])
    # Free events carry the stack of the free (context="all").
    assert any(e["frames"] for e in events if e["action"] == "free_requested")

    # Live blocks (the parameters, Adam's state) carry the stack that allocated them.
    live = [b for s in snapshot["segments"] for b in s["blocks"] if b["state"] == "active_allocated"]
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    param_blocks = [b for b in live if b["address"] in params]
    assert len(param_blocks) == len(params)
    for b in param_blocks:
        assert any(f["filename"] == THIS_FILE and f["name"] == "_train_step" for f in b["frames"])

    # torch.cuda._memory_viz reads it.
    assert "segments:" in memory_viz.segsum(snapshot)
    text = memory_viz.trace(snapshot)
    assert "alloc" in text
    flame = memory_viz.memory(snapshot, format_flamegraph=lambda lines: lines)
    assert f"{THIS_FILE}:{x_line}:_train_step" in flame or "_train_step" in flame
    assert "active_allocated" in memory_viz.segments(snapshot, format_flamegraph=lambda lines: lines)
    for html in (memory_viz.trace_plot(snapshot), memory_viz.segment_plot(snapshot),
                 memory_viz.trace_plot(snapshot, plot_segments=True)):
        assert html.startswith("<!DOCTYPE html>") or "<html" in html[:200].lower()
    capsys.readouterr()
    memory_viz.trace_plot(pickle.loads(pickle.dumps(snapshot)), filter_freed=True)
    assert "free_completed without free_requested" not in capsys.readouterr().out
    del model, opt


def test_segment_events_and_empty_cache():
    torch.foo.empty_cache()
    torch.foo.memory._record_memory_history(stacks="python")
    x = torch.empty(3 * MIB + 512, dtype=torch.uint8, device="foo")  # a size nothing else caches
    ptr = x.data_ptr()
    del x
    torch.foo.empty_cache()
    events = [e for e in _events(torch.foo.memory._snapshot()) if e["addr"] == ptr]
    assert [e["action"] for e in events] == [
        "segment_alloc", "alloc", "free_requested", "free_completed", "segment_free"]
    assert all(e["size"] == 3 * MIB + 512 for e in events)
    assert any(f["filename"] == THIS_FILE for f in events[1]["frames"])


def test_context_and_enabled_options():
    torch.foo.memory._record_memory_history(enabled="all", context="alloc", stacks="python", clear_history=True)
    x = torch.empty(1000, device="foo")
    ptr = x.data_ptr()
    del x
    events = [e for e in _events(torch.foo.memory._snapshot()) if e["addr"] == ptr]
    alloc = next(e for e in events if e["action"] == "alloc")
    free = next(e for e in events if e["action"] == "free_requested")
    assert alloc["frames"] and free["frames"] == []

    # "state": no history, but live blocks keep their stack.
    torch.foo.memory._record_memory_history(enabled="state", context="state", stacks="python", clear_history=True)
    y = torch.empty(1000, device="foo")
    snap = torch.foo.memory._snapshot()
    assert _events(snap) == []
    block = next(b for s in snap["segments"] for b in s["blocks"] if b["address"] == y.data_ptr())
    assert any(f["filename"] == THIS_FILE for f in block["frames"])
    # torch.foo.memory_snapshot() shows the same frames.
    seg = next(s for s in torch.foo.memory_snapshot() if s["address"] == y.data_ptr())
    assert seg["blocks"][0]["frames"] == block["frames"]
    del y

    # context=None: events without stacks.
    torch.foo.memory._record_memory_history(enabled="all", context=None, clear_history=True)
    z = torch.empty(1000, device="foo")
    del z
    events = _events(torch.foo.memory._snapshot())
    assert events and all(e["frames"] == [] for e in events)

    with pytest.raises(RuntimeError, match="expected enabled"):
        torch.foo.memory._record_memory_history(enabled="some")
    with pytest.raises(RuntimeError, match="expected stacks"):
        torch.foo.memory._record_memory_history(stacks="cpp")


def test_max_entries_keeps_the_newest():
    torch.foo.memory._record_memory_history(max_entries=6, stacks="python", clear_history=True)
    xs = [torch.empty(100 + i * 128, device="foo") for i in range(10)]
    last = xs[-1].data_ptr()
    del xs
    events = _events(torch.foo.memory._snapshot())
    assert len(events) == 6
    times = [e["time_us"] for e in events]
    assert times == sorted(times)
    assert events[-1]["action"] == "free_completed"
    assert last in {e["addr"] for e in events} or len({e["addr"] for e in events}) > 1


def test_recording_off_records_nothing_and_clear_drops():
    torch.foo.memory._record_memory_history(stacks="python", clear_history=True)
    a = torch.empty(10, device="foo")
    torch.foo.memory._record_memory_history(enabled=None)
    n = len(_events(torch.foo.memory._snapshot()))
    assert n > 0
    b = torch.empty(10, device="foo")
    del a, b
    assert len(_events(torch.foo.memory._snapshot())) == n  # stopped: kept, not extended
    torch.foo.memory._record_memory_history(enabled=None, clear_history=True)
    assert _events(torch.foo.memory._snapshot()) == []
    # Legacy boolean form, as torch.cuda accepts.
    torch.foo.memory._record_memory_history(True, stacks="python")
    c = torch.empty(10, device="foo")
    del c
    assert _events(torch.foo.memory._snapshot())


def test_recording_on_another_device(two_devices):
    torch.foo.memory._record_memory_history(stacks="python", clear_history=True)
    x = torch.empty(1000, device="foo:1")
    snap = torch.foo.memory._snapshot()
    assert any(e["addr"] == x.data_ptr() and e["action"] == "alloc" for e in _events(snap, 1))
    assert not any(e["addr"] == x.data_ptr() for e in _events(snap, 0))
    seg = next(s for s in snap["segments"] if s["address"] == x.data_ptr())
    assert seg["device"] == 1 and any(f["filename"] == THIS_FILE for f in seg["frames"])
    del x


def test_per_process_memory_fraction_caps_reserved():
    total = torch.foo.get_device_properties(0).total_memory
    assert torch.foo.get_per_process_memory_fraction(0) == 1.0
    torch.foo.empty_cache()
    base = torch.foo.memory_reserved(0)
    fraction = (base + 8 * MIB) / total
    torch.foo.set_per_process_memory_fraction(fraction, 0)
    assert torch.foo.get_per_process_memory_fraction(0) == fraction
    assert torch.foo.memory.get_per_process_memory_fraction() == fraction
    cap = int(fraction * total)
    before = torch.foo.memory_stats(0)
    a = torch.empty(4 * MIB, dtype=torch.uint8, device="foo")  # within the cap
    with pytest.raises(torch.OutOfMemoryError, match=f"allows {cap} bytes") as err:
        torch.empty(5 * MIB, dtype=torch.uint8, device="foo")
    assert "set_per_process_memory_fraction" in str(err.value)
    after = torch.foo.memory_stats(0)
    assert after["num_ooms"] == before["num_ooms"] + 1
    assert after["num_alloc_retries"] == before["num_alloc_retries"] + 1
    assert torch.foo.memory_reserved(0) <= cap

    # A cached block is freed and the allocation retried before refusing, as on cuda.
    del a  # 4 MiB stays cached
    assert torch.foo.memory_reserved(0) >= base + 4 * MIB
    b = torch.empty(6 * MIB, dtype=torch.uint8, device="foo")
    assert torch.foo.memory_stats(0)["num_alloc_retries"] == after["num_alloc_retries"] + 1
    assert torch.foo.memory_reserved(0) <= cap
    del b

    torch.foo.set_per_process_memory_fraction(1.0, 0)
    c = torch.empty(16 * MIB, dtype=torch.uint8, device="foo")
    del c


def test_per_process_memory_fraction_arguments(two_devices):
    with pytest.raises(RuntimeError, match="invalid memory fraction"):
        torch.foo.set_per_process_memory_fraction(1.5)
    with pytest.raises(RuntimeError, match="invalid memory fraction"):
        torch.foo.set_per_process_memory_fraction(-0.1)
    with pytest.raises(TypeError):
        torch.foo.set_per_process_memory_fraction(1)
    torch.foo.set_per_process_memory_fraction(0.5, "foo:1")
    assert torch.foo.get_per_process_memory_fraction(1) == 0.5
    assert torch.foo.get_per_process_memory_fraction(0) == 1.0
    # foo:0 is not capped by foo:1's fraction.
    torch.foo.empty_cache()
    total0 = torch.foo.get_device_properties(0).total_memory
    x = torch.empty(min(total0 // 2 + MIB, 64 * MIB), dtype=torch.uint8, device="foo:0")
    del x
    torch.foo.set_per_process_memory_fraction(0.0, 1)
    torch.foo.empty_cache()
    with pytest.raises(torch.OutOfMemoryError, match="memory fraction 0 "):
        torch.empty(1, device="foo:1")


def test_caching_allocator_alloc_and_delete():
    before = torch.foo.memory_allocated()
    ptr = torch.foo.caching_allocator_alloc(1000)
    assert isinstance(ptr, int) and ptr != 0
    assert torch.foo.memory_allocated() == before + 1024  # rounded to 512 bytes
    seg = next(s for s in torch.foo.memory_snapshot() if s["address"] == ptr)
    assert seg["blocks"][0]["state"] == "active_allocated" and seg["requested_size"] == 1000
    assert seg["stream"] == torch.foo.current_stream().foo_stream
    torch.foo.caching_allocator_delete(ptr)
    assert torch.foo.memory_allocated() == before
    # Cached for its stream: the next block of that size on the stream is the same memory.
    again = torch.foo.memory.caching_allocator_alloc(1000)
    assert again == ptr
    torch.foo.memory.caching_allocator_delete(again)


def test_caching_allocator_alloc_on_a_stream():
    s = torch.foo.Stream()
    ptr = torch.foo.caching_allocator_alloc(4096, stream=s)
    seg = next(seg for seg in torch.foo.memory_snapshot() if seg["address"] == ptr)
    assert seg["stream"] == s.foo_stream != torch.foo.current_stream().foo_stream
    torch.foo.caching_allocator_delete(ptr)
    # Freed, the block is cached for `s`, not for the current stream.
    other = torch.foo.caching_allocator_alloc(4096)
    assert other != ptr
    torch.foo.caching_allocator_delete(other)
    with torch.foo.stream(s):
        assert torch.foo.caching_allocator_alloc(4096) == ptr
        torch.foo.caching_allocator_delete(ptr)
    # An int driver handle works as torch.cuda's cudaStream_t argument.
    p2 = torch.foo.caching_allocator_alloc(4096, stream=s.foo_stream)
    assert p2 == ptr
    torch.foo.caching_allocator_delete(p2)


def test_caching_allocator_alloc_device(two_devices):
    before = torch.foo.memory_allocated(1)
    ptr = torch.foo.caching_allocator_alloc(MIB, device="foo:1")
    assert torch.foo.memory_allocated(1) == before + MIB
    assert torch.foo.current_device() == 0
    torch.foo.caching_allocator_delete(ptr)
    assert torch.foo.memory_allocated(1) == before
    s1 = torch.foo.Stream("foo:1")
    ptr = torch.foo.caching_allocator_alloc(MIB, stream=s1)  # the stream's device
    assert torch.foo.memory_allocated(1) == before + MIB
    torch.foo.caching_allocator_delete(ptr)


def test_a_block_used_on_another_stream_completes_its_free_later():
    torch.foo.memory._record_memory_history(stacks="python", clear_history=True)
    side = torch.foo.Stream()
    x = torch.ones(1 << 16, device="foo")
    ptr = x.data_ptr()
    side.wait_stream(torch.foo.current_stream())
    with held(side):
        with torch.foo.stream(side):
            y = x * 2
        x.record_stream(side)
        del x
        actions = [e["action"] for e in _events(torch.foo.memory._snapshot()) if e["addr"] == ptr]
        assert actions[-1] == "free_requested"
    side.synchronize()
    actions = [e["action"] for e in _events(torch.foo.memory._snapshot()) if e["addr"] == ptr]
    assert actions[-2:] == ["free_requested", "free_completed"]
    del y
