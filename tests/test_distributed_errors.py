"""fooccl failures: a rank that raises makes the others fail with a clear error within a timeout
(never a hang); bad inputs get clear errors, local ones at once, cross-rank ones on every rank."""

import datetime
import os

import torch
import torch.distributed as dist

from dist_helpers import FooDistTestCase

FAILED = r"fooccl all_reduce #\d+ on foo:0 \(gloo, staged through pinned host memory\) failed: "


class TestFoocclFailures(FooDistTestCase):
    def test_rank_that_raises_and_dies(self):
        device = self.init_pg(timeout=60)
        t = torch.ones(4, device=device)
        dist.all_reduce(t)
        self.assertTrue(torch.equal(t.cpu(), torch.full((4,), 2.0)))
        if self.rank == 1:
            try:
                raise RuntimeError("rank 1 fails mid-training")
            except RuntimeError:
                os._exit(0)  # the process ends, as with an uncaught exception (the harness wants exit 0)
        # Queued without error; the failure reaches the stream that waits for the collective, so the
        # next synchronisation raises it (Gloo sees the closed connection: no timeout needed).
        with self.assertRaisesRegex(RuntimeError, FAILED + ".*[Cc]onnection (closed|reset) by peer"):
            dist.all_reduce(t)
            t.cpu()
        # The group refuses more work, naming the first failure (as NCCL after a communicator error).
        with self.assertRaisesRegex(dist.DistBackendError, "unusable after an earlier failure.*" + FAILED):
            dist.all_reduce(t)

    def test_rank_that_raises_and_stays_times_out(self):
        device = self.init_pg(timeout=5)
        store = dist.distributed_c10d._get_default_store()
        t = torch.ones(4, device=device)
        if self.rank == 1:
            try:
                raise ValueError("rank 1 fails before the collective and carries on")
            except ValueError:
                pass
            store.wait(["rank 0 saw the timeout"])  # skips the collective, stays alive
            return
        work = dist.all_reduce(t, async_op=True)
        # The group's 5 s timeout ends it (Gloo names it), not wait()'s 30 s: no clock read here.
        with self.assertRaisesRegex(RuntimeError, FAILED + ".*[Tt]imed out.*5000 ?ms"):
            work.wait(datetime.timedelta(seconds=30))  # with a timeout, wait() blocks the host (as NCCL's)
        self.assertTrue(work.is_completed())
        try:
            self.assertIsNotNone(work.exception())
        except TypeError as e:
            # torch 2.11's Work.exception() binding cannot convert the std::exception_ptr it returns,
            # for every backend (gloo's CPU Work too); 2.13's returns it. Ask the failure another way.
            self.assertIn("exception_ptr", str(e))
            self.assertFalse(work.is_success())
        store.set("rank 0 saw the timeout", "1")


class TestFoocclBadInputs(FooDistTestCase):
    def test_bad_inputs_get_clear_errors(self):
        device = self.init_pg()
        other = 1 - self.rank
        # Refused where they are made, before anything is queued (the group stays usable).
        with self.assertRaisesRegex(RuntimeError, "fooccl all_gather_into_tensor: the output has 6 elements; "
                                                  "it needs the input's 4 times the group size 2"):
            dist.all_gather_into_tensor(torch.empty(6, device=device), torch.ones(4, device=device))
        with self.assertRaisesRegex(RuntimeError, "fooccl all_gather: expected foo tensors, got a tensor on cpu"):
            dist.all_gather([torch.empty(4, device=device), torch.empty(4)], torch.ones(4, device=device))
        with self.assertRaisesRegex(RuntimeError, "fooccl reduce_scatter_tensor: the output's dtype Long differs"):
            dist.reduce_scatter_tensor(torch.empty(2, dtype=torch.int64, device=device), torch.ones(4, device=device))
        with self.assertRaisesRegex(RuntimeError, "fooccl all_reduce: dtype Short is not supported by the gloo engine"):
            dist.all_reduce(torch.ones(4, dtype=torch.int16, device=device))
        with self.assertRaisesRegex(RuntimeError, "ReduceOp.BAND needs an integer or bool dtype, got Float"):
            dist.all_reduce(torch.ones(4, device=device), op=dist.ReduceOp.BAND)
        t = torch.ones(4, device=device)
        dist.all_reduce(t)  # the group now runs on foo:rank
        with self.assertRaisesRegex(RuntimeError, f"runs on foo:{self.rank} .*got tensors on foo:{other}"):
            dist.all_reduce(torch.ones(4, device=torch.device("foo", other)))
        self.assertTrue(torch.equal(t.cpu(), torch.full((4,), 2.0)))

        # Ranks that disagree: every rank raises, naming what each one called. Such a failure
        # breaks its group, so each case runs in a new one.
        cases = {
            "shape": lambda: dist.all_reduce(torch.ones(4 + self.rank, device=device), group=group),
            "dtype": lambda: dist.all_reduce(
                torch.ones(4, device=device, dtype=torch.float32 if self.rank == 0 else torch.int64), group=group),
            "collective": lambda: (dist.all_reduce(torch.ones(4, device=device), group=group) if self.rank == 0
                                   else dist.broadcast(torch.ones(4, device=device), src=0, group=group)),
        }
        expected = {
            "shape": r"rank 0: collective #1 all_reduce\(SUM\) of 4 Float elements; "
                     r"rank 1: collective #1 all_reduce\(SUM\) of 5 Float elements",
            "dtype": r"rank 0: collective #1 all_reduce\(SUM\) of 4 Float elements; "
                     r"rank 1: collective #1 all_reduce\(SUM\) of 4 Long elements",
            "collective": r"rank 0: collective #1 all_reduce\(SUM\) of 4 Float elements; "
                          r"rank 1: collective #1 broadcast of 4 Float elements from root 0",
        }
        for name, call in cases.items():
            group = dist.new_group()
            with self.assertRaisesRegex(RuntimeError, "the ranks called different collectives: " + expected[name],
                                        msg=name):
                call()
                torch.foo.synchronize()

        group = dist.new_group()
        with self.assertRaisesRegex(RuntimeError, "split sizes disagree: rank 0 sends 2 elements to rank 1, "
                                                  "which expects 1 from it"):
            inp = torch.ones(3 if self.rank == 0 else 2, device=device)
            out = torch.empty(2, device=device)
            dist.all_to_all_single(out, inp, [1, 1], [1, 2] if self.rank == 0 else [1, 1], group=group)
            torch.foo.synchronize()

        # Point to point: the receiver refuses a message that does not fit, the sender completes.
        group = dist.new_group()
        if self.rank == 0:
            dist.send(torch.ones(4, device=device), dst=1, group=group)
            torch.foo.synchronize()
        else:
            with self.assertRaisesRegex(RuntimeError, "rank 1 posted recv of 6 Float elements but rank 0 sent 4 "
                                                      "Float elements"):
                dist.recv(torch.empty(6, device=device), src=0, group=group)
                torch.foo.synchronize()
        dist.barrier()  # the default group was never broken
