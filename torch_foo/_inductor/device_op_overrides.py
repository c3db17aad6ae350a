"""The device calls Inductor's wrapper writes for foo (``register_device_op_overrides``)."""

from torch._inductor.codegen.common import DeviceOpOverrides


class FooDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name):
        return f"from torch_foo._inductor.compiler import raw_stream as {name}"

    def set_device(self, device_idx):
        return f"torch.foo.set_device({device_idx})"

    def synchronize(self):
        return "torch.foo.synchronize()"

    def device_guard(self, device_idx):
        return f"torch.foo.device({device_idx})"
