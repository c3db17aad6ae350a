"""torch.compile (Inductor, foo's kernels) against eager foo: one training step (forward,
backward, AdamW) of the model zoo's models, with the kernel launches per step (profiler) and the
compile cost (docs/compile.md).

    python benchmarks/bench_compile.py                   # every zoo model
    python benchmarks/bench_compile.py --models gpt      # names containing "gpt"
    TORCH_FOO_INDUCTOR_CACHE_DIR=/tmp/c python benchmarks/bench_compile.py   # run twice: warm

Cold compile time is the first compiled step (Dynamo, AOT autograd, Inductor, the host compiler);
"compiled kernels" / "compile s" are the libraries this process built and the seconds the host
compiler (and nvcc with FOO_USE_CUDA=ON) took. Launches are the foo kernels the profiler saw in one
step (`fooLaunchKernel`), eager and compiled; step times are medians after warm-up.
"""
import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

import torch_foo  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_models import models  # noqa: E402


def make_step(model, batch, loss_fn):
    inputs = [t.to("foo") for t in batch]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

    def step(run):
        opt.zero_grad()
        loss = loss_fn(run, *inputs)
        loss.backward()
        opt.step()
        return loss

    return step


def launches(step, run):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        step(run)
        torch.foo.synchronize()
    return sum(e.count for e in prof.key_averages() if e.key == "fooLaunchKernel")


def step_time(step, run, repeat):
    times = []
    for _ in range(repeat):
        torch.foo.synchronize()
        start = time.perf_counter()
        step(run)
        torch.foo.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="", help="only models whose name contains this (case-insensitive)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from torch_foo._inductor import compiler

    print(f"kernel cache: {compiler.cache_dir()}")
    print(f"{'model':48} {'launches eager':>14} {'compiled':>9} {'step eager ms':>14} {'compiled ms':>12} "
          f"{'speedup':>8} {'first step s':>13} {'libs':>5} {'compile s':>10}")
    for name, model, batch, loss_fn in models():
        if args.models.lower() not in name.lower():
            continue
        torch.manual_seed(0)
        eager_model = copy.deepcopy(model).to("foo")
        compiled_model = copy.deepcopy(model).to("foo")
        eager_step = make_step(eager_model, batch, loss_fn)
        compiled_step = make_step(compiled_model, batch, loss_fn)
        compiled = torch.compile(compiled_model)

        before = dict(compiler.stats)
        start = time.perf_counter()
        compiled_step(compiled)
        torch.foo.synchronize()
        first = time.perf_counter() - start
        compiled_step(compiled)  # the optimizer's first step ran eagerly inside the first call
        libs = compiler.stats["compiled"] - before["compiled"]
        seconds = compiler.stats["compile_seconds"] - before["compile_seconds"]

        eager_step(eager_model)
        n_eager, n_compiled = launches(eager_step, eager_model), launches(compiled_step, compiled)
        t_eager = step_time(eager_step, eager_model, args.repeat)
        t_compiled = step_time(compiled_step, compiled, args.repeat)
        print(f"{name:48} {n_eager:>14} {n_compiled:>9} {t_eager * 1e3:>14.1f} {t_compiled * 1e3:>12.1f} "
              f"{t_eager / t_compiled:>7.2f}x {first:>13.1f} {libs:>5} {seconds:>10.1f}", flush=True)
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
