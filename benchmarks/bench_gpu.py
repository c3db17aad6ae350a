"""foo (cuda driver) against torch.cuda on the same GPU, side by side in one process.

    TORCH_FOO_DRIVER=cuda python3 benchmarks/bench_gpu.py --json bench_gpu.json     # on a GPU machine
    python benchmarks/bench_gpu.py --baseline cpu --quick                           # a rehearsal on sim

Three groups, each case run on foo and on the baseline device from the same inputs:
* bandwidth: add, exp, sum, softmax (rows of 1024), copy_ on --elements float32 elements (default
  64M, 256 MB an operand), in GB/s counting the bytes each op must read and write;
* matmul: torch.mm of n x n by n x n for n in --mm-sizes (1024..8192), float32 and bfloat16, in
  TFLOP/s (2 n^3 per product). torch.cuda's float32 products run in full float32 (TF32 off, as
  torch's default), so the columns compare like with like;
* per-op overhead: µs per call of ops on one element (matmul 8x8): dispatch, launch, queueing.

Timing: wall clock around a loop of calls ended by the device's synchronize, the loop long enough
to fill about --seconds / --repeats; foo and the baseline alternate inside every repeat (so a
disturbance hits both) and each reports the median. Every case also checks that foo's result
matches the baseline's (relative Frobenius error under a per-dtype bound): a fast wrong kernel is
reported as such, not as a speed-up. --json writes every result (rewritten after each case, so an
interrupted run keeps what it measured); the markdown table goes to stdout.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch

import torch_foo


def synchronize(device: str) -> None:
    if device.startswith("foo"):
        torch.foo.synchronize()
    elif device.startswith("cuda"):
        torch.cuda.synchronize()


def loop(fn, args, device, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    synchronize(device)
    return (time.perf_counter() - start) / calls


def calls_for(fn, args, device, seconds, max_calls):
    """Calls per timed loop, so that one loop lasts about `seconds` (at least one call)."""
    calls = 1
    while calls < max_calls:
        if loop(fn, args, device, calls) * calls >= seconds:
            break
        calls *= 2
    return calls


def relative_error(actual, expected):
    a, e = actual.detach().cpu().double(), expected.detach().cpu().double()
    if a.shape != e.shape:
        return float("inf")
    denominator = e.norm().item()
    return (a - e).norm().item() / (denominator if denominator else 1.0)


# Bound on the relative Frobenius error of foo against the baseline. float32 differs by summation
# order only; bfloat16 products round their outputs to 8 bits of mantissa (2^-8 ~ 4e-3).
TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 2e-2, torch.float16: 5e-3}


def cases(args):
    """(group, name, dtype, make(device) -> inputs, fn, bytes per call, flops per call)."""
    n = args.elements
    f32 = torch.float32
    yield "bandwidth", f"add {n}", f32, lambda d: (torch.randn(n, device=d), torch.randn(n, device=d)), torch.add, 12 * n, 0
    yield "bandwidth", f"exp {n}", f32, lambda d: (torch.randn(n, device=d),), torch.exp, 8 * n, 0
    yield "bandwidth", f"sum {n}", f32, lambda d: (torch.randn(n, device=d),), torch.sum, 4 * n, 0
    rows = max(n // 1024, 1)
    yield ("bandwidth", f"softmax {rows}x1024", f32, lambda d: (torch.randn(rows, 1024, device=d),),
           lambda a: torch.softmax(a, dim=-1), 8 * rows * 1024, 0)
    yield ("bandwidth", f"copy_ {n}", f32, lambda d: (torch.empty(n, device=d), torch.randn(n, device=d)),
           lambda out, a: out.copy_(a), 8 * n, 0)
    for dtype in (torch.float32, torch.bfloat16):
        for m in args.mm_sizes:
            esize = torch.empty((), dtype=dtype).element_size()
            yield ("matmul", f"mm {m}^3", dtype,
                   lambda d, m=m, dtype=dtype: (torch.randn(m, m, device=d).to(dtype), torch.randn(m, m, device=d).to(dtype)),
                   torch.mm, 3 * m * m * esize, 2 * m ** 3)
    one = lambda d: (torch.ones(1, device=d),)  # noqa: E731
    two = lambda d: (torch.ones(1, device=d), torch.ones(1, device=d))  # noqa: E731
    yield "overhead", "add 1", f32, two, torch.add, 0, 0
    yield "overhead", "mul 1", f32, two, torch.mul, 0, 0
    yield "overhead", "add_ 1 (in place)", f32, two, lambda a, b: a.add_(b), 0, 0
    yield "overhead", "sum 1", f32, one, torch.sum, 0, 0
    yield "overhead", "softmax 1x8", f32, lambda d: (torch.ones(1, 8, device=d),), lambda a: torch.softmax(a, -1), 0, 0
    yield "overhead", "mm 8x8", f32, lambda d: (torch.ones(8, 8, device=d), torch.ones(8, 8, device=d)), torch.mm, 0, 0
    yield "overhead", "clone 1", f32, one, torch.clone, 0, 0
    yield "overhead", "empty 1", f32, lambda d: (d,), lambda d: torch.empty(1, device=d), 0, 0


def measure(fn, foo_args, base_args, baseline, seconds, repeats, max_calls):
    per_loop = seconds / repeats
    calls = {"foo": calls_for(fn, foo_args, "foo", per_loop, max_calls),
             baseline: calls_for(fn, base_args, baseline, per_loop, max_calls)}
    times = {"foo": [], baseline: []}
    for _ in range(repeats):
        times[baseline].append(loop(fn, base_args, baseline, calls[baseline]))
        times["foo"].append(loop(fn, foo_args, "foo", calls["foo"]))
    return statistics.median(times["foo"]), statistics.median(times[baseline]), calls


def device_name(device):
    if device == "cuda":
        return torch.cuda.get_device_name(0)
    if device == "foo":
        return torch.foo.get_device_properties(0).name
    return "cpu"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="torch device to compare with (default: cuda when available, else cpu)")
    parser.add_argument("--elements", type=int, default=64 << 20, help="elements per operand (bandwidth group)")
    parser.add_argument("--mm-sizes", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    parser.add_argument("--seconds", type=float, default=0.4, help="time per case and device")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated prefixes of group or case names")
    parser.add_argument("--budget", type=float, default=0, help="seconds; cases after it are skipped (0: none)")
    parser.add_argument("--quick", action="store_true",
                        help="sizes for a rehearsal on the sim driver: 256K elements, mm 64 and 128, short loops")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if args.quick:
        args.elements, args.mm_sizes = 1 << 18, [64, 128]
        args.seconds, args.repeats = min(args.seconds, 0.05), min(args.repeats, 3)
    torch_foo.set_fallback_policy("error")  # a benchmark of a fallback would measure the CPU
    start = time.monotonic()
    report = {
        "what": "benchmarks/bench_gpu.py: foo vs a torch baseline in one process",
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "argv": sys.argv[1:],
        "foo_driver": torch_foo.driver(),
        "foo_device": device_name("foo"),
        "baseline": args.baseline,
        "baseline_device": device_name(args.baseline),
        "torch": torch.__version__,
        "cuda_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
        "load_average": os.getloadavg(),
        "results": [],
    }

    def save():
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(report, f, indent=1)
            os.replace(tmp, args.json)

    print(f"foo driver: {report['foo_driver']} ({report['foo_device']}), baseline: {args.baseline} "
          f"({report['baseline_device']}), torch {torch.__version__}, median of {args.repeats} interleaved loops")
    print()
    print(f"| group | case | dtype | foo µs/call | {args.baseline} µs/call | foo rate | {args.baseline} rate | unit "
          f"| foo / {args.baseline} speed | rel. error |")
    print("|---|---|---|---:|---:|---:|---:|---|---:|---:|")
    only = [p for p in args.only.split(",") if p]
    failures = 0
    for group, name, dtype, make, fn, nbytes, flops in cases(args):
        if only and not any(name.startswith(p) or group.startswith(p) for p in only):
            continue
        dtype_name = str(dtype).replace("torch.", "")
        row = {"group": group, "case": name, "dtype": dtype_name}
        if args.budget and time.monotonic() - start > args.budget:
            row["skipped"] = "budget"
            report["results"].append(row)
            continue
        try:
            torch.manual_seed(0)
            foo_args = make("foo")
            base_args = tuple(a.to(args.baseline) if isinstance(a, torch.Tensor) else args.baseline
                              for a in foo_args) if group != "overhead" else make(args.baseline)
            error = relative_error(fn(*foo_args), fn(*base_args)) if group != "overhead" else None
            t_foo, t_base, calls = measure(fn, foo_args, base_args, args.baseline, args.seconds, args.repeats,
                                           1 << 14 if group == "overhead" else 1 << 10)
        except Exception as e:  # noqa: BLE001 (reported per case; the next case still runs)
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            report["results"].append(row)
            save()
            failures += 1
            print(f"| {group} | {name} | {dtype_name} | {row['error']} | | | | | | |", flush=True)
            continue
        unit, amount = ("TFLOP/s", flops / 1e12) if flops else ("GB/s", nbytes / 1e9) if nbytes else ("", 0)
        ok = error is None or error <= TOLERANCE.get(dtype, 1e-4)
        failures += not ok
        row.update(foo_s=t_foo, baseline_s=t_base, calls=calls, unit=unit,
                   foo_rate=amount / t_foo if amount else None, baseline_rate=amount / t_base if amount else None,
                   speed_vs_baseline=t_base / t_foo, rel_error=error, matches=ok)
        report["results"].append(row)
        save()
        rates = (f"{row['foo_rate']:.3g} | {row['baseline_rate']:.3g}") if amount else " | "
        print(f"| {group} | {name} | {dtype_name} | {t_foo * 1e6:.1f} | {t_base * 1e6:.1f} | {rates} | {unit} | "
              f"{t_base / t_foo:.3f} | {'' if error is None else f'{error:.1e}'}{'' if ok else ' MISMATCH'} |",
              flush=True)
    report["seconds"] = time.monotonic() - start
    report["failures"] = failures
    save()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
