"""A model zoo trained natively: each model takes 10 AdamW steps on foo and on the CPU from the
same weights, under the `error` fallback policy (an op running on the CPU fails the test), and its
losses, weights and buffers (BatchNorm running statistics) must match the CPU's.

Every op these models reach is native on main (indexing, normalisation, convolution, pooling,
attention, RNN cells, isneginf's formula): no case is skipped, and an op that loses its foo kernel
fails the case through the fallback policy, naming the op.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch_foo
from conftest import foo_kernels_only

pytestmark = pytest.mark.slow

STEPS = 10


def _train(model, batch, loss_fn, device, lr=3e-3):
    model = model.to(device)
    inputs = [t.to(device) for t in batch]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(model, *inputs)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack([loss.cpu() for loss in losses]), {k: v.detach().cpu() for k, v in model.state_dict().items()}


def _compare(model, batch, loss_fn, rtol=1e-4, atol=1e-5, lr=3e-3, state_atol=None, noise=()):
    """Train copies of `model` on the CPU and on foo (fallbacks are errors) and compare.

    `noise`: (state name, slice) pairs of parameters whose exact gradient is zero, so what they
    get is rounding noise, which Adam normalises into steps of up to lr: there the two runs must
    only stay within STEPS * lr of each other (and of the start)."""
    cpu_losses, cpu_state = _train(copy.deepcopy(model), batch, loss_fn, "cpu", lr)
    with foo_kernels_only():
        foo_losses, foo_state = _train(copy.deepcopy(model), batch, loss_fn, "foo", lr)
    torch.testing.assert_close(foo_losses, cpu_losses, rtol=rtol, atol=atol)
    assert foo_losses[-1] < foo_losses[0], "the model did not train"
    for name, part in noise:
        diff = (foo_state[name][part] - cpu_state[name][part]).abs().max().item()
        assert diff <= STEPS * lr, f"{name}[{part}]: {diff} apart"
        foo_state[name][part] = cpu_state[name][part]
    for name, expected in cpu_state.items():
        torch.testing.assert_close(foo_state[name], expected, rtol=rtol, atol=state_atol or atol, msg=lambda m, n=name: f"{n}: {m}")


# ---- GPT-style decoder: tied embedding/head, causal SDPA ------------------------------------------


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=4, layers=2, seq=16):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(seq, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2

    def forward(self, tokens):
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        return self.head(self.ln_f(self.blocks(self.wte(tokens) + self.wpe(pos))))


def _lm_loss(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def _tokens(vocab, batch=4, seq=16):
    g = torch.Generator().manual_seed(3)
    tokens = torch.randint(0, vocab, (batch, seq + 1), generator=g)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def test_gpt_decoder_tied_causal_sdpa():
    torch.manual_seed(0)
    model = TinyGPT()
    # The key bias adds q . b_k to every score of a query row, which softmax cancels: its gradient
    # is rounding noise (as a conv bias before BatchNorm, see CNN).
    dim = model.wte.weight.shape[1]
    key_bias = [(f"blocks.{i}.qkv.bias", slice(dim, 2 * dim)) for i in range(len(model.blocks))]
    _compare(model, _tokens(64), _lm_loss, noise=key_bias)
    # The tie survives the move and the steps.
    foo_model = copy.deepcopy(model).to("foo")
    assert foo_model.head.weight is foo_model.wte.weight


# ---- CNN: Conv2d, BatchNorm2d, MaxPool2d, AdaptiveAvgPool2d, Dropout -----------------------------


class CNN(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        # No bias before BatchNorm: it cancels, leaving a rounding-noise gradient Adam would amplify.
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
        )
        self.dropout = nn.Dropout(p)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.dropout(self.features(x).flatten(1)))


def _classify(model, x, t):
    return F.cross_entropy(model(x), t)


def test_cnn_batchnorm_pooling_dropout():
    torch.manual_seed(1)
    g = torch.Generator().manual_seed(4)
    batch = (torch.randn(8, 3, 16, 16, generator=g), torch.randint(0, 10, (8,), generator=g))
    # Dropout draws differ between devices: parity with p=0 (same graph, dropout in train mode) ...
    _compare(CNN(p=0.0), batch, _classify)
    # ... and with p=0.5 the mask is native and has the right statistics.
    with foo_kernels_only():
        model = CNN(p=0.5).to("foo").train()
        h = torch.ones(64, 1024, device="foo", requires_grad=True)
        out = model.dropout(h)
        out.backward(torch.full_like(out, 3.0))
        model(batch[0].to("foo")).sum().backward()
    out, grad = out.detach().cpu(), h.grad.cpu()
    kept = out != 0
    assert torch.all(out[kept] == 2.0)
    assert abs(kept.float().mean().item() - 0.5) < 0.02
    torch.testing.assert_close(grad, kept.float() * 6.0, rtol=0, atol=0)  # the same mask, scaled


# ---- a small U-Net: down, bottleneck, upsample, skip concatenation -------------------------------


def _conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down1, self.down2 = _conv_block(1, 8), _conv_block(8, 16)
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = _conv_block(16, 16)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.up2 = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec2, self.dec1 = _conv_block(32, 8), _conv_block(16, 8)
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        b = self.bottleneck(self.pool(d2))
        u2 = self.dec2(torch.cat([self.up(b), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up2(u2), d1], dim=1))
        return self.out(u1)


def _segment(model, x, y):
    return F.mse_loss(model(x), y)


def test_unet_upsampling():
    torch.manual_seed(2)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 1, 16, 16, generator=g)
    # lr 1e-3: at 3e-3 the runs part by 1e-3 relative after 10 steps although the first step's
    # gradients agree to 1e-7 (a ReLU/max-pool decision flips); at 1e-3 they agree to 1e-6. A
    # weight whose gradient is rounding noise still moves by up to lr per Adam step: 1e-4 absolute.
    _compare(UNet(), (x, (x > 0).float()), _segment, lr=1e-3, state_atol=1e-4)


# ---- transformers.GPT2LMHeadModel from a tiny config --------------------------------------------


def test_hf_gpt2_lm_head_model():
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(3)
    model = transformers.GPT2LMHeadModel(config)

    def loss_fn(m, tokens, targets):
        return m(input_ids=tokens, labels=tokens).loss

    # c_attn's key bias: its gradient is rounding noise (test_gpt_decoder_tied_causal_sdpa).
    key_bias = [(f"transformer.h.{i}.attn.c_attn.bias", slice(config.n_embd, 2 * config.n_embd))
                for i in range(config.n_layer)]
    _compare(model, _tokens(64), loss_fn, noise=key_bias)


# ---- 2-layer LSTM with a packed-sequence batch ---------------------------------------------------


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return self.head(padded)


def test_two_layer_lstm_packed():
    torch.manual_seed(4)
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 7, 8, generator=g)
    lengths = torch.tensor([7, 4, 6])
    targets = torch.randint(0, 4, (3, 7), generator=g)

    def loss_fn(m, x, t):
        logits = m(x, lengths)
        return F.cross_entropy(logits.reshape(-1, 4), t[:, : logits.shape[1]].reshape(-1))

    _compare(LSTMTagger(), (x, targets), loss_fn)
