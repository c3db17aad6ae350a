"""torch.compile's default backend, Inductor, on foo (docs/compile.md): fused foo kernels for
pointwise and reduction graphs and their backward, dynamic shapes, the generated source, the disk
cache across processes, nvcc for the cuda target, and the zoo's GPT trained compiled.

Compiling is the cost here (a graph's library: a few seconds of the host compiler), so the tests
share one cache directory per session and each compiles few graphs."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.testing import CompileCounterWithBackend
from torch._inductor.utils import run_and_get_code

import torch_foo
from torch_foo._inductor import compiler
from torch_foo.utils.cpp_extension import find_nvcc


@pytest.fixture(scope="session", autouse=True)
def _kernel_cache(tmp_path_factory):
    """One library cache per session (tests that look at compiles use their own)."""
    root = os.environ.get("TORCH_FOO_TEST_INDUCTOR_CACHE") or str(tmp_path_factory.mktemp("foo_inductor"))
    old = os.environ.get("TORCH_FOO_INDUCTOR_CACHE_DIR")
    os.environ["TORCH_FOO_INDUCTOR_CACHE_DIR"] = root
    yield root
    if old is None:
        os.environ.pop("TORCH_FOO_INDUCTOR_CACHE_DIR", None)
    else:
        os.environ["TORCH_FOO_INDUCTOR_CACHE_DIR"] = old


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def assert_same(actual, expected, **tol):
    assert actual.device == expected.device and actual.dtype == expected.dtype, (actual, expected)
    torch.testing.assert_close(actual.cpu(), expected.cpu(), **tol)


def compiled_code(fn, *args):
    """(result, wrapper source) of a fresh compile of fn."""
    result, codes = run_and_get_code(torch.compile(fn, fullgraph=True), *args)
    return result, "\n".join(codes)


def calls(code):
    """The body of the wrapper's call(): what runs per step."""
    return "\n".join(c.split("def call(self, args):")[1].split("runner = Runner")[0]
                     for c in code.split("# AOT ID:")[1:])


def pointwise(x, y):
    return torch.relu(x * 2 + y).sin() - torch.sigmoid(y) / (1 + x.abs())


def test_pointwise_graph_is_one_foo_kernel():
    x, y = torch.randn(33, 17, device="foo"), torch.randn(17, device="foo")
    out, code = compiled_code(pointwise, x, y)
    assert_same(out, pointwise(x, y))
    torch.testing.assert_close(out.cpu(), pointwise(x.cpu(), y.cpu()))
    # One generated kernel, launched through the project's launch API, no eager op left.
    assert code.count('extern "C" const char* foo_poi_') == 1, code
    assert "torch_foo::launch_independent" in code
    assert "extern_kernels" not in calls(code) and "aten." not in calls(code), calls(code)


def reductions(x, w, b):
    return (x.sum(1), x.mean(0), x.amax(-1), torch.softmax(x, -1), F.layer_norm(x, x.shape[-1:], w, b),
            x.argmax(1), (x * x).sum())


def test_reduction_graphs_with_fused_prologue_and_epilogue():
    x = torch.randn(24, 40, device="foo")
    w, b = torch.randn(40, device="foo"), torch.randn(40, device="foo")
    outs, code = compiled_code(reductions, x, w, b)
    for got, eager, cpu in zip(outs, reductions(x, w, b), reductions(x.cpu(), w.cpu(), b.cpu())):
        assert_same(got, eager, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got.cpu(), cpu, rtol=1e-5, atol=1e-5)
    assert "extern_kernels" not in calls(code) and "aten." not in calls(code), calls(code)
    # sum(1), amax, argmax, softmax (max, sum of exp, division) and layer norm read the same rows:
    # one kernel with several loops over the row; mean(0) and the full sum are two more.
    entries = [line for line in code.splitlines() if line.startswith('extern "C"')]
    assert len(entries) == 3, entries
    assert any("softmax" in e and "layer_norm" in e and "argmax" in e for e in entries), entries


def test_half_precision_pointwise_and_sum():
    x = torch.randn(64, 8, device="foo").half()
    out, _ = compiled_code(lambda t: ((t * 3).exp() + 1).sum(1), x)
    assert out.dtype == torch.float16
    # Fused, the kernel computes in float and rounds once (eager rounds after every op).
    expected = ((x.cpu().float() * 3).exp() + 1).sum(1).half()
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-3, atol=1e-2)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(12, 32), torch.nn.Linear(32, 5)
        self.ln = torch.nn.LayerNorm(32)

    def forward(self, x):
        return torch.log_softmax(self.fc2(F.gelu(self.ln(self.fc1(x)))), -1)


def test_backward_graph_matches_eager_and_cpu():
    torch.manual_seed(0)
    eager = Net().to("foo")
    compiled_model = Net().to("foo")
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model)
    x = torch.randn(9, 12, device="foo")
    target = torch.tensor([0, 3, 1, 2, 4, 4, 1, 0, 2], device="foo")
    for run in (eager, compiled):
        F.nll_loss(run(x), target).backward()
    cpu = Net()
    cpu.load_state_dict({k: v.cpu() for k, v in eager.state_dict().items()})
    F.nll_loss(cpu(x.cpu()), target.cpu()).backward()
    for (name, p), q, c in zip(eager.named_parameters(), compiled_model.parameters(), cpu.parameters()):
        assert q.grad.device.type == "foo", name
        assert_same(q.grad, p.grad, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(q.grad.cpu(), c.grad, rtol=1e-4, atol=1e-5)


def test_dynamic_shapes_compile_once():
    counter = CompileCounterWithBackend("inductor")
    g = torch.compile(lambda x: torch.softmax(x * 2, -1).sum(0) + x.shape[0], backend=counter, dynamic=True)
    for rows, cols in ((3, 5), (7, 11), (16, 2)):
        x = torch.randn(rows, cols, device="foo")
        assert_same(g(x), torch.softmax(x * 2, -1).sum(0) + rows, rtol=1e-5, atol=1e-5)
    assert counter.frame_count == 1


def test_backend_named_foo_and_matmul_falls_back_to_foo_aten():
    a, b = torch.randn(8, 6, device="foo"), torch.randn(6, 4, device="foo")
    fn = torch.compile(lambda a, b: torch.relu(a @ b) + 1, backend="foo")
    assert_same(fn(a, b), torch.relu(a @ b) + 1)
    _, code = compiled_code(lambda a, b: torch.relu(a @ b) + 1, a, b)
    assert "extern_kernels.mm" in calls(code) and "foo_poi_" in calls(code)


@pytest.mark.slow
def test_zoo_unet_trains_compiled_like_eager():
    """Convolutions (foo's aten kernels through Inductor's extern path), batch norm's reductions
    and the ReLU/upsampling/concatenation pointwise code (generated) train as eager does."""
    from test_model_zoo import UNet, _segment

    torch.manual_seed(2)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 1, 16, 16, generator=g).to("foo")
    y = (x > 0).float()
    eager, compiled_model = UNet().to("foo"), UNet().to("foo")
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model)
    losses = {}
    for name, model, run in (("eager", eager, eager), ("compiled", compiled_model, compiled)):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        losses[name] = []
        for _ in range(3):
            opt.zero_grad()
            loss = _segment(run, x, y)
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    torch.testing.assert_close(losses["compiled"], losses["eager"], rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(eager.state_dict().items(), compiled_model.state_dict().values()):
        assert_same(q, p, rtol=1e-3, atol=1e-4)


def test_cpu_inputs_with_foo_intermediates():
    out = torch.compile(lambda x: (x.to("foo") * 2).relu().cpu())(torch.randn(8))
    assert out.device.type == "cpu"


def test_default_backend_still_compiles_cpu_code():
    g = torch.compile(lambda x: torch.sin(x) + 1)
    x = torch.randn(8)
    torch.testing.assert_close(g(x), torch.sin(x) + 1)


_SECOND_PROCESS = """
import torch, torch_foo
from torch_foo._inductor import compiler
x = torch.arange(12.0, device="foo").reshape(3, 4)
out = torch.compile(lambda t: torch.softmax(t.cos() * 3, -1).sum(1))(x)
torch.testing.assert_close(out.cpu(), torch.softmax(x.cpu().cos() * 3, -1).sum(1))
print(compiler.stats["compiled"], compiler.stats["cache_hits"])
"""


def test_second_process_compiles_nothing(tmp_path):
    env = dict(os.environ, TORCH_FOO_INDUCTOR_CACHE_DIR=str(tmp_path / "foo"),
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    runs = [subprocess.run([sys.executable, "-c", _SECOND_PROCESS], env=env, capture_output=True, text=True,
                           timeout=600) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    assert runs[0].stdout.split() == ["1", "0"], runs[0].stdout
    compiled, _ = runs[1].stdout.split()
    assert compiled == "0", runs[1].stdout
    assert len(list((tmp_path / "foo").glob("*/*/kernels.so"))) == 1


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")
def test_generated_kernels_compile_with_nvcc(tmp_path):
    """The cuda target of representative graphs (pointwise, reductions, softmax, layer norm,
    argmax, 16-bit floats, a backward) compiles with nvcc, as the cuda driver would build it."""
    sources = []

    def capture(fn, *args):
        _, code = compiled_code(fn, *args)
        start = code.index("foo_load_module(r'''") + len("foo_load_module(r'''")
        sources.append(code[start:code.index("'''", start)])

    x = torch.randn(16, 24, device="foo")
    capture(pointwise, x, x[0])
    capture(reductions, x, x[0], x[1])
    capture(lambda t: torch.softmax(t.half() * 2, -1), x)
    for i, source in enumerate(sources):
        src = tmp_path / f"graph{i}.cu"
        src.write_text(source)
        cmd = compiler._cuda_command(find_nvcc(), str(src), str(tmp_path / f"graph{i}.o"))
        cmd = [c for c in cmd if not c.startswith("-gencode")] + ["-gencode=arch=compute_90,code=compute_90"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow
def test_zoo_gpt_trains_compiled_like_eager():
    from test_model_zoo import TinyGPT, _lm_loss, _tokens

    torch.manual_seed(0)
    eager = TinyGPT().to("foo")
    compiled_model = TinyGPT().to("foo")
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model)
    tokens, targets = (t.to("foo") for t in _tokens(64))
    losses = {}
    for name, model, run in (("eager", eager, eager), ("compiled", compiled_model, compiled)):
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
        losses[name] = []
        for _ in range(3):
            opt.zero_grad()
            loss = _lm_loss(run, tokens, targets)
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    torch.testing.assert_close(losses["compiled"], losses["eager"], rtol=1e-4, atol=1e-5)
    dim = eager.wte.weight.shape[1]
    for (name, p), q in zip(eager.named_parameters(), compiled_model.parameters()):
        p, q = p.detach(), q.detach()
        if name.endswith("qkv.bias"):
            # The key bias's exact gradient is zero (softmax cancels it): Adam turns its rounding
            # noise into steps of up to lr, as test_model_zoo's GPT case allows.
            assert (q[dim:2 * dim] - p[dim:2 * dim]).abs().max().item() <= 3 * 3e-3
            p, q = torch.cat([p[:dim], p[2 * dim:]]), torch.cat([q[:dim], q[2 * dim:]])
        assert_same(q, p, rtol=1e-3, atol=1e-4)
