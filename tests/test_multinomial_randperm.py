"""torch.multinomial (with and without replacement) and torch.randperm on foo: native, bit for bit
equal to the NumPy model of the kernels (tests/philox_reference.py) under torch.foo.manual_seed,
statistically right, and with the CPU's errors."""

import pytest
import torch

import philox_reference as ref
import torch_foo


pytestmark = pytest.mark.usefixtures("no_fallback")  # every test: foo kernels only


def on_foo(t):
    assert t.device.type == "foo"
    return t.cpu()


@pytest.mark.parametrize("replacement", [True, False], ids=["replacement", "no_replacement"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_multinomial_matches_reference(dtype, replacement):
    probs = torch.rand(3, 300, dtype=torch.float64).to(dtype)
    probs[1, 5:290] = 0  # a row with few non-zero weights
    torch.foo.manual_seed(17)
    got = on_foo(torch.multinomial(probs.to("foo"), 10, replacement))
    assert got.dtype == torch.int64 and got.shape == (3, 10)
    assert torch.equal(got, ref.multinomial(probs, 10, replacement, 17, 0))


def test_multinomial_one_dim_out_and_generator():
    p = torch.tensor([0.0, 10.0, 3.0, 0.0])
    g = torch.Generator("foo").manual_seed(3)
    got = on_foo(torch.multinomial(p.to("foo"), 2, generator=g))
    assert got.shape == (2,) and sorted(got.tolist()) == [1, 2]  # zero weights are never drawn
    out = torch.empty(0, dtype=torch.int64, device="foo")  # resized, as on the CPU
    torch.foo.manual_seed(3)
    torch.multinomial(p.to("foo"), 4, True, out=out)
    assert torch.equal(on_foo(out), ref.multinomial(p[None], 4, True, 3, 0)[0])
    assert set(on_foo(out).tolist()) <= {1, 2}


def test_multinomial_frequencies():
    p = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    torch.foo.manual_seed(0)
    draws = on_foo(torch.multinomial(p.to("foo"), 20000, replacement=True))
    for row in range(2):
        freq = torch.bincount(draws[row], minlength=3).double() / 20000
        assert torch.allclose(freq, p[row].double(), atol=0.015)
    # without replacement the first pick of many rows follows p too, and picks are distinct
    rows = on_foo(torch.multinomial(p[0].expand(4000, 3).to("foo"), 3))
    assert bool((rows.sort(dim=1).values == torch.arange(3)).all())
    assert torch.allclose(torch.bincount(rows[:, 0], minlength=3).double() / 4000, p[0].double(), atol=0.025)


def test_multinomial_errors():
    foo = torch.device("foo")
    with pytest.raises(RuntimeError, match=r"probability tensor contains either `inf`, `nan` or element < 0"):
        torch.multinomial(torch.tensor([0.5, -0.1], device=foo), 1)
    with pytest.raises(RuntimeError, match=r"probability tensor contains either `inf`, `nan` or element < 0"):
        torch.multinomial(torch.tensor([0.5, float("nan")], device=foo), 3, True)
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(sum of probabilities <= 0\)"):
        torch.multinomial(torch.zeros(2, 3, device=foo), 2, True)
    with pytest.raises(RuntimeError, match=r"invalid multinomial distribution \(sum of probabilities <= 0\)"):
        torch.multinomial(torch.zeros(3, device=foo), 2)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        torch.multinomial(torch.ones(3, device=foo), 4)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        torch.multinomial(torch.ones(2, 2, 2, device=foo), 1)
    with pytest.raises(RuntimeError, match="multinomial only supports floating-point dtypes"):
        torch.multinomial(torch.ones(3, dtype=torch.int64, device=foo), 1)
    with pytest.raises(RuntimeError, match="cannot sample n_sample <= 0 samples"):
        torch.multinomial(torch.ones(3, device=foo), 0)


@pytest.mark.parametrize("n", [1, 2, 10, 1000, 1025])
def test_randperm_matches_reference(n):
    torch.foo.manual_seed(6)
    got = on_foo(torch.randperm(n, device="foo"))
    assert got.dtype == torch.int64
    assert torch.equal(got, ref.randperm(n, 6, 0))
    assert torch.equal(got.sort().values, torch.arange(n))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.uint8, torch.float32, torch.float16,
                                   torch.bfloat16, torch.float64], ids=str)
def test_randperm_dtypes_and_out(dtype):
    g = torch.Generator("foo").manual_seed(1)
    got = on_foo(torch.randperm(200, generator=g, dtype=dtype, device="foo"))
    assert got.dtype == dtype and torch.equal(got.long(), ref.randperm(200, 1, 0))
    out = torch.empty(3, 5, dtype=dtype, device="foo")[:, 0]  # non-contiguous, resized
    torch.foo.manual_seed(1)
    torch.randperm(3, out=out)
    assert torch.equal(on_foo(out).long(), ref.randperm(3, 1, 0))


def test_randperm_errors_and_uniformity():
    with pytest.raises(RuntimeError, match="negative dimension -1"):  # as the CPU: empty() refuses first
        torch.randperm(-1, device="foo")
    with pytest.raises(RuntimeError, match="n must be non-negative"):
        torch.randperm(-1, out=torch.empty(0, dtype=torch.int64, device="foo"))
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type"):
        torch.randperm(3000, dtype=torch.float16, device="foo")
    assert torch.randperm(0, device="foo").shape == (0,)
    torch.foo.manual_seed(0)
    # each of 4 values lands in each of 4 positions about a quarter of the time
    perms = torch.stack([on_foo(torch.randperm(4, device="foo")) for _ in range(800)])
    for v in range(4):
        freq = (perms == v).double().mean(dim=0)
        assert torch.allclose(freq, torch.full((4,), 0.25, dtype=torch.float64), atol=0.07)
