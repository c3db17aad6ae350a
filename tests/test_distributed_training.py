"""Training stacks on fooccl: DDP (buckets, the comm hook, no_sync) and FSDP2 (fully_shard on a
foo DeviceMesh) train a small transformer for 10 steps on 2 sim devices in 2 processes, and match
the same training in one process on the CPU; DTensor basics on foo.

Ops the transformer needs that are not native yet (embedding, layer_norm, ...) run through the
CPU fallback (TORCH_FOO_FALLBACK=silent, the tests' default); the comparison is of losses and
weights, within float32 tolerance."""

import contextlib
import copy
import math

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.nn.parallel import DistributedDataParallel as DDP

from dist_helpers import FooDistTestCase

VOCAB, DIM, HEADS, SEQ, LAYERS = 32, 16, 2, 8, 2
STEPS, PER_RANK_BATCH, LR = 10, 2, 0.2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(DIM // HEADS)
        causal = torch.ones(s, s, dtype=torch.bool).triu(1).to(x.device)
        attn = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, DIM))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(SEQ, DIM) * 0.1)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm, self.head = nn.LayerNorm(DIM), nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def loss_of(model, tokens, device):
    logits = model(tokens[:, :-1].to(device))
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1).to(device))


def data(world, micro_steps):
    """The global batches: [step][micro step] -> tokens of every rank, rank r's rows r*B:(r+1)*B.
    Counting sequences from random starts (learnable: the loss falls within 10 steps)."""
    g = torch.Generator().manual_seed(7)
    starts = torch.randint(VOCAB, (STEPS, micro_steps, world * PER_RANK_BATCH, 1), generator=g)
    return (starts + torch.arange(SEQ + 1)) % VOCAB


def reference(model, batches):
    """Single-process training on the CPU over the global batches: losses, final weights."""
    model = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in batches:
        for tokens in step:  # gradients accumulate over the micro steps
            loss = loss_of(model, tokens, "cpu")
            loss.backward()
            losses.append(loss.item())
        opt.step()
        opt.zero_grad()
    return losses, {name: p.detach() for name, p in model.named_parameters()}


class TestFoocclTraining(FooDistTestCase):
    def global_loss(self, loss):
        loss = loss.detach().clone()
        dist.all_reduce(loss, op=dist.ReduceOp.AVG)
        return loss.item()

    def assert_matches(self, losses, weights, ref_losses, ref_weights):
        self.assertEqual(len(losses), len(ref_losses))
        torch.testing.assert_close(torch.tensor(losses), torch.tensor(ref_losses), rtol=1e-4, atol=1e-5)
        self.assertLess(ref_losses[-1], ref_losses[0] - 0.1)  # it trained
        for name, ref in ref_weights.items():
            self.assertEqual(weights[name].dtype, torch.float32)
            torch.testing.assert_close(weights[name], ref, rtol=1e-4, atol=1e-5, msg=name)

    def test_ddp_matches_single_process(self):
        device = self.init_pg()
        torch.manual_seed(0)
        model = TinyTransformer()
        batches = data(self.world_size, micro_steps=2)
        ref_losses, ref_weights = reference(model, batches)

        # Small buckets: several all_reduces per backward, through the comm hook's futures.
        ddp = DDP(copy.deepcopy(model).to(device), device_ids=[self.rank], bucket_cap_mb=0.01)
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=LR)
        rows = slice(self.rank * PER_RANK_BATCH, (self.rank + 1) * PER_RANK_BATCH)
        losses = []
        for step in batches:
            for micro, tokens in enumerate(step):
                # The first micro step accumulates locally; the second all-reduces both.
                with ddp.no_sync() if micro == 0 else contextlib.nullcontext():
                    loss = loss_of(ddp, tokens[rows], device)
                    loss.backward()
                losses.append(self.global_loss(loss))
            opt.step()
            opt.zero_grad()
        self.assertGreater(ddp._get_ddp_logging_data()["num_buckets_reduced"], 1)
        weights = {name: p.detach().cpu() for name, p in ddp.module.named_parameters()}
        self.assertTrue(all(p.device == device for p in ddp.module.parameters()))
        self.assert_matches(losses, weights, ref_losses, ref_weights)

    def test_fsdp2_matches_single_process(self):
        self.init_pg()
        mesh = init_device_mesh("foo", (self.world_size,))
        torch.manual_seed(0)
        model = TinyTransformer()
        batches = data(self.world_size, micro_steps=1)
        ref_losses, ref_weights = reference(model, batches)

        sharded = copy.deepcopy(model)
        for block in sharded.blocks:
            fully_shard(block, mesh=mesh)
        fully_shard(sharded, mesh=mesh)
        opt = torch.optim.SGD(sharded.parameters(), lr=LR)
        rows = slice(self.rank * PER_RANK_BATCH, (self.rank + 1) * PER_RANK_BATCH)
        losses = []
        for step in batches:
            loss = loss_of(sharded, step[0][rows], self.device)
            loss.backward()
            losses.append(self.global_loss(loss))
            opt.step()
            opt.zero_grad()
        weights = {}
        for name, p in sharded.named_parameters():
            self.assertEqual(p.to_local().device, self.device)  # each rank holds its shard on foo
            weights[name] = p.full_tensor().detach().cpu()
        self.assert_matches(losses, weights, ref_losses, ref_weights)

    def test_dtensor_basics(self):
        self.init_pg()
        mesh = init_device_mesh("foo", (self.world_size,))
        g = torch.Generator().manual_seed(3)
        x, w = torch.randn(4 * self.world_size, 6, generator=g), torch.randn(6, 5, generator=g)

        dx = distribute_tensor(x, mesh, [Shard(0)])  # scattered from rank 0
        local = dx.to_local()
        self.assertEqual(local.device, self.device)
        self.assertTrue(torch.equal(local.cpu(), x.chunk(self.world_size)[self.rank]))
        self.assertTrue(torch.equal(dx.full_tensor().cpu(), x))  # all_gather
        self.assertTrue(torch.equal(dx.redistribute(mesh, [Replicate()]).to_local().cpu(), x))

        dw = distribute_tensor(w, mesh, [Replicate()])  # broadcast
        y = dx @ dw  # sharded rows times replicated weights: local matmuls
        self.assertEqual(y.placements, (Shard(0),))
        torch.testing.assert_close(y.full_tensor().cpu(), x @ w, rtol=1e-5, atol=1e-5)
        total = (dx * 2).sum()  # a partial sum, all_reduced when made whole
        torch.testing.assert_close(total.full_tensor().cpu(), (x * 2).sum(), rtol=1e-5, atol=1e-4)
