"""RNG state on foo: get_rng_state/set_rng_state (per device and _all), torch.Generator("foo")
get_state/set_state and torch.random.fork_rng(device_type="foo") restore the generator so the
same numbers are drawn again, by every random op."""

import warnings

import pytest
import torch


def draw_everything(device="foo", generator=None):
    """One draw of each random op on `device`, as CPU tensors."""
    kw = {"generator": generator} if generator is not None else {}
    x = torch.empty(37, device=device)
    probs = torch.tensor([0.2, 0.3, 0.5], device=device)
    return [
        torch.rand(5, device=device, **kw),
        torch.randn(5, device=device, **kw),
        torch.randint(0, 100, (5,), device=device, **kw),
        torch.randperm(9, device=device, **kw),
        x.clone().exponential_(**kw),
        x.clone().cauchy_(**kw),
        x.clone().log_normal_(**kw),
        x.clone().geometric_(0.4, **kw),
        x.clone().bernoulli_(0.5, **kw),
        torch.multinomial(probs, 4, True, **kw),
        torch.normal(torch.zeros(5, device=device), 2.0, **kw),
    ]


def assert_same_draws(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert torch.equal(x.cpu(), y.cpu())


def test_get_set_rng_state_reproduces_every_op():
    torch.foo.manual_seed(123)
    state = torch.foo.get_rng_state()
    first = draw_everything()
    second = draw_everything()
    assert not torch.equal(first[0].cpu(), second[0].cpu())
    torch.foo.set_rng_state(state)
    assert_same_draws(draw_everything(), first)
    torch.foo.manual_seed(123)
    assert_same_draws(draw_everything(), first)


def test_state_per_device_and_all(two_devices):
    torch.foo.manual_seed_all(5)
    states = torch.foo.get_rng_state_all()
    a0 = torch.rand(4, device="foo:0").cpu()
    a1 = torch.rand(4, device="foo:1").cpu()
    assert torch.equal(a0, a1)  # same seed, same offset: devices draw alike
    torch.rand(100, device="foo:1")  # move device 1 only
    state1 = torch.foo.get_rng_state("foo:1")
    later = torch.rand(4, device="foo:1").cpu()
    torch.foo.set_rng_state(state1, "foo:1")
    assert torch.equal(torch.rand(4, device="foo:1").cpu(), later)
    torch.foo.set_rng_state_all(states)
    assert torch.equal(torch.rand(4, device="foo:0").cpu(), a0)
    assert torch.equal(torch.rand(4, device="foo:1").cpu(), a1)
    with torch.foo.device(1):
        torch.foo.set_rng_state(states[1])  # default device: the current one
        assert torch.equal(torch.rand(4, device="foo").cpu(), a1)


def test_generator_object_state():
    g = torch.Generator("foo")
    assert g.device == torch.device("foo", torch.foo.current_device())
    g.manual_seed(99)
    state = g.get_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    first = draw_everything(generator=g)
    g.set_state(state)
    assert_same_draws(draw_everything(generator=g), first)
    clone = torch.Generator("foo")
    clone.set_state(state)
    assert_same_draws(draw_everything(generator=clone), first)
    with pytest.raises(RuntimeError, match="foo generator: expected a ByteTensor of 16 bytes"):
        g.set_state(torch.zeros(3, dtype=torch.uint8))


def test_fork_rng_restores_the_device_state():
    torch.foo.manual_seed(7)
    with torch.random.fork_rng(devices=[0], device_type="foo"):
        inside = torch.rand(6, device="foo").cpu()
        torch.foo.manual_seed(1000)  # reseeding inside does not leak out
        torch.rand(6, device="foo")
    assert torch.equal(torch.rand(6, device="foo").cpu(), inside)
    # the default device list (every device) works too (torch warns once per process that it
    # forks them all)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.random.fork_rng(device_type="foo"):
            inside = torch.rand(3, device="foo").cpu()
    assert torch.equal(torch.rand(3, device="foo").cpu(), inside)
