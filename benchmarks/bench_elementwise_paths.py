"""The elementwise kernel's three paths (kernels/core/elementwise.cuh) against a torch baseline,
side by side in one run: contiguous aligned operands (the vector path on a GPU), a misaligned view
(x[1:]: the element path), a transposed operand (the strided path and its dividers), half.

    .venv/bin/python benchmarks/bench_elementwise_paths.py                              # sim vs the CPU
    TORCH_FOO_DRIVER=cuda python benchmarks/bench_elementwise_paths.py --baseline cuda  # on a GPU

Prints, per case, ms per call and GB/s (bytes each call must move) of foo and the baseline, and
foo / baseline in speed (> 1: foo is faster). Medians of --repeats samples of --calls calls.
"""
import argparse
import statistics
import time

import torch

import torch_foo  # noqa: F401  (registers the device)
from bench_ops import synchronize

N = 4 << 20


def cases(device):
    """(name, fn, bytes moved per call), inputs already on `device`."""
    a, b = torch.randn(N + 1, device=device), torch.randn(N, device=device)
    t, u = torch.randn(2048, 2048, device=device).t(), torch.randn(2048, 2048, device=device)
    h, k = b.half(), a[:N].half()
    yield "add 4M", lambda: torch.add(a[:N], b), 3 * N * 4
    yield "mul 4M", lambda: torch.mul(a[:N], b), 3 * N * 4
    yield "exp 4M", lambda: torch.exp(b), 2 * N * 4
    yield "add 4M, x[1:] (misaligned)", lambda: torch.add(a[1:], b), 3 * N * 4
    yield "add 2048^2, one transposed", lambda: torch.add(t, u), 3 * N * 4
    yield "add 4M half", lambda: torch.add(h, k), 3 * N * 2


def seconds_per_call(fn, device, repeats, calls):
    fn()
    samples = []
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        synchronize(device)
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="cpu")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    results = {}
    for device in ("foo", args.baseline):  # one device's cases at a time: the other's memory is freed
        for name, fn, nbytes in cases(device):
            results.setdefault(name, []).append((seconds_per_call(fn, device, args.repeats, args.calls), nbytes))
    print(f"| case | foo ms | {args.baseline} ms | foo GB/s | {args.baseline} GB/s | foo / {args.baseline} |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, ((foo, nbytes), (base, _)) in results.items():
        print(f"| {name} | {foo * 1e3:.2f} | {base * 1e3:.2f} | {nbytes / foo / 1e9:.1f} | {nbytes / base / 1e9:.1f} "
              f"| {base / foo:.2f} |")


if __name__ == "__main__":
    main()
