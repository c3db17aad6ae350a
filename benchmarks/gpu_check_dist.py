"""fooccl in --world processes on this machine: collectives checked against values computed
locally, a short DDP run, and all_reduce timings. Part of benchmarks/gpu_check.sh (step
"distributed"); runs on its own too:

    TORCH_FOO_DRIVER=cuda TORCH_FOO_DIST_ENGINE=nccl python3 benchmarks/gpu_check_dist.py --world 1
    TORCH_FOO_DRIVER=sim python benchmarks/gpu_check_dist.py --world 2          # Gloo engine on sim

Rank r uses foo:(r % device_count). NCCL refuses two ranks on one GPU, so an nccl run needs as
many GPUs as ranks (the script says so and exits 3 otherwise). The engine comes from
TORCH_FOO_DIST_ENGINE as for any fooccl user; the one that ran is reported (the backend's
`engine`). Prints one line per check and writes --json; exit 0 when every check passed.
"""
import argparse
import datetime
import json
import os
import sys
import tempfile
import time
import traceback


def checks(rank, world, device):
    """(name, fn() -> None or raises) per collective; each compares with locally computed values."""
    import torch
    import torch.distributed as dist

    def expect(actual, expected, what):
        actual = actual.cpu()
        if not torch.equal(actual, expected.to(actual.dtype)):
            raise AssertionError(f"{what}: got {actual.flatten()[:6].tolist()}, expected "
                                 f"{expected.flatten()[:6].tolist()}")

    def all_reduce_sum():
        x = torch.full((1 << 20,), float(rank + 1), device=device)
        dist.all_reduce(x)
        expect(x, torch.full((1 << 20,), float(world * (world + 1) // 2)), "all_reduce SUM float32")

    def all_reduce_avg_bf16():
        x = torch.full((1000,), 2.0 * (rank + 1), dtype=torch.bfloat16, device=device)
        dist.all_reduce(x, op=dist.ReduceOp.AVG)
        expect(x, torch.full((1000,), float(world + 1), dtype=torch.bfloat16), "all_reduce AVG bfloat16")

    def all_reduce_max_int64():
        x = torch.arange(10, dtype=torch.int64, device=device) * (rank + 1)
        dist.all_reduce(x, op=dist.ReduceOp.MAX)
        expect(x, torch.arange(10, dtype=torch.int64) * world, "all_reduce MAX int64")

    def all_reduce_strided():
        base = torch.arange(12, dtype=torch.float32).reshape(3, 4) + rank
        x = base.to(device)
        dist.all_reduce(x.t())  # a non-contiguous view: the collective writes through it
        expect(x, sum(torch.arange(12, dtype=torch.float32).reshape(3, 4) + r for r in range(world)),
               "all_reduce of a transposed view")

    def broadcast():
        x = torch.full((5,), float(rank), device=device)
        dist.broadcast(x, src=world - 1)
        expect(x, torch.full((5,), float(world - 1)), "broadcast")

    def all_gather_into_tensor():
        out = torch.empty(world * 3, device=device)
        dist.all_gather_into_tensor(out, torch.full((3,), float(rank), device=device))
        expect(out, torch.arange(world, dtype=torch.float32).repeat_interleave(3), "all_gather_into_tensor")

    def reduce_scatter_tensor():
        x = torch.arange(world * 2, dtype=torch.float32, device=device) + rank
        out = torch.empty(2, device=device)
        dist.reduce_scatter_tensor(out, x)
        full = sum(torch.arange(world * 2, dtype=torch.float32) + r for r in range(world))
        expect(out, full[rank * 2:rank * 2 + 2], "reduce_scatter_tensor")

    def all_to_all_single():
        x = torch.arange(world, dtype=torch.float32, device=device) + 100 * rank
        out = torch.empty(world, device=device)
        dist.all_to_all_single(out, x)
        expect(out, torch.arange(world, dtype=torch.float32) * 100 + rank, "all_to_all_single")

    def send_recv_ring():
        right, left = (rank + 1) % world, (rank - 1) % world
        x = torch.full((4,), float(rank), device=device)
        out = torch.empty(4, device=device)
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, x, right), dist.P2POp(dist.irecv, out, left)])
        for w in works:
            w.wait()
        expect(out, torch.full((4,), float(left)), "batch_isend_irecv ring")

    def ddp_steps():
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        torch.manual_seed(0)
        model = DDP(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)).to(device),
                    device_ids=[device.index])
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(rank)
        for _ in range(3):
            model(torch.randn(16, 64, generator=g).to(device)).square().mean().backward()
            opt.step()
            opt.zero_grad()
        flat = torch.cat([p.detach().flatten() for p in model.parameters()])
        gathered = torch.empty(world * flat.numel(), device=device)
        dist.all_gather_into_tensor(gathered, flat)
        for r, part in enumerate(gathered.cpu().chunk(world)):
            if not torch.equal(part, flat.cpu()):
                raise AssertionError(f"DDP: rank {r}'s parameters differ from rank {rank}'s after 3 steps")

    names = [all_reduce_sum, all_reduce_avg_bf16, all_reduce_max_int64, all_reduce_strided, broadcast,
             all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single, ddp_steps]
    if world > 1:
        names.insert(8, send_recv_ring)
    return [(f.__name__, f) for f in names]


def timings(device, world):
    """Seconds per all_reduce (float32 SUM) of 4 B (result read back after each: latency) and of
    64 MiB (queued back to back), the slowest rank's."""
    import torch
    import torch.distributed as dist

    out = {}
    small = torch.ones(1, device=device)
    big = torch.ones(16 << 20, device=device)
    for name, x, iters, read in (("4 B", small, 50, True), ("64 MiB", big, 10, False)):
        dist.all_reduce(x)
        torch.foo.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
            if read:
                x.cpu()
        torch.foo.synchronize()
        t = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=None)  # through Gloo: a CPU tensor
        out[name] = t.item()
    nbytes = big.numel() * 4
    out["64 MiB bus GB/s"] = (2 * (world - 1) / world * nbytes / out["64 MiB"] / 1e9) if world > 1 else None
    out["64 MiB algorithm GB/s"] = nbytes / out["64 MiB"] / 1e9
    return out


def worker(rank, world, store_path, queue):
    result = {"rank": rank, "checks": []}
    try:
        import torch
        import torch.distributed as dist

        import torch_foo

        count = torch.foo.device_count()
        device = torch.device("foo", rank % count)
        torch.foo.set_device(device)
        result.update(driver=torch_foo.driver(), device=str(device), device_count=count)
        dist.init_process_group("cpu:gloo,foo:fooccl", store=dist.FileStore(store_path, world), rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=60))
        result["engine"] = dist.group.WORLD._get_backend(device).engine
        for name, fn in checks(rank, world, device):
            start = time.perf_counter()
            try:
                fn()
                torch.foo.synchronize()
                result["checks"].append({"name": name, "ok": True, "seconds": time.perf_counter() - start})
            except Exception as e:  # noqa: BLE001 (reported; the group may be unusable after it)
                result["checks"].append({"name": name, "ok": False, "error": f"{type(e).__name__}: {e}"[:400]})
                raise
        result["timings"] = timings(device, world)
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        result["error"] = traceback.format_exc()[-2000:]
    queue.put(result)
    sys.stdout.flush()
    os._exit(0)  # skip teardown (see bench_dist.py: Gloo threads and interpreter finalization)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for the ranks")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()

    engine = os.environ.get("TORCH_FOO_DIST_ENGINE", "auto")
    if engine == "nccl":
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count < args.world:
            print(f"skipped: NCCL needs a GPU per rank: {args.world} ranks, {count} GPU(s) visible")
            sys.exit(3)

    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        procs = [ctx.Process(target=worker, args=(r, args.world, os.path.join(tmp, "store"), queue))
                 for r in range(args.world)]
        for p in procs:
            p.start()
        deadline = time.monotonic() + args.timeout
        while len(results) < args.world and time.monotonic() < deadline:
            if not queue.empty():
                results.append(queue.get())
            elif not any(p.is_alive() for p in procs) and queue.empty():
                break
            else:
                time.sleep(0.05)
        for p in procs:
            p.join(timeout=max(deadline - time.monotonic(), 1))
            if p.is_alive():
                p.kill()
    results.sort(key=lambda r: r["rank"])
    ok = len(results) == args.world and all("error" not in r for r in results)
    report = {"world": args.world, "engine_asked": engine, "seconds": time.perf_counter() - start, "ok": ok,
              "ranks": results}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    first = results[0] if results else {}
    print(f"world {args.world}: driver {first.get('driver')}, engine {first.get('engine')} (asked: {engine}), "
          f"devices {[r.get('device') for r in results]}, {report['seconds']:.1f} s")
    for r in results:
        for c in r["checks"]:
            print(f"  rank {r['rank']} {c['name']}: {'ok' if c['ok'] else 'FAILED: ' + c['error']}")
        if "error" in r:
            print(f"  rank {r['rank']} error:\n    " + r["error"].strip().replace("\n", "\n    "))
    if len(results) < args.world:
        print(f"  only {len(results)} of {args.world} ranks reported (crashed or timed out after {args.timeout} s)")
    if results and "timings" in results[0]:
        t = results[0]["timings"]
        bus = f", bus {t['64 MiB bus GB/s']:.1f} GB/s" if t["64 MiB bus GB/s"] else ""
        print(f"  all_reduce float32: 4 B read back each call {t['4 B'] * 1e6:.0f} µs; 64 MiB {t['64 MiB'] * 1e3:.2f} ms "
              f"(algorithm {t['64 MiB algorithm GB/s']:.1f} GB/s{bus})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
