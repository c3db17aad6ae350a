"""Fused LSTM/GRU cells (csrc/kernels/ops/rnn.cu, csrc/aten/ops/rnn.cpp): nn.LSTM and nn.GRU on foo against
the CPU from the same weights — multi-layer, bidirectional, batch_first, packed sequences of
ragged lengths — forward outputs, final states and every gradient; and the cell ops themselves
(no CPU kernel exists for them) against their formulas."""

import pytest
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import torch_foo
from conftest import foo_kernels_only


@pytest.fixture(autouse=True)
def _fallback_free():
    """nn.LSTM/nn.GRU run with nothing on the CPU: the cells, the gate matmuls and the
    data-movement ops they reach (cat/stack of steps and directions, index_select/index_add/scatter
    of packing and unsorting) are all native."""
    with foo_kernels_only():
        yield


def run_model(model, x, lengths, device, packed):
    model = model.to(device)
    x = x.to(device).detach().requires_grad_()
    if packed:
        inp = pack_padded_sequence(x, lengths, batch_first=model.batch_first, enforce_sorted=False)
        out, state = model(inp)
        out = pad_packed_sequence(out, batch_first=model.batch_first)[0]
    else:
        out, state = model(x)
    states = state if isinstance(state, tuple) else (state,)
    loss = (out * out).sum() + sum((s * s).sum() for s in states)
    loss.backward()
    return [out, *states, x.grad, *(p.grad for p in model.parameters())]


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize(
    "layers,bidirectional,batch_first,packed",
    [(1, False, False, False), (2, True, True, False), (2, False, False, True), (1, True, True, True)],
)
def test_rnn_against_cpu(kind, layers, bidirectional, batch_first, packed):
    torch.manual_seed(layers * 10 + bidirectional * 2 + packed)
    cls = getattr(nn, kind)
    cpu = cls(5, 7, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first).double()
    foo = cls(5, 7, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first).double()
    foo.load_state_dict(cpu.state_dict())
    T, B = 6, 4
    x = torch.randn((B, T, 5) if batch_first else (T, B, 5), dtype=torch.float64)
    lengths = torch.tensor([6, 3, 5, 1])
    expected = run_model(cpu, x, lengths, "cpu", packed)
    actual = run_model(foo, x, lengths, "foo", packed)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.device.type == "foo" and a.dtype == e.dtype
        torch.testing.assert_close(a.cpu(), e, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_cells_against_formulas(dtype, tol):
    torch.manual_seed(0)
    B, H = 3, 5
    ig, hg = torch.randn(B, 4 * H, dtype=torch.float64), torch.randn(B, 4 * H, dtype=torch.float64)
    cx, bi, bh = torch.randn(B, H, dtype=torch.float64), torch.randn(4 * H, dtype=torch.float64), torch.randn(4 * H, dtype=torch.float64)
    i, f, g, o = (ig + hg + bi + bh).chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    dev = [t.to(dtype).to("foo") for t in (ig, hg, cx, bi, bh)]
    got_hy, got_cy, ws = torch.ops.aten._thnn_fused_lstm_cell(*dev)
    assert got_hy.dtype == dtype and got_hy.device.type == "foo" and ws.shape == (B, 4 * H)
    torch.testing.assert_close(got_hy.cpu(), hy.to(dtype), rtol=tol, atol=tol)
    torch.testing.assert_close(got_cy.cpu(), cy.to(dtype), rtol=tol, atol=tol)

    ig3, hg3, hx = ig[:, : 3 * H], hg[:, : 3 * H], cx
    r = (ig3[:, :H] + hg3[:, :H]).sigmoid()
    z = (ig3[:, H : 2 * H] + hg3[:, H : 2 * H]).sigmoid()
    n = (ig3[:, 2 * H :] + r * hg3[:, 2 * H :]).tanh()
    expected = n + z * (hx - n)
    got, ws = torch.ops.aten._thnn_fused_gru_cell(*(t.to(dtype).to("foo") for t in (ig3, hg3, hx)))
    assert ws.shape == (B, 5 * H)
    torch.testing.assert_close(got.cpu(), expected.to(dtype), rtol=tol, atol=tol)


def test_cell_errors():
    g = torch.randn(2, 8, device="foo")
    with pytest.raises(RuntimeError, match=r"_thnn_fused_lstm_cell: expected cx of shape \[2, 2\]"):
        torch.ops.aten._thnn_fused_lstm_cell(g, g, torch.randn(2, 3, device="foo"))
    with pytest.raises(NotImplementedError, match="_thnn_fused_gru_cell: foo has no kernel for dtype Long"):
        gi = torch.ones(2, 6, dtype=torch.long, device="foo")
        torch.ops.aten._thnn_fused_gru_cell(gi, gi, torch.ones(2, 2, dtype=torch.long, device="foo"))
