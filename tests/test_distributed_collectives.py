"""fooccl collectives: every collective on foo against the same collective on CPU tensors (Gloo,
through the cpu:gloo backend of the same process group), for float32/float16/bfloat16/int64, in 2
and 4 processes; stream order of async work; the ways to select the backend."""

import torch
import torch.distributed as dist
from torch.distributed import ReduceOp
from torch.testing._internal.common_distributed import MultiProcessTestCase  # noqa: F401 (harness)

from dist_helpers import FooDistTestCase, sample
from runtime_helpers import held

DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int64)
REDUCE_OPS = (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.PRODUCT)


def average(t, world):
    # Gloo has no AVG on the CPU: the reference is SUM, then the division NCCL's ncclAvg makes.
    return t.div(world, rounding_mode="trunc") if not t.dtype.is_floating_point else t.div(world)


class CollectiveChecks:
    """Runs in every rank: each collective on foo tensors and on CPU tensors, results compared
    exactly (same Gloo algorithm on the same bytes), with dtype and device checked."""

    def __init__(self, test, device):
        self.test, self.device = test, device
        self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def same(self, on_foo, on_cpu, what):
        self.test.assertEqual(on_foo.device, self.device, msg=what)
        self.test.assertEqual(on_foo.dtype, on_cpu.dtype, msg=what)
        self.test.assertTrue(torch.equal(on_foo.cpu(), on_cpu), msg=f"{what}: {on_foo.cpu()} != {on_cpu}")

    def all(self, dtype):
        for name in ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
                     "reduce_scatter_tensor", "all_to_all_single", "gather_scatter", "send_recv", "batch_isend_irecv"):
            getattr(self, name)(dtype)

    def all_reduce(self, dtype):
        for salt, op in enumerate(REDUCE_OPS):
            x = sample((5, 3), dtype, self.rank, salt)
            f = x.to(self.device)
            dist.all_reduce(f, op=op)
            c = x.clone()
            dist.all_reduce(c, op=ReduceOp.SUM if op == ReduceOp.AVG else op)
            self.same(f, average(c, self.world) if op == ReduceOp.AVG else c, f"all_reduce {op} {dtype}")
        # A strided view: the collective writes through it. (The reference is laid out as the
        # engine sees the view, densely: float sums of more than 2 ranks depend on the layout.)
        base = sample((3, 5), dtype, self.rank, 9)
        f = base.to(self.device)
        dist.all_reduce(f.t())
        c = base.t().contiguous()
        dist.all_reduce(c)
        self.same(f.t(), c, f"all_reduce of a transposed view {dtype}")

    def broadcast(self, dtype):
        x = sample((4, 2), dtype, self.rank)
        f, c = x.to(self.device), x.clone()
        dist.broadcast(f, src=self.world - 1)
        dist.broadcast(c, src=self.world - 1)
        self.same(f, c, f"broadcast {dtype}")

    def reduce(self, dtype):
        x = sample((6,), dtype, self.rank)
        f, c = x.to(self.device), x.clone()
        dst = self.world - 1
        dist.reduce(f, dst=dst, op=ReduceOp.MAX)
        dist.reduce(c, dst=dst, op=ReduceOp.MAX)
        # Only the destination's tensor changes (as NCCL; Gloo uses the others as scratch).
        self.same(f, c if self.rank == dst else x, f"reduce {dtype}")

    def all_gather(self, dtype):
        x = sample((2, 3), dtype, self.rank)
        fs = [torch.empty(2, 3, dtype=dtype, device=self.device) for _ in range(self.world)]
        cs = [torch.empty(2, 3, dtype=dtype) for _ in range(self.world)]
        dist.all_gather(fs, x.to(self.device))
        dist.all_gather(cs, x)
        for i, (f, c) in enumerate(zip(fs, cs)):
            self.same(f, c, f"all_gather[{i}] {dtype}")

    def all_gather_into_tensor(self, dtype):
        x = sample((3, 2), dtype, self.rank)
        f = torch.empty(3 * self.world, 2, dtype=dtype, device=self.device)
        c = torch.empty(3 * self.world, 2, dtype=dtype)
        dist.all_gather_into_tensor(f, x.to(self.device))
        dist.all_gather_into_tensor(c, x)
        self.same(f, c, f"all_gather_into_tensor {dtype}")

    def reduce_scatter(self, dtype):
        xs = [sample((4,), dtype, self.rank, salt) for salt in range(self.world)]
        f = torch.empty(4, dtype=dtype, device=self.device)
        c = torch.empty(4, dtype=dtype)
        dist.reduce_scatter(f, [x.to(self.device) for x in xs], op=ReduceOp.SUM)
        dist.reduce_scatter(c, xs, op=ReduceOp.SUM)
        self.same(f, c, f"reduce_scatter {dtype}")

    def reduce_scatter_tensor(self, dtype):
        x = sample((2 * self.world, 3), dtype, self.rank)
        for op in (ReduceOp.SUM, ReduceOp.AVG):
            f = torch.empty(2, 3, dtype=dtype, device=self.device)
            c = torch.empty(2, 3, dtype=dtype)
            dist.reduce_scatter_tensor(f, x.to(self.device), op=op)
            dist.reduce_scatter_tensor(c, x, op=ReduceOp.SUM)
            self.same(f, average(c, self.world) if op == ReduceOp.AVG else c, f"reduce_scatter_tensor {op} {dtype}")

    def all_to_all_single(self, dtype):
        def rows(src, dst):  # uneven: each pair exchanges its own number of rows
            return 1 + (src + 2 * dst) % 3

        in_splits = [rows(self.rank, j) for j in range(self.world)]
        out_splits = [rows(j, self.rank) for j in range(self.world)]
        x = sample((sum(in_splits), 2), dtype, self.rank)
        f = torch.empty(sum(out_splits), 2, dtype=dtype, device=self.device)
        c = torch.empty(sum(out_splits), 2, dtype=dtype)
        dist.all_to_all_single(f, x.to(self.device), out_splits, in_splits)
        dist.all_to_all_single(c, x, out_splits, in_splits)
        self.same(f, c, f"all_to_all_single {dtype}")

    def gather_scatter(self, dtype):
        x = sample((3,), dtype, self.rank)
        root = 0
        fs = [torch.empty(3, dtype=dtype, device=self.device) for _ in range(self.world)] if self.rank == root else None
        cs = [torch.empty(3, dtype=dtype) for _ in range(self.world)] if self.rank == root else None
        dist.gather(x.to(self.device), fs, dst=root)
        dist.gather(x, cs, dst=root)
        if self.rank == root:
            for i, (f, c) in enumerate(zip(fs, cs)):
                self.same(f, c, f"gather[{i}] {dtype}")
        pieces = [sample((3,), dtype, root, salt) for salt in range(self.world)]
        f = torch.empty(3, dtype=dtype, device=self.device)
        dist.scatter(f, [p.to(self.device) for p in pieces] if self.rank == root else None, src=root)
        self.same(f, sample((3,), dtype, root, self.rank), f"scatter {dtype}")

    def send_recv(self, dtype):
        peer = self.rank ^ 1  # pairs (0, 1), (2, 3)
        mine = sample((5,), dtype, self.rank)
        got = torch.empty(5, dtype=dtype, device=self.device)
        if self.rank % 2 == 0:
            dist.send(mine.to(self.device), dst=peer)
            dist.recv(got, src=peer)
        else:
            dist.recv(got, src=peer)
            dist.send(mine.to(self.device), dst=peer)
        self.same(got, sample((5,), dtype, peer), f"send/recv {dtype}")

    def batch_isend_irecv(self, dtype):
        # Every rank sends first and receives second: one engine batch, so no rank waits for a
        # receive its peer has not posted yet.
        nxt, prv = (self.rank + 1) % self.world, (self.rank - 1) % self.world
        got = torch.empty(4, dtype=dtype, device=self.device)
        ops = [dist.P2POp(dist.isend, sample((4,), dtype, self.rank).to(self.device), nxt),
               dist.P2POp(dist.irecv, got, prv)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        self.same(got, sample((4,), dtype, prv), f"batch_isend_irecv {dtype}")


class EveryCollective:
    """The collective checks of one group size, for every dtype (a mixin of the sized cases)."""

    def test_every_collective_matches_cpu(self):
        device = self.init_pg()
        checks = CollectiveChecks(self, device)
        for dtype in DTYPES:
            checks.all(dtype)
        dist.barrier()


class TestFoocclCollectives(EveryCollective, FooDistTestCase):
    def test_async_work_completes_in_stream_order(self):
        device = self.init_pg()
        expected = float(sum(r + 1 for r in range(self.world_size)))
        producer, consumer = torch.foo.Stream(), torch.foo.Stream()
        t = torch.zeros(4, device=device)
        with held(producer, timeout=30):
            with torch.foo.stream(producer):
                t.fill_(self.rank + 1)  # queued behind the hold
                work = dist.all_reduce(t, async_op=True)
            self.assertIn(f"fooccl all_reduce #1 on foo:{self.rank} (gloo, staged through pinned host memory)",
                          work.description)
            self.assertFalse(work.is_completed())  # it waits for the producer
            with torch.foo.stream(consumer):
                work.wait()  # a stream dependency: returns while the producer is still held
                doubled = t * 2  # the consumer reads the result after the collective
            self.assertFalse(work.is_completed())
        consumer.synchronize()
        self.assertTrue(torch.equal(doubled.cpu(), torch.full((4,), 2 * expected)))
        self.assertTrue(work.is_completed())

        # get_future: complete at once (as NCCL's), its waits are stream dependencies.
        t = torch.full((3,), float(self.rank + 1), device=device)
        future = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0] * 10)
        self.assertTrue(torch.equal(future.wait().cpu(), torch.full((3,), 10 * expected)))

        # async_op=False returns after queuing too; the next use on the stream sees the result.
        t = torch.full((2,), float(self.rank + 1), device=device)
        dist.all_reduce(t)
        self.assertTrue(torch.equal(t.cpu(), torch.full((2,), expected)))
        dist.barrier()  # blocks the host until every rank is there, as NCCL's

    def test_ways_to_select_the_backend(self):
        """Every init_process_group form a cuda user writes runs foo collectives and trains DDP,
        the engine each uses as docs/distributed.md says; cpu collectives where the form has Gloo."""
        from torch.nn.parallel import DistributedDataParallel as DDP

        store = dist.FileStore(self.file_name, self.world_size)
        torch.foo.set_device(self.rank)
        expected = torch.full((3,), float(sum(range(self.world_size))))
        variants = (  # (kwargs, does the group also take cpu tensors)
            (dict(), False),  # plain: foo is the accelerator, fooccl its registered backend
            (dict(device_id=self.device), False),  # as init_process_group(device_id=cuda:i) picks nccl
            (dict(backend="fooccl"), False),
            (dict(backend="cpu:gloo,foo:fooccl"), True),
            (dict(backend="gloo"), True),  # foo tensors through a Gloo engine, as cuda tensors through Gloo
        )
        for i, (kwargs, has_cpu) in enumerate(variants):
            dist.init_process_group(store=dist.PrefixStore(str(i), store), rank=self.rank,
                                    world_size=self.world_size, **kwargs)
            backend = dist.group.WORLD._get_backend(self.device)
            self.assertEqual(backend.name(), "fooccl", msg=str(kwargs))
            self.assertEqual(backend.engine, "gloo")
            t = torch.full((3,), float(self.rank), device=self.device)
            work = dist.all_reduce(t, async_op=True)  # may reach Gloo after the cpu one below
            if has_cpu:
                c = torch.full((2,), float(self.rank))
                dist.all_reduce(c)
                self.assertTrue(torch.equal(c, torch.full((2,), expected[0].item())), msg=str(kwargs))
            work.wait()
            self.assertTrue(torch.equal(t.cpu(), expected), msg=str(kwargs))
            self.ddp_step_matches_the_cpu(DDP, str(kwargs))
            dist.barrier()
            dist.destroy_process_group()

    def ddp_step_matches_the_cpu(self, DDP, what):
        """One DDP step on foo: the averaged gradients of every rank's batch, as computed on the CPU."""
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 3)
        batches = [sample((5, 4), torch.float32, rank, salt=3) for rank in range(self.world_size)]
        ddp = DDP(copy_of(model).to(self.device))
        ddp(batches[self.rank].to(self.device)).square().sum().backward()
        for rank_batch in batches:
            model(rank_batch).square().sum().div(self.world_size).backward()
        for name, p in ddp.module.named_parameters():
            self.assertEqual(p.grad.device, self.device)
            torch.testing.assert_close(p.grad.cpu(), dict(model.named_parameters())[name].grad, msg=what)


def copy_of(module):
    import copy

    return copy.deepcopy(module)


class TestFoocclCollectives4(EveryCollective, FooDistTestCase):
    WORLD_SIZE = 4


def test_engine_choice(monkeypatch):
    """Without processes: sim takes Gloo; asking for NCCL where it cannot run says why."""
    import pytest

    import torch_foo.distributed as fd

    monkeypatch.delenv("TORCH_FOO_DIST_ENGINE", raising=False)
    assert fd.engine() == "gloo"
    monkeypatch.setenv("TORCH_FOO_DIST_ENGINE", "nccl")
    with pytest.raises(RuntimeError, match="NCCL cannot run foo collectives: the foo driver is 'sim'"):
        fd.engine()
    monkeypatch.setenv("TORCH_FOO_DIST_ENGINE", "mpi")
    with pytest.raises(ValueError, match="TORCH_FOO_DIST_ENGINE must be one of"):
        fd.engine()


def test_single_process_group():
    """World size 1 in this process: the smallest group works end to end (what a GPU check runs)."""
    import datetime

    dist.init_process_group("fooccl", store=dist.HashStore(), rank=0, world_size=1,
                            timeout=datetime.timedelta(seconds=30))
    try:
        t = torch.arange(4.0, device="foo:0")
        work = dist.all_reduce(t, op=ReduceOp.AVG, async_op=True)
        assert work.description == "fooccl all_reduce #1 on foo:0 (gloo, staged through pinned host memory)"
        work.wait()
        assert torch.equal(t.cpu(), torch.arange(4.0))
        out = torch.empty(4, device="foo:0")
        dist.all_gather_into_tensor(out, t)
        dist.barrier()
        assert torch.equal(out.cpu(), torch.arange(4.0))
    finally:
        dist.destroy_process_group()
