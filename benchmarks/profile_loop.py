"""A tight loop of one tiny op, to attach a profiler to (docs/performance.md, "How to measure").

    python benchmarks/profile_loop.py add foo 2000000 &
    perf record -F 2999 -g -p $! -o add.data -- sleep 5

op: add | mul | relu | sum | matmul | softmax (one element; matmul 8x8; softmax one row of 8);
device: foo | cpu; calls: how many (the device is synchronised every 1000 calls).
"""
import sys

import torch

import torch_foo  # noqa: F401


def main() -> None:
    op, device, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    a = torch.ones(8, 8, device=device) if op == "matmul" else torch.ones(1, 8 if op == "softmax" else 1, device=device)
    b = torch.ones_like(a)
    fn = {
        "add": lambda: torch.add(a, b),
        "mul": lambda: torch.mul(a, b),
        "relu": lambda: torch.relu(a),
        "sum": lambda: torch.sum(a),
        "matmul": lambda: torch.matmul(a, b),
        "softmax": lambda: torch.softmax(a, dim=-1),
    }[op]
    for i in range(calls):
        fn()
        if device == "foo" and i % 1000 == 999:
            torch.foo.synchronize()


if __name__ == "__main__":
    main()
