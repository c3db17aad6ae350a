"""foo across processes, as CUDA: a child forked after the parent initialised foo cannot use it
(a clear error naming the 'spawn' start method, never a hang), but may use CPU tensors;
DataLoader workers (forked) work; spawn works; a fork before initialisation leaves the child free.

Kept cheap: forks are instant; one spawned interpreter and one fresh subprocess in all.
"""

import multiprocessing
import sys

import pytest
import torch

from conftest import run_python

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs fork")

TIMEOUT = 120  # seconds; a child that hangs fails the test instead of hanging CI


def _forked_child(queue):
    report = {
        "bad_fork": torch.foo._is_in_bad_fork(),
        "initialized": torch.foo.is_initialized(),
        "device_count": torch.foo.device_count(),
    }
    torch.manual_seed(3)  # asks _is_in_bad_fork first, as in every DataLoader worker
    report["cpu"] = float((torch.ones(3) * 2).sum())
    for name, use in (
        ("tensor", lambda: torch.empty(1, device="foo")),
        ("init", torch.foo.init),
        ("stream", lambda: torch.foo.Stream()),
        ("pin", lambda: torch.ones(2).pin_memory()),
    ):
        try:
            use()
            report[name] = "no error"
        except RuntimeError as e:
            report[name] = str(e)
    queue.put(report)


def _run(ctx, target, *args):
    queue = ctx.Queue()
    process = ctx.Process(target=target, args=(queue, *args))
    process.start()
    process.join(TIMEOUT)
    if process.is_alive():
        process.kill()
        pytest.fail(f"{target.__name__} hung")
    assert process.exitcode == 0
    return queue.get(timeout=10)


def test_forked_child_after_init_raises_naming_spawn():
    torch.ones(1, device="foo")  # the parent initialises foo
    report = _run(multiprocessing.get_context("fork"), _forked_child)
    assert report["bad_fork"] is True and report["initialized"] is False
    assert report["device_count"] == torch.foo.device_count()
    assert report["cpu"] == 6.0
    for name in ("tensor", "init", "stream", "pin"):
        assert "forked subprocess" in report[name] and "'spawn' start method" in report[name], name
    assert torch.foo._is_in_bad_fork() is False  # the parent is unaffected
    assert torch.ones(2, device="foo").sum().item() == 2.0


class _Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.tensor([float(i * i)])


def test_dataloader_workers_after_init():
    torch.ones(1, device="foo")
    loader = torch.utils.data.DataLoader(_Squares(), batch_size=2, num_workers=2, pin_memory=True)
    batches = [batch.to("foo", non_blocking=True) for batch in loader]
    result = torch.cat(batches).cpu().flatten()
    assert torch.equal(result, torch.tensor([float(i * i) for i in range(8)]))


def _spawned_child(queue):
    torch.accelerator.set_device_index(0)
    x = torch.full((4, 4), 2.0, device="foo")
    queue.put(((x @ x).sum().item(), torch.foo._is_in_bad_fork()))


def test_spawn_works():
    torch.ones(1, device="foo")
    total, bad_fork = _run(multiprocessing.get_context("spawn"), _spawned_child)
    assert total == 16 * (4 * 2.0 * 2.0) and bad_fork is False


FORK_BEFORE_INIT = """
import os, torch
assert not torch.randn(3).is_pinned() and not torch.foo.is_initialized()  # is_pinned starts nothing
pid = os.fork()
if pid == 0:  # forked before foo was initialised: the child may use it
    try:
        ok = torch.full((3,), 2.0, device="foo").sum().item() == 6.0
    except BaseException:
        ok = False
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, "the child could not use foo"
print(torch.ones(2, device="foo").sum().item())
"""


def test_fork_before_init_leaves_the_child_free():
    result = run_python(FORK_BEFORE_INIT, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "2.0"
