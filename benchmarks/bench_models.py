"""One training step (forward, backward, AdamW step) of the model zoo's models on foo and on a
torch baseline, side by side in one run, with the fallback count of the foo step.

    python benchmarks/bench_models.py                 # sim driver vs torch on the CPU
    TORCH_FOO_DRIVER=cuda python benchmarks/bench_models.py --baseline cuda

The models and their losses are tests/test_model_zoo.py's. A model with ops that still fall back
to the CPU is timed anyway (silent policy); its fallback count per step says how many ops did.
"""
import argparse
import copy
import sys
from pathlib import Path

import torch

import torch_foo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_model_zoo as zoo  # noqa: E402

from bench_ops import time_call  # noqa: E402


def models():
    g = torch.Generator().manual_seed(0)
    yield "GPT decoder (2 layers, dim 32, seq 16, batch 4)", zoo.TinyGPT(), zoo._tokens(64), zoo._lm_loss
    yield ("CNN (2 conv+BN, 8x3x16x16)", zoo.CNN(),
           (torch.randn(8, 3, 16, 16, generator=g), torch.randint(0, 10, (8,), generator=g)), zoo._classify)
    x = torch.randn(2, 1, 16, 16, generator=g)
    yield "U-Net (2 levels, 2x1x16x16)", zoo.UNet(), (x, (x > 0).float()), zoo._segment
    try:
        import transformers
    except ImportError:
        return
    config = transformers.GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2)
    yield ("HF GPT2LMHeadModel (2 layers, dim 32)", transformers.GPT2LMHeadModel(config), zoo._tokens(64),
           lambda m, t, y: m(input_ids=t, labels=t).loss)


def step_fn(model, batch, loss_fn, device):
    model = copy.deepcopy(model).to(device)
    inputs = [t.to(device) for t in batch]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss_fn(model, *inputs).backward()
        opt.step()

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="cpu")
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    torch_foo.set_fallback_policy("silent")
    print("| model | foo ms/step | baseline ms/step | foo / baseline speed | fallbacks per foo step |")
    print("|---|---:|---:|---:|---:|")
    for name, model, batch, loss_fn in models():
        foo_step = step_fn(model, batch, loss_fn, "foo")
        foo_step()
        torch_foo.reset_fallback_report()
        foo_step()
        fallbacks = sum(torch_foo.fallback_report().values())
        foo_s = time_call(foo_step, "foo", args.seconds)
        base_s = time_call(step_fn(model, batch, loss_fn, args.baseline), args.baseline, args.seconds)
        print(f"| {name} | {foo_s * 1e3:.1f} | {base_s * 1e3:.1f} | {base_s / foo_s:.3f} | {fallbacks} |")


if __name__ == "__main__":
    main()
