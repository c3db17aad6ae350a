"""A training step (forward, cross-entropy, backward, optimizer step) of the model zoo's GPT on
foo, eager vs captured once and replayed (torch.foo.graph), side by side in one run, with the CPU
eager step as the baseline, and what the replay does instead: one queued task running the
recorded kernels.

    python benchmarks/bench_graphs.py                  # sim driver
    python benchmarks/bench_graphs.py --optimizer adamw --seconds 4

The model is tests/test_model_zoo.py's TinyGPT (2 layers, dim 32, seq 16, batch 4); wider
ones with --dim/--layers.
"""
import argparse
import copy
import sys
from pathlib import Path

import torch

import torch_foo  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_model_zoo as zoo  # noqa: E402

from bench_ops import time_call  # noqa: E402


def make_step(model, batch, device, optimizer):
    model = copy.deepcopy(model).to(device)
    x, y = (t.to(device) for t in batch)
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=device == "foo")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = zoo._lm_loss(model, x, y)
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--optimizer", choices=("sgd", "adamw"), default="sgd")
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = zoo.TinyGPT(dim=args.dim, layers=args.layers)
    batch = zoo._tokens(64)

    eager = make_step(model, batch, "foo", args.optimizer)
    eager_s = time_call(eager, "foo", args.seconds)

    captured = make_step(model, batch, "foo", args.optimizer)
    captured()  # optimizer state exists before the capture, as CUDA graphs need
    torch.foo.synchronize()
    g = torch.foo.FooGraph()
    with torch.foo.graph(g):
        captured()
    replay_s = time_call(g.replay, "foo", args.seconds)

    cpu_s = time_call(make_step(model, batch, "cpu", args.optimizer), "cpu", args.seconds)
    print(f"GPT training step (dim {args.dim}, {args.layers} layers, seq 16, batch 4, {args.optimizer}), "
          f"driver {torch_foo.driver()}, torch threads {torch.get_num_threads()}")
    print("| step | ms/step | vs foo eager | vs CPU eager |")
    print("|---|---:|---:|---:|")
    for name, s in (("foo eager", eager_s), (f"foo graph replay ({g.num_tasks()} recorded tasks)", replay_s),
                    ("CPU eager (torch)", cpu_s)):
        print(f"| {name} | {s * 1e3:.2f} | {s / eager_s:.2f}x | {s / cpu_s:.2f}x |")


if __name__ == "__main__":
    main()
