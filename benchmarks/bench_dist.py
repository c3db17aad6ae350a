"""torch.distributed on foo (fooccl) against Gloo on CPU tensors, in 2 processes on this machine.

    python benchmarks/bench_dist.py                 # sim driver, Gloo engine
    TORCH_FOO_DRIVER=cuda python benchmarks/bench_dist.py   # on a GPU machine (NCCL engine if torch has it)

Prints two markdown tables:
* all_reduce (SUM, float32) bus bandwidth per message size, on foo tensors and on CPU tensors of the
  same process group ("cpu:gloo,foo:fooccl"), and their ratio: with the Gloo engine the difference
  is the staging (device -> pinned host -> device copies on the group's stream, the cross-rank
  check, the host task);
* a DDP training step (MLP, SGD) on foo, the same step without DDP on foo (compute only), and a
  DDP step on the CPU with Gloo.
Every rank runs the same fixed number of iterations (collectives must match); times are the best of
several repeats in which the compared cases alternate, the slowest rank's.
"""

import argparse
import os
import sys
import tempfile
import time


def timed(cases, iters, repeats):
    """Best seconds per call of each (fn, sync) case over the repeats. The cases alternate within every
    repeat, so a busy machine slows them alike, and the best repeat is the least disturbed (noise
    only adds time); all ranks call fn the same number of times."""
    import torch.distributed as dist

    samples = [[] for _ in cases]
    for fn, sync in cases:  # warm-up
        fn()
        sync()
    for _ in range(repeats):
        for (fn, sync), out in zip(cases, samples):
            dist.barrier()  # the ranks start together: no skew from the previous case
            start = time.perf_counter()
            for _ in range(iters):
                fn()
            sync()
            out.append((time.perf_counter() - start) / iters)
    return [min(s) for s in samples]


def slowest(seconds):
    import torch
    import torch.distributed as dist

    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def all_reduce_rows(rank, world, sizes, repeats):
    import torch
    import torch.distributed as dist

    device = torch.device("foo", rank)
    rows = []
    for nbytes in sizes:
        numel = nbytes // 4
        iters = max(3, min(50, (8 << 20) // nbytes))
        on_foo = torch.ones(numel, device=device)
        on_cpu = torch.ones(numel)
        t_foo, t_cpu = (slowest(t) for t in timed([(lambda: dist.all_reduce(on_foo), torch.foo.synchronize),
                                                     (lambda: dist.all_reduce(on_cpu), lambda: None)], iters, repeats))
        bus = 2 * (world - 1) / world * nbytes  # bytes each rank moves in a ring all_reduce
        rows.append((nbytes, t_foo, t_cpu, bus / t_foo / 1e9, bus / t_cpu / 1e9))
    return rows


def latency(rank, repeats):
    """Seconds per 1-element all_reduce whose result is read before the next one starts (nothing
    pipelines): the fixed cost of a collective on the critical path, as in DDP's last bucket."""
    import torch
    import torch.distributed as dist

    on_foo, on_cpu = torch.ones(1, device=torch.device("foo", rank)), torch.ones(1)

    def foo_round():
        dist.all_reduce(on_foo)
        on_foo.cpu()

    times = timed([(foo_round, lambda: None), (lambda: dist.all_reduce(on_cpu), lambda: None)], 20, repeats)
    return tuple(slowest(t) for t in times)


def ddp_rows(rank, width, layers, batch, steps, repeats):
    import torch
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    def mlp():
        torch.manual_seed(0)
        return nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(width, width), nn.ReLU())])

    x = torch.randn(batch, width)
    cases = []
    for name, device, wrap in (("DDP on foo (fooccl)", torch.device("foo", rank), True),
                               ("no DDP on foo (compute only)", torch.device("foo", rank), False),
                               ("DDP on CPU (gloo)", torch.device("cpu"), True)):
        model = mlp().to(device)
        model = DDP(model, device_ids=[rank] if device.type == "foo" else None) if wrap else model
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        inputs = x.to(device)

        def step(model=model, opt=opt, inputs=inputs):
            model(inputs).square().mean().backward()
            opt.step()
            opt.zero_grad()

        cases.append((name, step, torch.foo.synchronize if device.type == "foo" else (lambda: None)))
    times = timed([(fn, sync) for _, fn, sync in cases], steps, repeats)
    return {name: slowest(t) for (name, _, _), t in zip(cases, times)}


def worker(rank, world, store_path, args, queue):
    os.environ["TORCH_FOO_SIM_THREADS"] = str(args.sim_threads)
    import torch
    import torch.distributed as dist

    import torch_foo

    torch.set_num_threads(1)  # a core per rank for the CPU baselines (2 ranks on the 2-core machine)
    torch.foo.set_device(rank)
    dist.init_process_group("cpu:gloo,foo:fooccl", store=dist.FileStore(store_path, world), rank=rank,
                            world_size=world)
    engine = dist.group.WORLD._get_backend(torch.device("foo", rank)).engine
    sizes = [1 << s for s in args.sizes]
    ar = all_reduce_rows(rank, world, sizes, args.repeats)
    lat = latency(rank, args.repeats)
    torch_foo.reset_fallback_report()
    ddp = ddp_rows(rank, args.width, args.layers, args.batch, args.steps, args.repeats)
    if rank == 0:
        # What ran on the CPU through the fallback (DDP's set-up flattens with cat, not native yet).
        queue.put((torch_foo.driver(), engine, ar, lat, ddp, torch_foo.fallback_report()))
    dist.destroy_process_group()
    # Skip the interpreter's teardown: a Gloo worker thread may still be releasing a finished work
    # holding a Python-created CPU tensor, and taking the GIL during finalization ends that thread
    # with pthread_exit, which aborts the process (torch's CPU Gloo path, seen here 1 run in 5).
    sys.stdout.flush()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 20, 22], help="log2 of the message bytes")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--width", type=int, default=256, help="DDP model: Linear width")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5, help="DDP steps per repeat")
    parser.add_argument("--sim-threads", type=int, default=1, help="TORCH_FOO_SIM_THREADS of each rank")
    args = parser.parse_args()

    import torch.multiprocessing as mp

    os.environ.setdefault("TORCH_FOO_SIM_DEVICES", str(args.world))
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    with tempfile.TemporaryDirectory() as tmp:
        procs = [ctx.Process(target=worker, args=(r, args.world, os.path.join(tmp, "store"), args, queue))
                 for r in range(args.world)]
        for p in procs:
            p.start()
        driver, engine, ar, lat, ddp, fallbacks = queue.get()
        for p in procs:
            p.join()
        if any(p.exitcode for p in procs):
            raise SystemExit("a rank failed")

    print(f"foo driver: {driver}, fooccl engine: {engine}, {args.world} processes\n")
    print("| all_reduce float32 | foo µs/call | CPU (Gloo) µs/call | foo bus GB/s | CPU bus GB/s | foo / CPU bus bandwidth |")
    print("|---:|---:|---:|---:|---:|---:|")
    for nbytes, t_foo, t_cpu, bw_foo, bw_cpu in ar:
        size = f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"
        print(f"| {size} | {t_foo * 1e6:.0f} | {t_cpu * 1e6:.0f} | {bw_foo:.3f} | {bw_cpu:.3f} | {bw_foo / bw_cpu:.2f} |")
    print(f"| 4 B, result read after each call (latency) | {lat[0] * 1e6:.0f} | {lat[1] * 1e6:.0f} | | | "
          f"{lat[1] / lat[0]:.2f} |")
    print(f"\n| training step: MLP {args.layers}x{args.width}, batch {args.batch} per rank | ms/step |")
    print("|---|---:|")
    for name, seconds in ddp.items():
        print(f"| {name} | {seconds * 1e3:.1f} |")
    print(f"\nops that ran on the CPU fallback during the training steps (calls): {fallbacks or 'none'}")


if __name__ == "__main__":
    main()
