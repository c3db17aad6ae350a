"""torch.compile on foo: backend="aot_eager" for functions and modules, forward and backward,
dynamic shapes and autocast; Dynamo's device interface for foo (docs/torch-foo-vs-cuda.md §10).
The default backend, Inductor with foo's kernels, is tests/test_inductor.py's."""

import pytest
import torch
from torch._dynamo.testing import CompileCounterWithBackend

import torch_foo
from conftest import run_python


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def assert_same(actual, expected, **tol):
    assert actual.device == expected.device and actual.dtype == expected.dtype
    torch.testing.assert_close(actual.cpu(), expected.cpu(), **tol)


def f(x, y):
    return torch.relu(x @ y) * 2 + y.sum(0)


def test_aot_eager_function_forward():
    x, y = torch.randn(8, 6, device="foo"), torch.randn(6, 6, device="foo")
    counter = CompileCounterWithBackend("aot_eager")
    out = torch.compile(f, backend=counter, fullgraph=True)(x, y)
    assert_same(out, f(x, y))
    assert counter.frame_count == 1 and counter.op_count >= 4


def test_aot_eager_function_backward():
    x = torch.randn(8, 6, device="foo", requires_grad=True)
    y = torch.randn(6, 6, device="foo", requires_grad=True)
    compiled = torch.compile(f, backend="aot_eager")
    compiled(x, y).square().sum().backward()
    gx, gy = x.grad, y.grad
    x.grad = y.grad = None
    f(x, y).square().sum().backward()
    assert_same(gx, x.grad)
    assert_same(gy, y.grad)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.log_softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


def test_aot_eager_module_training_step_matches_eager():
    torch.manual_seed(0)
    eager = MLP().to("foo")
    compiled_model = MLP().to("foo")
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch.compile(compiled_model, backend="aot_eager")
    x = torch.randn(5, 12, device="foo")
    target = torch.tensor([0, 3, 1, 2, 3], device="foo")
    for model, run in ((eager, eager), (compiled_model, compiled)):
        loss = torch.nn.functional.nll_loss(run(x), target)
        loss.backward()
        torch.optim.SGD(model.parameters(), lr=0.1).step()
    for p, q in zip(eager.parameters(), compiled_model.parameters()):
        assert q.device.type == "foo"
        assert_same(q, p, rtol=1e-5, atol=1e-6)


def test_aot_eager_dynamic_shapes_compile_once():
    counter = CompileCounterWithBackend("aot_eager")
    g = torch.compile(lambda x: (x * 2).sum(0) + x.shape[0], backend=counter, dynamic=True)
    for rows in (3, 5, 9):
        x = torch.randn(rows, 4, device="foo")
        assert_same(g(x), (x * 2).sum(0) + rows)
    assert counter.frame_count == 1


def test_aot_eager_graph_with_host_transfer_and_break():
    counter = CompileCounterWithBackend("aot_eager")

    def h(x):
        y = (x + 1).cpu()
        torch._dynamo.graph_break()
        return y * 2

    x = torch.randn(4, device="foo")
    out = torch.compile(h, backend=counter)(x)
    assert out.device.type == "cpu"
    torch.testing.assert_close(out, (x.cpu() + 1) * 2)
    assert counter.frame_count == 2


def test_aot_eager_with_autocast():
    def mm(a, b):
        with torch.autocast("foo", dtype=torch.float16):
            return a @ b

    a, b = torch.randn(4, 8, device="foo"), torch.randn(8, 3, device="foo")
    out = torch.compile(mm, backend="aot_eager")(a, b)
    assert out.dtype == torch.float16
    assert_same(out, mm(a, b))


def test_dynamo_device_interface():
    from torch._dynamo.device_interface import get_interface_for_device

    iface = get_interface_for_device("foo")
    assert iface is get_interface_for_device(torch.device("foo", 1))
    assert iface.is_available() and iface.device_count() == torch.foo.device_count()
    assert iface.current_device() == 0
    assert iface.exchange_device(1) == 0 and iface.current_device() == 1
    assert iface.maybe_exchange_device(0) == 1 and iface.current_device() == 0
    with iface.device(1):
        assert torch.foo.current_device() == 1
    assert torch.foo.current_device() == 0
    s = iface.Stream()
    assert isinstance(s, torch.Stream) and s.device == torch.device("foo", 0)
    with iface.stream(s):
        assert iface.current_stream() == s
        x = torch.ones(1000, device="foo") * 3
        e = iface.Event()
        e.record()
    iface.synchronize()
    assert e.query() and x.sum().item() == 3000
    assert iface.current_stream() == torch.foo.default_stream()
    assert iface.get_device_properties(0).name == torch.foo.get_device_properties(0).name
    assert iface.Worker.get_device_properties().warp_size == 32
    major, minor = torch.foo.get_device_capability()
    assert iface.get_compute_capability() == major * 10 + minor
    assert iface.get_raw_stream(0) == torch.foo.current_stream(0).stream_id
    with pytest.raises(torch_foo.InductorUnsupportedError, match="no Triton"):
        iface.raise_if_triton_unavailable()


def test_import_torch_does_not_import_dynamo():
    """The registrations wait for Dynamo/Inductor: `import torch` (which autoloads torch_foo)
    stays as fast as before; importing Dynamo afterwards still finds the foo interface."""
    code = (
        "import sys, torch\n"
        "assert 'torch._dynamo' not in sys.modules and 'torch._inductor' not in sys.modules\n"
        "from torch._dynamo.device_interface import get_interface_for_device\n"
        "print(get_interface_for_device('foo').__name__)\n"
    )
    run = run_python(code)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "FooInterface"
