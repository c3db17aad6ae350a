"""Per-device default generators behind torch.foo's seeding and RNG-state helpers."""

import torch


def test_default_generators():
    gens = torch.foo.default_generators
    assert isinstance(gens, tuple) and len(gens) == torch.foo.device_count()
    assert all(isinstance(g, torch.Generator) for g in gens)
    assert gens[0].device == torch.device("foo:0")
    assert torch.foo.default_generators is gens  # built once


def test_manual_seed_current_and_all(two_devices):
    torch.foo.manual_seed_all(7)
    assert [g.initial_seed() for g in torch.foo.default_generators] == [7, 7]
    with torch.foo.device(1):
        torch.foo.manual_seed(11)
        assert torch.foo.initial_seed() == 11
    assert torch.foo.initial_seed() == 7
    torch.manual_seed(3)  # torch seeds foo through torch.foo.manual_seed_all
    assert [g.initial_seed() for g in torch.foo.default_generators] == [3, 3]


def test_seed_all_uses_one_seed():
    torch.foo.seed_all()
    seeds = {g.initial_seed() for g in torch.foo.default_generators}
    assert len(seeds) == 1


def test_rng_state_roundtrip():
    torch.foo.manual_seed(5)
    state = torch.foo.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu" and state.numel() > 0
    torch.foo.manual_seed(6)
    torch.foo.set_rng_state(state)
    assert torch.equal(torch.foo.get_rng_state("foo:0"), state)
    assert len(torch.foo.get_rng_state_all()) == torch.foo.device_count()
