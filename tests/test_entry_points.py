"""Manifest kernels whose entry points no OpInfo sample reaches (found by the suite's measured
coverage, tests/conftest.py): explicit out= overloads, in-place forms, a Scalar base, set_()
without a source. Each against the CPU: values, dtype, device, and foo's own kernel."""

import pytest
import torch

from conftest import assert_foo_equal, foo_kernels_only

aten = torch.ops.aten


def both(make):
    """(CPU, foo) copies of the same CPU tensor."""
    t = make()
    return t, t.to("foo")


def test_set_without_a_source_empties_the_tensor():
    cpu, foo = both(lambda: torch.arange(6.0).view(2, 3))
    with foo_kernels_only():
        out = foo.set_()
    assert out is foo and foo.shape == cpu.set_().shape == (0,)
    assert foo.device == torch.device("foo:0") and foo.dtype == torch.float32 and foo.numel() == 0


def test_relu_in_place():
    cpu, foo = both(lambda: torch.randn(5, 7))
    with foo_kernels_only():
        out = torch.relu_(foo)
    assert out is foo
    assert_foo_equal(foo, torch.relu_(cpu))
    ints_cpu, ints = both(lambda: torch.arange(-4, 5, dtype=torch.int32))
    with foo_kernels_only():
        ints.relu_()
    assert_foo_equal(ints, ints_cpu.relu_())


@pytest.mark.parametrize("base", [2.0, 3])
def test_pow_with_a_scalar_base(base):
    cpu, foo = both(lambda: torch.linspace(-2, 3, 11))
    with foo_kernels_only():
        got = torch.pow(base, foo)
        out = torch.empty_like(foo)
        torch.pow(base, foo, out=out)
    torch.testing.assert_close(got.cpu(), torch.pow(base, cpu))
    assert_foo_equal(out, got.cpu())
    icpu, ifoo = both(lambda: torch.arange(0, 6))
    with foo_kernels_only():
        assert_foo_equal(torch.pow(3, ifoo), torch.pow(3, icpu))


def test_aten_norm_with_dims_and_dtype():
    cpu, foo = both(lambda: torch.randn(4, 6))
    for p in (1, 2, 3.5, float("inf")):
        with foo_kernels_only():
            got = aten.norm.ScalarOpt_dim(foo, p, [1], True)
            out = torch.empty(4, 1, device="foo")
            aten.norm.out(foo, p, [1], True, out=out)
            as_double = torch.empty(4, device="foo", dtype=torch.float64)
            aten.norm.dtype_out(foo, p, [1], False, dtype=torch.float64, out=as_double)
        expected = aten.norm.ScalarOpt_dim(cpu, p, [1], True)
        torch.testing.assert_close(got.cpu(), expected)
        torch.testing.assert_close(out.cpu(), expected)
        assert as_double.dtype == torch.float64
        torch.testing.assert_close(as_double.cpu(), aten.norm.ScalarOpt_dim_dtype(cpu, p, [1], False, dtype=torch.float64))
    with foo_kernels_only():
        dist = torch.nn.functional.pairwise_distance(foo, foo.flip(0))
    torch.testing.assert_close(dist.cpu(), torch.nn.functional.pairwise_distance(cpu, cpu.flip(0)))


def test_scatter_a_value_with_reduce():
    for reduce in ("add", "multiply"):
        cpu, foo = both(lambda: torch.arange(1.0, 13.0).view(3, 4))
        index = torch.tensor([[0, 1, 2, 0], [2, 0, 0, 1]])
        with foo_kernels_only():
            foo.scatter_(0, index.to("foo"), 2.0, reduce=reduce)
            out = torch.empty_like(foo)
            aten.scatter.value_reduce_out(foo, 1, index.to("foo"), 3.0, reduce=reduce, out=out)
        expected = cpu.scatter_(0, index, 2.0, reduce=reduce)
        assert_foo_equal(foo, expected)
        assert_foo_equal(out, aten.scatter.value_reduce(expected, 1, index, 3.0, reduce=reduce))


def test_rrelu_with_noise_out():
    cpu, foo = both(lambda: torch.randn(6, 5))
    noise_cpu, noise = both(lambda: torch.empty(6, 5))
    with foo_kernels_only():
        out = torch.empty_like(foo)
        aten.rrelu_with_noise.out(foo, noise, 0.1, 0.3, False, out=out)  # evaluation: the mean slope
    expected = aten.rrelu_with_noise(cpu, noise_cpu, 0.1, 0.3, False)
    torch.testing.assert_close(out.cpu(), expected)
    assert out.device == torch.device("foo:0") and out.dtype == torch.float32
    with foo_kernels_only():
        train_out = torch.empty_like(foo)
        aten.rrelu_with_noise.out(foo, noise, 0.1, 0.3, True, out=train_out)  # training: noise written
    slopes = (train_out.cpu() / cpu)[cpu < 0]
    assert ((slopes >= 0.1) & (slopes <= 0.3)).all()
    torch.testing.assert_close(train_out.cpu()[cpu >= 0], cpu[cpu >= 0])
    torch.testing.assert_close(noise.cpu()[cpu < 0], slopes)


def _batch_norm_inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 5, generator=g)
    return x, torch.rand(3, generator=g) + 0.5, torch.randn(3, generator=g)


def test_batch_norm_out_overloads():
    x, w, b = _batch_norm_inputs()
    xf, wf, bf = x.to("foo"), w.to("foo"), b.to("foo")
    outs = [torch.empty(0, device="foo") for _ in range(3)]
    with foo_kernels_only():
        aten._native_batch_norm_legit.no_stats_out(xf, wf, bf, True, 0.1, 1e-5, out=outs[0], save_mean=outs[1],
                                                  save_invstd=outs[2])
    for got, want in zip(outs, aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)):
        torch.testing.assert_close(got.cpu(), want)
    running = [torch.zeros(3), torch.ones(3)]
    running_foo = [t.to("foo") for t in running]
    outs = [torch.empty(0, device="foo") for _ in range(3)] + [torch.empty(0, device="foo", dtype=torch.uint8)]
    with foo_kernels_only():
        aten._batch_norm_with_update.out(xf, wf, bf, *running_foo, 0.1, 1e-5, out=outs[0], save_mean=outs[1],
                                         save_invstd=outs[2], reserve=outs[3])
    want = aten._batch_norm_with_update(x, w, b, *running, 0.1, 1e-5)
    for got, expected in zip(outs[:3], want[:3]):
        torch.testing.assert_close(got.cpu(), expected)
    for got, expected in zip(running_foo, running):
        torch.testing.assert_close(got.cpu(), expected)  # the running statistics updated alike
