"""Throughput of the sim device against torch on the CPU: the throughput rows of issue 11.

    .venv/bin/python benchmarks/bench_throughput.py            # all five cases, median of 7
    .venv/bin/python benchmarks/bench_throughput.py --only sum,mm

add/exp/sum on 4M float32 elements, softmax over rows of (4096, 1024), mm 512^3. foo and the
CPU alternate inside every repeat (so machine load hits both alike); each sample is one loop of
calls long enough to fill ~--seconds / --repeats, foo synchronised at its end. Prints GB/s (or
GFLOP/s for mm) of each and foo / CPU: > 1 means foo is faster; issue 11's goals are >= 0.5
(add, exp), >= 0.25 (sum, softmax, mm).
"""
import argparse
import statistics
import time

import torch

import torch_foo
from bench_ops import synchronize


def cases():
    """(name, unit, make(device) -> inputs, fn, amount of the unit per call)."""
    n = 4 << 20
    yield "add 4M", "GB/s", lambda d: (torch.randn(n, device=d), torch.randn(n, device=d)), torch.add, 3 * n * 4 / 1e9
    yield "exp 4M", "GB/s", lambda d: (torch.randn(n, device=d),), torch.exp, 2 * n * 4 / 1e9
    yield "sum 4M", "GB/s", lambda d: (torch.randn(n, device=d),), torch.sum, n * 4 / 1e9
    yield ("softmax 4096x1024", "GB/s", lambda d: (torch.randn(4096, 1024, device=d),),
           lambda a: torch.softmax(a, dim=-1), 2 * n * 4 / 1e9)
    m = 512
    yield (f"mm {m}^3", "GFLOP/s", lambda d: (torch.randn(m, m, device=d), torch.randn(m, m, device=d)), torch.mm,
           2 * m ** 3 / 1e9)


def calls_for(fn, args, device, seconds):
    """Calls per sample so that one sample lasts about `seconds`."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        synchronize(device)
        if time.perf_counter() - start >= seconds or calls >= 1 << 14:
            return calls
        calls *= 2


def sample(fn, args, device, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    synchronize(device)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per case and device")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated case name prefixes")
    args = parser.parse_args()
    torch_foo.set_fallback_policy("error")  # a benchmark of a fallback would measure the CPU
    print(f"foo driver: {torch_foo.driver()}, torch {torch.__version__}, CPU threads: {torch.get_num_threads()}, "
          f"median of {args.repeats} interleaved samples")
    print()
    print("| case | CPU | foo | unit | foo / CPU |")
    print("|---|---:|---:|---|---:|")
    only = [p for p in args.only.split(",") if p]
    for name, unit, make, fn, amount in cases():
        if only and not any(name.startswith(p) for p in only):
            continue
        torch.manual_seed(0)
        inputs = {d: make(d) for d in ("cpu", "foo")}
        per_sample = args.seconds / args.repeats
        calls = {d: calls_for(fn, inputs[d], d, per_sample) for d in inputs}
        times = {d: [] for d in inputs}
        for _ in range(args.repeats):
            for d in inputs:
                times[d].append(sample(fn, inputs[d], d, calls[d]))
        rate = {d: amount / statistics.median(times[d]) for d in inputs}
        print(f"| {name} | {rate['cpu']:.1f} | {rate['foo']:.2f} | {unit} | {rate['foo'] / rate['cpu']:.3f} |")


if __name__ == "__main__":
    main()
