"""Graph capture and replay (torch.foo.FooGraph, torch.foo.graph, make_graphed_callables), as
torch.cuda's: a capture records a side stream's work without running it, its allocations come
from a private pool the graph keeps (so a replay writes the addresses the capture saw), and a
replay re-runs the recorded launches on the current stream. Calls that wait for a capturing stream
raise CUDA's "operation not permitted when stream is capturing" and leave the device usable."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import foo_kernels_only

NOT_PERMITTED = "operation not permitted when stream is capturing"


def _capture(fn, *args, pool=None):
    g = torch.foo.FooGraph()
    with torch.foo.graph(g, pool=pool):
        out = fn(*args)
    return g, out


def test_replay_of_simple_ops_matches_eager():
    x = torch.randn(37, 19)
    w = torch.randn(19, 5)
    static_x, static_w = x.to("foo"), w.to("foo")

    def step(a, b):
        return (torch.relu(a * 2 - 1) @ b).softmax(-1).sum(0) + a.mean()

    g, out = _capture(step, static_x, static_w)
    assert g.num_tasks() >= 5  # kernels recorded, not run
    g.replay()
    expected = step(x, w)
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-5, atol=1e-6)
    assert out.device.type == "foo" and out.dtype == torch.float32
    # Bit for bit the eager foo result: the same kernels with the same arguments.
    assert torch.equal(out.cpu(), step(static_x, static_w).cpu())


def test_replay_after_new_static_inputs_gives_new_results():
    static = torch.zeros(8, 3, device="foo")
    g, out = _capture(lambda a: (a.exp() * 3).cumsum(0), static)
    for seed in range(3):
        new = torch.randn(8, 3, generator=torch.Generator().manual_seed(seed))
        static.copy_(new)
        g.replay()
        torch.testing.assert_close(out.cpu(), (new.exp() * 3).cumsum(0), rtol=1e-5, atol=1e-5)


def test_capture_runs_nothing_until_replay():
    static = torch.ones(4, device="foo")
    g, out = _capture(lambda a: a.add_(1), static)
    assert static.cpu().tolist() == [1.0] * 4  # recorded only
    g.replay()
    g.replay()
    assert static.cpu().tolist() == [3.0] * 4
    assert out.data_ptr() == static.data_ptr()


def test_private_pool_addresses_are_stable_and_kept():
    static = torch.randn(256, device="foo")

    def step(a):
        t = a * 2  # a temporary freed during capture: its block stays the graph's
        return t.sin() + 1

    g, out = _capture(step, static)
    pool = g.pool()
    segments = [s for s in torch.foo.memory_snapshot() if tuple(s["segment_pool_id"]) == pool]
    assert len(segments) >= 2  # the temporary's and the output's blocks
    addresses = {s["address"] for s in segments}
    assert out.data_ptr() in addresses
    # Eager allocations of the same size on the same stream never get the graph's blocks.
    with torch.foo.stream(torch.foo.graph.default_capture_stream):
        others = [torch.empty(256, device="foo") for _ in range(8)]
    assert not addresses & {t.data_ptr() for t in others}
    g.replay()
    first = out.clone()
    g.replay()
    assert torch.equal(out, first)
    torch.testing.assert_close(out.cpu(), (static.cpu() * 2).sin() + 1)
    # The pool is released with the graph.
    g.reset()
    del out
    torch.foo.empty_cache()
    assert not [s for s in torch.foo.memory_snapshot() if tuple(s["segment_pool_id"]) == pool]


def test_graphs_share_a_pool():
    pool = torch.foo.graph_pool_handle()
    a = torch.randn(64, device="foo")
    g1, mid = _capture(lambda x: x * 3, a, pool=pool)
    g2, out = _capture(lambda x: x + 1, mid, pool=pool)
    assert g1.pool() == g2.pool() == pool
    g1.replay()
    g2.replay()
    torch.testing.assert_close(out.cpu(), a.cpu() * 3 + 1)


def test_capture_on_the_default_stream_is_refused():
    g = torch.foo.FooGraph()
    with pytest.raises(RuntimeError, match="non-default stream"):
        g.capture_begin()
    with pytest.raises(RuntimeError, match="nothing to replay"):
        g.replay()


@pytest.mark.parametrize(
    "forbidden",
    [
        pytest.param(lambda t: t.sum().item(), id="item"),
        pytest.param(lambda t: t.cpu(), id="cpu"),
        pytest.param(lambda t: torch.foo.synchronize(), id="synchronize"),
        pytest.param(lambda t: torch.foo.current_stream().synchronize(), id="stream_synchronize"),
        pytest.param(lambda t: torch.foo.current_stream().query(), id="stream_query"),
        pytest.param(lambda t: torch.rand(3, device="foo"), id="rng"),
    ],
)
def test_forbidden_calls_raise_and_leave_the_device_usable(forbidden):
    static = torch.arange(16.0, device="foo")
    g = torch.foo.FooGraph()
    with pytest.raises(RuntimeError, match=NOT_PERMITTED + "|random number generation"):
        with torch.foo.graph(g):
            y = static * 2
            forbidden(y)
    assert not torch.foo.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="nothing to replay"):
        g.replay()
    # The device works, on the capture stream and the default one, and a new capture succeeds.
    assert (static * 2).sum().item() == 240.0
    with torch.foo.stream(torch.foo.graph.default_capture_stream):
        assert (static + 1).cpu().tolist() == list(range(1, 17))
    g2, out = _capture(lambda a: a - 1, static)
    g2.replay()
    assert out.cpu().tolist() == [float(i - 1) for i in range(16)]


def test_a_copy_from_the_host_is_replayed_with_the_captured_bytes():
    static = torch.zeros(16, device="foo")
    host = torch.arange(16.0)
    g, _ = _capture(lambda t: t.copy_(host).mul_(2), static)
    host.fill_(-1)  # pageable: the capture staged the bytes it had then
    g.replay()
    assert static.cpu().tolist() == [2.0 * i for i in range(16)]


def test_event_recorded_in_a_capture_cannot_be_waited_on_by_the_host():
    static = torch.ones(4, device="foo")
    g = torch.foo.FooGraph()
    with pytest.raises(RuntimeError, match=NOT_PERMITTED):
        with torch.foo.graph(g):
            static.mul_(2)
            e = torch.foo.Event()
            e.record()
            e.synchronize()
    assert static.sum().item() == 4.0


def test_a_joined_stream_is_captured_and_must_rejoin():
    static = torch.ones(64, device="foo")
    side = torch.foo.Stream()
    g = torch.foo.FooGraph()
    with torch.foo.graph(g):
        a = static * 2
        side.wait_stream(torch.foo.current_stream())  # the side stream joins the capture
        with torch.foo.stream(side):
            b = a + 1
        torch.foo.current_stream().wait_stream(side)  # and rejoins
        out = b * a
    g.replay()
    assert out.cpu().tolist() == [6.0] * 64
    g2 = torch.foo.FooGraph()
    with pytest.raises(RuntimeError, match="unjoined"):
        with torch.foo.graph(g2):
            side.wait_stream(torch.foo.current_stream())
            with torch.foo.stream(side):
                static.add_(1)
    assert static.sum().item() == 64.0


def test_replay_on_another_stream_and_async_errors_surface():
    table = torch.randn(10, 4, device="foo")
    idx = torch.tensor([1, 2, 3], device="foo")
    g, out = _capture(lambda i: table[i] * 2, idx)
    g.replay()
    torch.testing.assert_close(out.cpu(), table.cpu()[[1, 2, 3]] * 2)
    idx.fill_(11)  # out of range: the captured index kernel reports it on the device
    g.replay()
    with pytest.raises(IndexError, match="index 11 is out of bounds for dimension 0 with size 10"):
        torch.foo.synchronize()
    idx.fill_(0)
    side = torch.foo.Stream()
    side.wait_stream(torch.foo.current_stream())  # as on CUDA: streams order only through events
    with torch.foo.stream(side):
        g.replay()
    torch.foo.current_stream().wait_stream(side)
    torch.testing.assert_close(out.cpu(), table.cpu()[[0, 0, 0]] * 2)


# ---- a whole training step: the model zoo's GPT --------------------------------------------------


def _gpt_and_batch():
    import test_model_zoo as zoo

    torch.manual_seed(0)
    return zoo.TinyGPT(), zoo._tokens(64), zoo._lm_loss


@pytest.mark.parametrize("optimizer", ["sgd", "adamw_capturable"])
def test_gpt_training_step_replayed_matches_eager_bit_for_bit(optimizer):
    model, (tokens, targets), loss_fn = _gpt_and_batch()
    steps = 4

    def make(m):
        if optimizer == "sgd":
            return torch.optim.SGD(m.parameters(), lr=0.05)
        return torch.optim.AdamW(m.parameters(), lr=3e-3, weight_decay=0.01, capturable=True)

    def step(m, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(m, x, y)
        loss.backward()
        opt.step()
        return loss

    with foo_kernels_only():
        eager = copy.deepcopy(model).to("foo")
        graphed = copy.deepcopy(model).to("foo")
        x, y = tokens.to("foo"), targets.to("foo")
        eager_opt, graphed_opt = make(eager), make(graphed)
        # One eager step each first: optimizer state is created outside the capture (as CUDA needs).
        step(eager, eager_opt, x, y)
        step(graphed, graphed_opt, x, y)
        eager_losses = [step(eager, eager_opt, x, y).detach().clone() for _ in range(steps)]

        static_x, static_y = x.clone(), y.clone()
        g = torch.foo.FooGraph()
        with torch.foo.graph(g):
            static_loss = step(graphed, graphed_opt, static_x, static_y)
        graphed_losses = []
        for _ in range(steps):
            g.replay()
            graphed_losses.append(static_loss.detach().clone())
        torch.foo.synchronize()
    assert torch.equal(torch.stack(graphed_losses).cpu(), torch.stack(eager_losses).cpu())
    assert graphed_losses[-1].item() < graphed_losses[0].item()
    for (name, a), (_, b) in zip(eager.state_dict().items(), graphed.state_dict().items()):
        assert torch.equal(a.cpu(), b.cpu()), name
    assert graphed.head.weight is graphed.wte.weight


# ---- make_graphed_callables ----------------------------------------------------------------------


def test_make_graphed_callables_forward_and_backward_match_eager():
    torch.manual_seed(1)
    module = nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.Linear(16, 3)).to("foo")
    reference = copy.deepcopy(module)
    sample = torch.randn(5, 12, device="foo", requires_grad=True)
    graphed = torch.foo.make_graphed_callables(module, (sample,))
    assert graphed is module
    for seed in range(3):
        module.zero_grad(set_to_none=True)
        reference.zero_grad(set_to_none=True)
        x = torch.randn(5, 12, generator=torch.Generator().manual_seed(seed)).to("foo").requires_grad_()
        x_ref = x.detach().clone().requires_grad_()
        out = graphed(x)
        expected = reference(x_ref)
        assert torch.equal(out.cpu(), expected.cpu())
        grad = torch.randn(5, 3).to("foo")
        out.backward(grad)
        expected.backward(grad)
        assert torch.equal(x.grad.cpu(), x_ref.grad.cpu())
        for (name, p), q in zip(module.named_parameters(), reference.parameters()):
            assert torch.equal(p.grad.cpu(), q.grad.cpu()), name
    module.eval()  # another mode than at capture: the module's own forward runs
    torch.testing.assert_close(graphed(x_ref.detach()).cpu(), reference(x_ref.detach()).cpu())


def test_make_graphed_callables_function_and_bad_input():
    w = torch.randn(4, 4, device="foo", requires_grad=True)

    def fn(a):
        return F.silu(a @ w)

    sample = torch.randn(3, 4, device="foo", requires_grad=True)
    g = torch.foo.make_graphed_callables(fn, (sample,))
    x = torch.randn(3, 4, device="foo", requires_grad=True)
    out = g(x)
    torch.testing.assert_close(out, F.silu(x @ w))
    out.sum().backward()
    expected = torch.autograd.grad(F.silu(x @ w).sum(), x)[0]
    torch.testing.assert_close(x.grad, expected)
    with pytest.raises(TypeError, match="tensors only"):
        torch.foo.make_graphed_callables(fn, (3,))


def test_cuda_names_and_capture_error_mode():
    assert torch.foo.CUDAGraph is torch.foo.FooGraph
    g = torch.foo.FooGraph()
    with pytest.raises(ValueError, match="capture_error_mode"):
        with torch.foo.graph(g, capture_error_mode="loose"):
            pass
    static = torch.ones(3, device="foo")
    with torch.foo.graph(g, capture_error_mode="relaxed"):
        assert torch.foo.is_current_stream_capturing()
        out = static + 1
    assert not torch.foo.is_current_stream_capturing()
    g.replay()
    assert out.cpu().tolist() == [2.0] * 3
