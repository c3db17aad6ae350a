"""Random-number helpers of ``torch.foo``, named as in ``torch.cuda``.

Each device has one default ``torch.Generator`` owned by the C++ runtime
(``_C._default_generator(i)``); everything here goes through it. Seeding is
eager (no queued calls as in torch.cuda): ``torch.manual_seed`` calls
``manual_seed_all`` and C++ random kernels read the generator directly, so a
seed held back in Python could be missed.
"""

from torch_foo import _C
from torch_foo._utils import _device_index


def _generator(device=None):
    return _C._default_generator(_device_index(device))


def manual_seed(seed):
    """Seed the current device's generator."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed):
    """Seed every device's generator; a no-op when there is no device, like torch.cuda."""
    seed = int(seed)
    for i in range(_C._device_count()):
        _C._default_generator(i).manual_seed(seed)


def seed():
    """Seed the current device's generator with a non-deterministic number."""
    _generator().seed()


def seed_all():
    """Seed every device with one non-deterministic number (the same on all, as torch.cuda does)."""
    count = _C._device_count()
    if count == 0:
        return
    first = _C._default_generator(0)
    first.seed()
    for i in range(1, count):
        _C._default_generator(i).manual_seed(first.initial_seed())


def initial_seed():
    return _generator().initial_seed()


def get_rng_state(device="foo"):
    """The generator state of ``device`` (default: current device) as a CPU uint8 tensor."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="foo"):
    _generator(device).set_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(_C._device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)
