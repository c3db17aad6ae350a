"""Device-argument normalisation shared by the device, memory and random helpers."""

import torch

from torch_foo import _C


def _device_index(device, optional=True):
    """Turn int / "foo" / "foo:1" / torch.device / None into a device index.

    None and a device without an index mean the current device (when
    ``optional``). Indices are range-checked here so that a bad one gives a
    Python error naming the device instead of reaching the driver.
    """
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "foo":
            raise ValueError(f"expected a foo device, got {device}")
        device = device.index
    if device is None:
        if not optional:
            raise ValueError("expected a foo device with an index, got None")
        return _C._current_device()
    if not isinstance(device, int) or isinstance(device, bool):
        raise TypeError(f"expected int, str, torch.device or None, got {type(device).__name__}")
    count = _C._device_count()
    if not 0 <= device < count:
        raise RuntimeError(f"invalid foo device index {device} (device count is {count})")
    return device
