"""nn.Module.to("foo") keeps its Parameter objects, as with cuda: tied weights stay tied and an
optimizer built before the move keeps training the module's parameters.

This rests on torch._has_compatible_shallow_copy_type(cpu_tensor, foo_tensor) being True
(csrc/aten/ops/runtime_ops.cpp); without it Module.to makes new Parameters and the GPT-2-style tie
between the embedding and the output head silently breaks.
"""

import copy

import torch

VOCAB, DIM, SEQ = 16, 8, 6


class TinyGPT(torch.nn.Module):
    """An embedding tied to the output head, as GPT-2 ties wte and lm_head."""

    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, DIM)
        self.wpe = torch.nn.Embedding(SEQ, DIM)
        self.mlp = torch.nn.Linear(DIM, DIM)
        self.lm_head = torch.nn.Linear(DIM, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight  # the tie

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        h = self.wte(tokens) + self.wpe(positions)
        h = h + torch.tanh(self.mlp(h))
        return self.lm_head(h)


def _batch(device):
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (4, SEQ), generator=g)
    return tokens.to(device), torch.roll(tokens, -1, dims=1).to(device)


def test_module_to_keeps_parameter_objects_and_ties():
    torch.manual_seed(0)
    model = TinyGPT()
    params = {name: p for name, p in model.named_parameters()}
    tied = model.wte.weight
    assert model.to("foo") is model
    assert {name: p for name, p in model.named_parameters()} == params  # the same objects
    for name, p in model.named_parameters():
        assert p is params[name] and p.device == torch.device("foo:0"), name
    assert model.lm_head.weight is model.wte.weight is tied
    model.to("cpu")  # and back
    assert model.lm_head.weight is model.wte.weight is tied and tied.device.type == "cpu"
    assert model.foo() is model and tied.is_foo  # the generated Module.foo() alike


def test_training_parity_with_cpu():
    torch.manual_seed(0)
    cpu_model = TinyGPT()
    foo_model = copy.deepcopy(cpu_model)  # same initial weights, tie preserved by deepcopy
    # Optimizers built before the move, as training scripts often do.
    cpu_opt = torch.optim.AdamW(cpu_model.parameters(), lr=0.05)
    foo_opt = torch.optim.AdamW(foo_model.parameters(), lr=0.05)
    foo_model.to("foo")
    assert foo_opt.param_groups[0]["params"][0] is foo_model.wte.weight
    losses = {}
    for name, model, opt, device in (("cpu", cpu_model, cpu_opt, "cpu"), ("foo", foo_model, foo_opt, "foo")):
        tokens, targets = _batch(device)
        losses[name] = []
        for _ in range(3):
            opt.zero_grad()
            logits = model(tokens)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    torch.testing.assert_close(losses["foo"], losses["cpu"], rtol=1e-5, atol=1e-5)
    assert losses["foo"][-1] < losses["foo"][0]  # it trained
    assert foo_model.lm_head.weight is foo_model.wte.weight  # still one tensor after the steps
    for (name, p_cpu), p_foo in zip(cpu_model.named_parameters(), foo_model.parameters()):
        assert p_foo.device == torch.device("foo:0")
        torch.testing.assert_close(p_foo.detach().cpu(), p_cpu.detach(), rtol=1e-5, atol=1e-5, msg=name)
