"""Per-op overhead: µs per call of tiny ops on foo and on a torch baseline, side by side in one run.

    python benchmarks/bench_overhead.py                   # sim driver vs torch on the CPU
    python benchmarks/bench_overhead.py --only add,sum    # a subset (name prefixes)
    TORCH_FOO_DRIVER=cuda python benchmarks/bench_overhead.py --baseline cuda   # on a GPU machine

Each op runs on inputs of one element (matmul: 8x8), so the time is dispatch, wrapper, iterator,
allocation, launch and queueing, not arithmetic. Per op the two devices alternate: a loop of
`calls` calls on the baseline, then the same loop on foo (synchronised at its end, so queued work
counts), `--repeats` times; the table shows the median of each and their ratio. Interleaving
keeps the ratio fair on a shared machine whose load changes between loops. The load average is
printed with the table: numbers from a busy machine are only comparable as ratios. The last
column is the CPU time of the calling thread per foo call (time.thread_time): the host's own
cost of an op, without the scheduling noise of a loaded machine, for comparing host-side changes.
"""
import argparse
import os
import statistics
import time

import torch

import torch_foo


def synchronize(device: str) -> None:
    if device.startswith("foo"):
        torch.foo.synchronize()
    elif device.startswith("cuda"):
        torch.cuda.synchronize()


def cases():
    """(name, make_inputs(device), fn) per op."""
    one = lambda d: (torch.ones(1, device=d),)  # noqa: E731
    two = lambda d: (torch.ones(1, device=d), torch.ones(1, device=d))  # noqa: E731
    yield "add", two, lambda a, b: torch.add(a, b)
    yield "mul", two, lambda a, b: torch.mul(a, b)
    yield "relu", one, lambda a: torch.relu(a)
    yield "exp", one, lambda a: torch.exp(a)
    yield "add_ (in place)", two, lambda a, b: a.add_(b)
    yield "add scalar", one, lambda a: a + 1.5
    yield "where", lambda d: (torch.ones(1, device=d) > 0, torch.ones(1, device=d), torch.zeros(1, device=d)), \
        lambda c, a, b: torch.where(c, a, b)
    yield "sum", one, lambda a: torch.sum(a)
    yield "mean dim", lambda d: (torch.ones(1, 1, device=d),), lambda a: a.mean(dim=1)
    yield "max", one, lambda a: torch.max(a)
    yield "softmax 1x8", lambda d: (torch.ones(1, 8, device=d),), lambda a: torch.softmax(a, dim=-1)
    yield "matmul 8x8", lambda d: (torch.ones(8, 8, device=d), torch.ones(8, 8, device=d)), \
        lambda a, b: torch.matmul(a, b)
    yield "linear 8x8", lambda d: (torch.ones(8, 8, device=d), torch.ones(8, 8, device=d), torch.ones(8, device=d)), \
        lambda x, w, b: torch.nn.functional.linear(x, w, b)
    yield "cat 2x1", two, lambda a, b: torch.cat([a, b])
    yield "clone", one, lambda a: a.clone()
    yield "empty", lambda d: (d,), lambda d: torch.empty(1, device=d)


def loop_seconds(fn, args, device: str, calls: int):
    """(wall seconds per call, CPU seconds per call of the calling thread)."""
    start, start_cpu = time.perf_counter(), time.thread_time()
    for _ in range(calls):
        fn(*args)
    synchronize(device)
    return (time.perf_counter() - start) / calls, (time.thread_time() - start_cpu) / calls


def measure(fn, foo_args, base_args, baseline: str, calls: int, repeats: int):
    """Medians of (foo wall, baseline wall, foo host-thread CPU) s/call, the loops interleaved."""
    for args, device in ((foo_args, "foo"), (base_args, baseline)):  # warm-up: caches, lazy init
        loop_seconds(fn, args, device, max(calls // 10, 1))
    foo, base, foo_cpu = [], [], []
    for _ in range(repeats):
        base.append(loop_seconds(fn, base_args, baseline, calls)[0])
        wall, cpu = loop_seconds(fn, foo_args, "foo", calls)
        foo.append(wall)
        foo_cpu.append(cpu)
    return statistics.median(foo), statistics.median(base), statistics.median(foo_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="cpu", help="torch device to compare with (cpu or cuda)")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed loop")
    parser.add_argument("--repeats", type=int, default=7, help="interleaved loops per device")
    parser.add_argument("--only", default="", help="comma-separated op name prefixes to run (default: all)")
    args = parser.parse_args()
    torch_foo.set_fallback_policy("error")  # a fallback would time the CPU
    load = os.getloadavg()
    print(f"foo driver: {torch_foo.driver()}, baseline: {args.baseline}, torch {torch.__version__}, "
          f"threads: {torch.get_num_threads()}, {args.calls} calls x {args.repeats} interleaved loops, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print()
    print(f"| op | {args.baseline} µs/call | foo µs/call | foo / {args.baseline} | foo host-thread CPU µs/call |")
    print("|---|---:|---:|---:|---:|")
    only = [p for p in args.only.split(",") if p]
    for name, make, fn in cases():
        if only and not any(name.startswith(p) for p in only):
            continue
        foo_args, base_args = make("foo"), make(args.baseline)
        try:
            t_foo, t_base, t_cpu = measure(fn, foo_args, base_args, args.baseline, args.calls, args.repeats)
        except NotImplementedError as error:
            print(f"| {name} | | not native: {str(error).splitlines()[0][:60]} | | |")
            continue
        print(f"| {name} | {t_base * 1e6:.2f} | {t_foo * 1e6:.2f} | {t_foo / t_base:.2f}x | {t_cpu * 1e6:.2f} |",
              flush=True)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
