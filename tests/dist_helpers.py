"""Shared by the torch.distributed tests: PyTorch's multi-process harness on loopback, one sim
device per rank (rank r uses foo:r of TORCH_FOO_SIM_DEVICES = world size), as one GPU per rank.

MultiProcessTestCase spawns the ranks for every test method (the parent only joins them), so a
method is the unit of cost (~5 s of process start-up on the 2-core CI machine): the tests group
many checks per method.
"""

import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch.testing._internal.common_distributed import MultiProcessTestCase


class FooDistTestCase(MultiProcessTestCase):
    WORLD_SIZE = 2

    @property
    def world_size(self):
        return self.WORLD_SIZE

    def setUp(self):
        super().setUp()
        # Read by the spawned ranks at their driver start; restored here so other tests of this
        # pytest process (and their subprocesses) keep the defaults.
        saved = {k: os.environ.get(k) for k in ("TORCH_FOO_SIM_DEVICES", "TORCH_FOO_SIM_THREADS")}
        os.environ["TORCH_FOO_SIM_DEVICES"] = str(self.world_size)
        os.environ["TORCH_FOO_SIM_THREADS"] = "1"  # 2 cores shared by all ranks
        try:
            self._spawn_processes()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    @classmethod
    def _run(cls, rank, test_name, file_name, parent_pipe, **kwargs):
        super()._run(rank, test_name, file_name, parent_pipe, **kwargs)
        # The rank passed (a failing rank exits with its error code inside run_test): skip the
        # interpreter's teardown, seconds per rank and test on the loaded 2-core machine.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    @property
    def device(self):
        return torch.device("foo", self.rank)

    def init_pg(self, backend="cpu:gloo,foo:fooccl", timeout=60, **kwargs):
        """The default process group of this rank; foo:rank becomes the current device."""
        torch.foo.set_device(self.rank)
        dist.init_process_group(
            backend,
            store=dist.FileStore(self.file_name, self.world_size),
            rank=self.rank,
            world_size=self.world_size,
            timeout=datetime.timedelta(seconds=timeout),
            **kwargs,
        )
        return self.device


def sample(shape, dtype, rank, salt=0):
    """Rank-specific data: normal floats, small integers (products stay exact)."""
    g = torch.Generator().manual_seed(1000 * salt + rank)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    return torch.randint(-4, 5, shape, generator=g, dtype=dtype)
