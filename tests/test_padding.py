"""Reflection and replication padding (csrc/aten/ops/padding.cpp, kernels/ops/shape_copy.cu): what the
generated OpInfo tests cannot reach. nn.functional.pad's OpInfo lists its 1-d and 2-d samples
first and tests/ops/ takes the first 8 (4 for gradients), so the 3-d ops, the 4-d batched 2-d
samples and the negative-padding replicate samples are compared with the CPU here: every sample
of the reflect, replicate and replicate_negative variants, forward in every dtype the CPU takes,
backward in float32 (the CPU's order of additions: equal bits), float64 (gradcheck) and the 16-bit
types (against float64), plus layouts, out=, large shapes and errors. Every foo call runs with
the CPU fallback forbidden.
"""

import pytest
import torch
import torch.nn.functional as F
from torch.testing._internal.common_methods_invocations import op_db

from conftest import foo_kernels_only

VARIANTS = ("reflect", "replicate", "replicate_negative")
FORWARD_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                  torch.int16, torch.int8, torch.uint8, torch.complex64, torch.complex128)


def _opinfo(variant):
    return next(o for o in op_db if o.name == "nn.functional.pad" and o.variant_test_name == variant)


def _samples(variant, dtype, requires_grad=False):
    opinfo = _opinfo(variant)
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(0)
        return list(opinfo.sample_inputs_func(opinfo, "cpu", dtype, requires_grad))


def _cases(dtypes):
    return [pytest.param(v, d, i, id=f"{v}-{str(d).removeprefix('torch.')}-sample{i}")
            for v in VARIANTS for d in dtypes for i in range(len(_samples(v, torch.float32)))]


def _foo(t):
    return t.detach().to("foo").requires_grad_(t.requires_grad)


def _pad(x, pad, mode):
    return F.pad(x, pad, mode=mode)


@pytest.mark.parametrize("variant,dtype,i", _cases(FORWARD_DTYPES))
def test_forward_equals_the_cpu(variant, dtype, i):
    s = _samples(variant, dtype)[i]
    expected = _pad(s.input, *s.args)
    with foo_kernels_only():
        actual = _pad(_foo(s.input), *s.args)
    assert actual.device.type == "foo" and actual.dtype == expected.dtype
    assert actual.shape == expected.shape and actual.stride() == expected.stride()
    assert torch.equal(actual.cpu(), expected)  # a copy: the same bits


@pytest.mark.parametrize("variant,dtype,i", _cases([torch.float32]))
def test_gradient_equals_the_cpu(variant, dtype, i):
    """Each input element sums the outputs read from it in increasing output order, as the CPU's
    loop adds them: float32 gradients equal the CPU's bit for bit."""
    s = _samples(variant, dtype, requires_grad=True)[i]
    out = _pad(s.input, *s.args)
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(i))
    (expected,) = torch.autograd.grad(out, s.input, grad)
    x = _foo(s.input)
    with foo_kernels_only():
        (actual,) = torch.autograd.grad(_pad(x, *s.args), x, grad.to("foo"))
    assert actual.device.type == "foo"
    assert torch.equal(actual.cpu(), expected)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16bit_gradient_is_the_float64_sum_rounded_once(variant, dtype):
    """The sums run in float and round once (the CPU adds in 16 bits, element by element)."""
    for i, s in enumerate(_samples(variant, dtype, requires_grad=True)):
        out = _pad(s.input, *s.args)
        grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(i)).to(dtype)
        x64 = s.input.detach().double().requires_grad_()
        (reference,) = torch.autograd.grad(_pad(x64, *s.args), x64, grad.double())
        x = _foo(s.input)
        with foo_kernels_only():
            (actual,) = torch.autograd.grad(_pad(x, *s.args), x, grad.to("foo"))
        torch.testing.assert_close(actual.cpu(), reference.to(dtype))


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", [((2, 3, 4), (1, 2)), ((2, 3, 4, 5), (1, 2, 3, 0)),
                                       ((1, 2, 3, 4, 5), (1, 2, 0, 2, 2, 1)), ((2, 3, 4, 5), (1, 1, 1, 1, 1, 1))])
def test_gradcheck_float64(mode, shape, pad):
    x = torch.randn(shape, dtype=torch.float64, device="foo", requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: _pad(t, pad, mode), (x,))


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", [((2, 3, 37, 41), (5, 7, 3, 2)), ((2, 3, 5, 9, 11), (2, 3, 4, 1, 0, 3)),
                                       ((3, 5000), (999, 1000))])
def test_large_and_channels_last(mode, shape, pad):
    """Many blocks (grid-stride), every layout the CPU keeps: a channels_last input gives a
    channels_last output (2-d) as on the CPU, and the gradient comes back in the input's layout."""
    if mode == "reflect" and shape == (3, 5000):
        pad = (pad[0] * 4, pad[1] * 4)  # < 5000: reflection needs padding below the size
    base = torch.randn(shape)
    layouts = [base]
    if base.dim() == 4:
        layouts.append(base.contiguous(memory_format=torch.channels_last))
    if base.dim() == 5:
        layouts.append(base.contiguous(memory_format=torch.channels_last_3d))
    layouts.append(base.transpose(0, 1).contiguous().transpose(0, 1))  # another dim order
    for x in layouts:
        x = x.requires_grad_()
        expected = _pad(x, pad, mode)
        grad = torch.randn(expected.shape)
        (expected_grad,) = torch.autograd.grad(expected, x, grad)
        fx = _foo(x)
        with foo_kernels_only():
            actual = _pad(fx, pad, mode)
            (actual_grad,) = torch.autograd.grad(actual, fx, grad.to("foo"))
        assert actual.stride() == expected.stride()
        assert torch.equal(actual.cpu(), expected.detach())
        torch.testing.assert_close(actual_grad.cpu(), expected_grad, rtol=0, atol=0)


def test_replicate_pads_wider_than_the_input():
    x = torch.randn(2, 3, 2, 3)
    for pad in [(7, 9, 5, 0), (0, 0, 6, 6), (-2, 4, 3, -1)]:
        x.requires_grad_()
        expected = _pad(x, pad, "replicate")
        (expected_grad,) = torch.autograd.grad(expected, x, torch.ones_like(expected))
        fx = _foo(x)
        with foo_kernels_only():
            actual = _pad(fx, pad, "replicate")
            (actual_grad,) = torch.autograd.grad(actual, fx, torch.ones_like(actual))
        assert torch.equal(actual.cpu(), expected.detach())
        assert torch.equal(actual_grad.cpu(), expected_grad)


@pytest.mark.parametrize("op,pad", [(torch.ops.aten.reflection_pad1d, [2, 1]), (torch.ops.aten.reflection_pad2d, [2, 1, 0, 2]),
                                    (torch.ops.aten.reflection_pad3d, [1, 1, 2, 0, 1, 2]),
                                    (torch.ops.aten.replication_pad1d, [2, 1]), (torch.ops.aten.replication_pad2d, [2, 1, 0, 2]),
                                    (torch.ops.aten.replication_pad3d, [1, 1, 2, 0, 1, 2])])
def test_out_and_noncontiguous_input(op, pad):
    """out= (the right shape, then one to resize) and a strided input, for every forward op, and
    the backward ops' out= overloads."""
    dims = len(pad) // 2
    base = torch.randn((2, 4) + (5,) * dims)
    x, fx = base[:, ::2], base.to("foo")[:, ::2]  # every other channel: not dense
    expected = op(x, pad)
    backward = getattr(torch.ops.aten, op._qualified_op_name.split("::")[1] + "_backward")
    grad = torch.randn(expected.shape)
    expected_grad = backward(grad, x, pad)
    with foo_kernels_only():
        assert torch.equal(op(fx, pad).cpu(), expected)
        for out in (torch.empty(expected.shape, device="foo"), torch.empty(0, device="foo")):
            result = op.out(fx, pad, out=out)
            assert result is out and torch.equal(out.cpu(), expected)
        for out in (torch.empty(x.shape, device="foo"), torch.empty(0, device="foo")):
            result = backward.grad_input(grad.to("foo"), fx, pad, grad_input=out)
            assert result is out
            torch.testing.assert_close(out.cpu(), expected_grad, rtol=0, atol=0)


def test_errors_as_the_cpu():
    cases = [
        lambda t: F.pad(t(2, 3, 4), (4, 0), mode="reflect"),         # padding >= the size
        lambda t: F.pad(t(2, 3, 4, 4), (0, 0, 1, 4), mode="reflect"),
        lambda t: F.pad(t(1, 2, 3, 3, 3), (0, 0, 0, 0, 3, 0), mode="reflect"),
        lambda t: F.pad(t(2, 0, 4), (1, 1), mode="reflect"),         # an empty non-batch dim
        lambda t: F.pad(t(2, 3, 0, 4), (1, 1, 1, 1), mode="replicate"),
        lambda t: torch.ops.aten.reflection_pad2d_backward(t(2, 3, 4, 5), t(2, 3, 4, 4), [1, 1, 0, 0]),
        lambda t: torch.ops.aten.replication_pad3d_backward(t(1, 2, 3, 3, 3), t(1, 2, 3, 3, 3), [1, 1, 0, 0, 0, 0]),
    ]
    for case in cases:
        with pytest.raises(RuntimeError) as cpu:
            case(lambda *s: torch.randn(s))
        with foo_kernels_only(), pytest.raises(RuntimeError) as foo:
            case(lambda *s: torch.randn(s, device="foo"))
        assert type(foo.value) is type(cpu.value)


def test_bool_raises_naming_the_dtype():
    x = torch.ones(2, 3, 4, dtype=torch.bool, device="foo")
    for mode in ("reflect", "replicate"):
        with foo_kernels_only(), pytest.raises((NotImplementedError, RuntimeError), match="Bool"):
            F.pad(x, (1, 1), mode=mode)


def test_stft_style_reflect_padding_of_a_signal():
    """torch.stft's default padding: a 1-d signal viewed [1, 1, L] padded by n_fft // 2 each side."""
    signal = torch.randn(16000)
    expected = F.pad(signal.view(1, 1, -1), (256, 256), mode="reflect")
    with foo_kernels_only():
        actual = F.pad(signal.to("foo").view(1, 1, -1), (256, 256), mode="reflect")
    assert torch.equal(actual.cpu(), expected)


@pytest.mark.parametrize("module", [torch.nn.ReflectionPad1d(3), torch.nn.ReflectionPad2d((1, 2, 3, 0)),
                                    torch.nn.ReflectionPad3d(1), torch.nn.ReplicationPad1d(3),
                                    torch.nn.ReplicationPad2d((1, 2, 3, 0)), torch.nn.ReplicationPad3d(2)])
def test_modules_train_step(module):
    dims = {torch.nn.ReflectionPad1d: 1, torch.nn.ReplicationPad1d: 1, torch.nn.ReflectionPad2d: 2,
            torch.nn.ReplicationPad2d: 2}.get(type(module), 3)
    x = torch.randn((2, 3) + (4,) * dims, requires_grad=True)
    y = module(x)
    (g,) = torch.autograd.grad((y * y).sum(), x)
    fx = _foo(x)
    with foo_kernels_only():
        fy = module.to("foo")(fx)
        (fg,) = torch.autograd.grad((fy * fy).sum(), fx)
    assert torch.equal(fy.cpu(), y.detach())
    torch.testing.assert_close(fg.cpu(), g)
