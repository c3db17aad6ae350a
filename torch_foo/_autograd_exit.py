"""A clean interpreter exit after a backward pass that ran on ``foo``.

Without this, a script whose last statement is ``loss.backward()`` aborts at exit in about
one run in three ("terminate called without an active exception", status 134). Why:
torch's ``backward()`` stashes a ``contextvars.Context`` (a Python object) in the
thread-local state that every autograd GraphTask captures. The engine's ``foo`` device
thread, which ran the foo nodes, often drops the last reference to that GraphTask a few
microseconds *after* ``backward()`` has returned. When that happens once the interpreter is
finalising, the Python decref takes the GIL, Python ends the thread, and the forced unwind
through a noexcept destructor calls ``std::terminate``. (torch.cuda has the same race; its
device threads are just slower to lose it.)

The fix, registered with ``atexit`` (which runs before finalisation): each device thread runs
one more, empty graph task queued behind whatever it was doing. A device thread takes tasks
one at a time and releases the previous GraphTask before it pops the next, so once the empty
task is done no GraphTask with a Python object is left to a device thread. The empty task is
started straight through the engine, not through ``backward()``, so it stashes nothing itself.
"""

import atexit
import os

import torch

from torch_foo import _C


def _autograd_device_threads_started():
    """Whether torch's autograd engine has started its per-device threads (named pt_autograd_<i>).

    They start at the first backward that needs them; with none, there is nothing to drain and
    starting them now would only cost time. Where /proc is missing, assume they started.
    """
    tasks = "/proc/self/task"
    if not os.path.isdir(tasks):
        return True
    for tid in os.listdir(tasks):
        try:
            with open(os.path.join(tasks, tid, "comm")) as comm:
                if comm.read().startswith("pt_autograd_"):
                    return True
        except OSError:  # the thread ended while we looked
            continue
    return False


def _drain_device_thread(index):
    # A 0-element tensor: the node lands on device `index`'s autograd thread without any
    # device memory or kernel work.
    leaf = torch.empty(0, device=torch.device("foo", index), requires_grad=True)
    out = leaf.sum()
    torch.autograd.variable.Variable._execution_engine.run_backward(
        (out,), (torch.ones_like(out),), False, False, (), True, True
    )


def _drain_autograd_device_threads():
    if not _C._is_initialized() or _C._is_in_bad_fork():
        return
    if not _autograd_device_threads_started():
        return
    try:
        for index in range(_C._device_count()):
            _drain_device_thread(index)
    except Exception:  # noqa: BLE001  exiting anyway: a failure here must not mask the real exit status
        pass


atexit.register(_drain_autograd_device_threads)
