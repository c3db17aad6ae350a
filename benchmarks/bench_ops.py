"""Throughput of foo kernels against a torch baseline, measured side by side in one run.

    python benchmarks/bench_ops.py                    # sim driver vs torch on the CPU
    TORCH_FOO_DRIVER=cuda python benchmarks/bench_ops.py --baseline cuda   # on a GPU machine

Prints a markdown table: per op, the time per call on foo and on the baseline, the achieved
bandwidth (elementwise, reductions, softmax) or TFLOP/s (matmul), and foo's speed relative to the
baseline (>1 means foo is faster). Times are medians of several repeats after a warm-up.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import torch_foo


def synchronize(device: str) -> None:
    if device.startswith("foo"):
        torch.foo.synchronize()
    elif device.startswith("cuda"):
        torch.cuda.synchronize()


def time_call(fn, device: str, min_seconds: float, repeats: int = 5) -> float:
    """Median seconds per call of fn on device, each repeat running at least min_seconds / repeats."""
    fn()
    synchronize(device)
    calls = 1
    while True:  # find a call count that fills one repeat
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        synchronize(device)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds / repeats or calls >= 1 << 16:
            break
        calls *= 2
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        synchronize(device)
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def cases(scale: int, dtype: torch.dtype):
    """(name, make_inputs(device), fn, bytes moved, flops) per benchmark."""
    n = scale
    rows, cols = max(n // 1024, 1), 1024
    m = int(round((scale / 4) ** (1 / 2))) // 16 * 16 or 16  # matmul side: ~scale/4 elements per operand
    esize = torch.empty((), dtype=dtype).element_size()
    yield ("add", lambda d: (torch.randn(n, device=d).to(dtype), torch.randn(n, device=d).to(dtype)),
           lambda a, b: torch.add(a, b), 3 * n * esize, 0)
    yield ("exp", lambda d: (torch.randn(n, device=d).to(dtype),), lambda a: torch.exp(a), 2 * n * esize, 0)
    yield ("sum", lambda d: (torch.randn(n, device=d).to(dtype),), lambda a: torch.sum(a), n * esize, 0)
    yield ("softmax", lambda d: (torch.randn(rows, cols, device=d).to(dtype),),
           lambda a: torch.softmax(a, dim=-1), 2 * rows * cols * esize, 0)
    yield (f"mm {m}x{m}x{m}", lambda d: (torch.randn(m, m, device=d).to(dtype), torch.randn(m, m, device=d).to(dtype)),
           lambda a, b: torch.mm(a, b), 3 * m * m * esize, 2 * m * m * m)
    # CNN ops: a 3x3 convolution keeping 32 channels of a batch of 32x32 images (~scale/4 input
    # elements), forward and forward + backward (input and weight gradients: three GEMMs), and
    # layer norm over rows of 1024.
    b, c, hw = max(scale // (4 * 32 * 32 * 32), 1), 32, 32
    conv_flops = 2 * b * c * hw * hw * c * 9
    conv_bytes = (2 * b * c * hw * hw + c * c * 9) * esize

    def conv_inputs(d, grad=False):
        x = torch.randn(b, c, hw, hw, device=d).to(dtype).requires_grad_(grad)
        w = (torch.randn(c, c, 3, 3, device=d) / 17).to(dtype).requires_grad_(grad)
        return (x, w, torch.randn(b, c, hw, hw, device=d).to(dtype)) if grad else (x, w)

    yield (f"conv2d fwd {b}x{c}x{hw}x{hw} k3", conv_inputs, lambda x, w: F.conv2d(x, w, padding=1), conv_bytes, conv_flops)
    yield (f"conv2d fwd+bwd {b}x{c}x{hw}x{hw} k3", lambda d: conv_inputs(d, grad=True),
           lambda x, w, g: torch.autograd.grad(F.conv2d(x, w, padding=1), (x, w), g), 3 * conv_bytes, 3 * conv_flops)

    def ln_inputs(d, grad=False):
        x = torch.randn(rows, cols, device=d).to(dtype).requires_grad_(grad)
        w, bias = torch.randn(cols, device=d).to(dtype).requires_grad_(grad), torch.randn(cols, device=d).to(dtype)
        return (x, w, bias, torch.randn(rows, cols, device=d).to(dtype)) if grad else (x, w, bias)

    yield ("layer_norm fwd", ln_inputs, lambda x, w, bias: F.layer_norm(x, (cols,), w, bias), 2 * rows * cols * esize, 0)
    yield ("layer_norm fwd+bwd", lambda d: ln_inputs(d, grad=True),
           lambda x, w, bias, g: torch.autograd.grad(F.layer_norm(x, (cols,), w, bias), (x, w), g),
           5 * rows * cols * esize, 0)
    # Indexing and data movement. An embedding table of `rows` x 1024 read through n / 1024 indices.
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, rows, (rows,), generator=gen)
    yield ("cat 2 x 1 element", lambda d: (torch.ones(1, device=d).to(dtype), torch.ones(1, device=d).to(dtype)),
           lambda a, b: torch.cat([a, b]), 4 * esize, 0)
    yield ("cat 2 x n/2", lambda d: (torch.randn(n // 2, device=d).to(dtype), torch.randn(n // 2, device=d).to(dtype)),
           lambda a, b: torch.cat([a, b]), 2 * n * esize, 0)
    yield ("index_select (embedding)", lambda d: (torch.randn(rows, cols, device=d).to(dtype), tokens.to(d)),
           lambda w, i: w.index_select(0, i), 2 * rows * cols * esize, 0)
    yield ("embedding_dense_backward", lambda d: (torch.randn(rows, cols, device=d).to(dtype), tokens.to(d)),
           lambda g, i: torch.ops.aten.embedding_dense_backward(g, i, rows, -1, False), 3 * rows * cols * esize, 0)

    # Attention (the fused SDPA kernel on foo, torch's CPU flash attention as baseline): ~scale/16
    # elements per operand, heads of 64, causal; and a 2-layer LSTM (fused cells), forward+backward.
    sb, sh, sl, se = 2, 4, max(scale // (16 * 2 * 4 * 64), 16), 64
    sdpa_flops = 4 * sb * sh * sl * sl * se // 2  # two matmuls, half the scores under causal

    def sdpa_inputs(d, grad=False):
        qkv = [torch.randn(sb, sh, sl, se, device=d).to(dtype).requires_grad_(grad) for _ in range(3)]
        return (*qkv, torch.randn(sb, sh, sl, se, device=d).to(dtype)) if grad else tuple(qkv)

    yield (f"sdpa fwd {sb}x{sh}x{sl}x{se} causal", sdpa_inputs,
           lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), 4 * sb * sh * sl * se * esize, sdpa_flops)
    yield (f"sdpa fwd+bwd {sb}x{sh}x{sl}x{se} causal", lambda d: sdpa_inputs(d, grad=True),
           lambda q, k, v, g: torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), g),
           8 * sb * sh * sl * se * esize, 3 * sdpa_flops)
    lt, lb, lh = 32, 16, 128

    def lstm_inputs(d):
        torch.manual_seed(0)
        model = torch.nn.LSTM(lh, lh, num_layers=2).to(d, dtype)
        return model, torch.randn(lt, lb, lh, device=d).to(dtype).requires_grad_()

    def lstm_step(model, x):
        out, _ = model(x)
        return torch.autograd.grad(out.sum(), [x, *model.parameters()])

    yield (f"lstm fwd+bwd 2 layers T{lt} B{lb} H{lh}", lstm_inputs, lstm_step, 0, 3 * 2 * lt * 2 * lb * lh * 8 * lh)


def overhead(device: str, min_seconds: float) -> float:
    """Seconds per call of a 1-element add: dispatch, launch and queueing, no real work."""
    x = torch.ones(1, device=device)
    return time_call(lambda: torch.add(x, x), device, min_seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="cpu", help="torch device to compare with (cpu or cuda)")
    parser.add_argument("--scale", type=int, default=1 << 20, help="elements per operand")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16", "float64"])
    parser.add_argument("--seconds", type=float, default=1.0, help="time budget per measurement")
    parser.add_argument("--only", default="", help="comma-separated op name prefixes to run (default: all)")
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    torch_foo.set_fallback_policy("error")  # a benchmark of a fallback would measure the CPU

    print(f"foo driver: {torch_foo.driver()}, baseline: {args.baseline}, dtype: {args.dtype}, "
          f"elements: {args.scale}, torch {torch.__version__}, threads: {torch.get_num_threads()}")
    print()
    print("| op | foo µs/call | baseline µs/call | foo GB/s | foo TFLOP/s | foo / baseline speed |")
    print("|---|---:|---:|---:|---:|---:|")
    only = [p for p in args.only.split(",") if p]
    for name, make, fn, nbytes, flops in cases(args.scale, dtype):
        if only and not any(name.startswith(p) for p in only):
            continue
        torch.manual_seed(0)
        foo_inputs, base_inputs = make("foo"), make(args.baseline)
        try:
            t_foo = time_call(lambda: fn(*foo_inputs), "foo", args.seconds)
        except NotImplementedError as error:  # not native: nothing of foo's to measure
            print(f"| {name} | not native: {str(error).splitlines()[0][:60]} | | | | |")
            continue
        t_base = time_call(lambda: fn(*base_inputs), args.baseline, args.seconds)
        tflops = f"{flops / t_foo / 1e12:.3f}" if flops else ""
        gbs = f"{nbytes / t_foo / 1e9:.2f}" if nbytes else ""
        print(f"| {name} | {t_foo * 1e6:.1f} | {t_base * 1e6:.1f} | {gbs} | {tflops} | "
              f"{t_base / t_foo:.3f} |")
    t_foo, t_base = overhead("foo", args.seconds), overhead(args.baseline, args.seconds)
    print(f"| per-op overhead (1-element add) | {t_foo * 1e6:.1f} | {t_base * 1e6:.1f} | | | {t_base / t_foo:.3f} |")


if __name__ == "__main__":
    main()
