"""Binary/ternary pointwise families (compare, bitwise, binary_math, ternary): what the
OpInfo-generated tests do not reach. Out-of-range scalar operands, CPU scalars in `self`, pow's
special exponents and integer corner cases, the 64-bit indexing path over many blocks, and an
AdamW step that stays native."""

import textwrap

import pytest
import torch

import torch_foo
from conftest import assert_foo_equal, fallback_count, run_python, foo_kernels_only

FOO = "foo:0"


def test_scalar_operand_wraps_like_cpu():
    # The CPU casts a scalar operand to the common dtype without a range check (1000 -> -24 in int8).
    x = torch.tensor([5, -30, 100, -128], dtype=torch.int8)
    xf = x.to(FOO)
    assert_foo_equal(xf > 1000, x > 1000)
    assert_foo_equal(xf == -24 + 256, x == 232)
    assert_foo_equal(xf + 1000, x + 1000)
    u = torch.tensor([0, 1, 255], dtype=torch.uint8)
    assert_foo_equal(u.to(FOO) == 256, u == 256)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_python_number_of_a_16_bit_op_is_rounded_as_on_the_cpu(dtype):
    """A Python number with a 16-bit tensor: the CPU's mul and div read it as a float (x * 0.3
    multiplies by 0.3f and rounds once), add, sub and comparisons round it to the dtype first, and a
    number as the first operand of mul is rounded too. foo follows each (the manifest's
    wrapped_numbers), bit for bit; 0.3 and 3.14159 are not representable in 16 bits, so each way
    differs from the other on most elements."""
    torch.manual_seed(0)
    x = (torch.randn(1000) * 3).to(dtype)
    cases = {
        "mul": lambda t: t * 3.14159, "mul_": lambda t: t.clone().mul_(0.3), "div": lambda t: t / 0.3,
        "div_trunc": lambda t: torch.div(t, 0.3, rounding_mode="trunc"),
        "div_floor": lambda t: torch.div(t, 0.3, rounding_mode="floor"),
        "number_first": lambda t: torch.mul(0.3, t), "add": lambda t: t + 0.3, "sub": lambda t: t - 0.3,
        "rsub": lambda t: 0.3 - t, "eq": lambda t: t == 0.3, "cpu_0dim": lambda t: t * torch.tensor(0.3),
    }
    for name, fn in cases.items():
        with foo_kernels_only():
            actual = fn(x.to(FOO))
        expected = fn(x)
        assert actual.device.type == "foo" and actual.dtype == expected.dtype, name
        assert torch.equal(actual.cpu(), expected), name
    # the two readings differ here, so the test sees which one foo took
    wide = (x.float() * 0.3).to(dtype)
    narrow = (x.float() * torch.tensor(0.3).to(dtype).float()).to(dtype)
    assert not torch.equal(wide, narrow)


def test_masked_fill_value_is_checked_like_cpu():
    # masked_fill_ converts its value with a range check on the CPU, unlike a scalar operand.
    x = torch.zeros(4, dtype=torch.int8, device=FOO)
    mask = torch.tensor([True, False, True, False], device=FOO)
    with pytest.raises(RuntimeError, match="overflow"):
        x.masked_fill_(mask, 300)
    assert_foo_equal(x.masked_fill_(mask, 3.7), torch.tensor([3, 0, 3, 0], dtype=torch.int8))
    with pytest.raises(RuntimeError, match="0-dimensional value"):
        x.masked_fill_(mask, torch.ones(1, dtype=torch.int8, device=FOO))


def test_cpu_scalar_tensor_as_self():
    # aten's rsub.Scalar (`1 - x`) and mul_.Scalar pass a wrapped CPU scalar as `self`.
    x = torch.arange(5.0)
    xf = x.to(FOO)
    with foo_kernels_only():
        assert_foo_equal(1 - xf, 1 - x)
        assert_foo_equal(torch.sub(torch.tensor(2.0), xf, alpha=3), torch.sub(torch.tensor(2.0), x, alpha=3))
        params = [xf.clone(), xf[:3].clone()]
        torch._foreach_mul_(params, 0.5)
        assert_foo_equal(params[0], x * 0.5)


def test_pow_special_exponents_follow_cpu_formulas():
    # CPU pow(x, 0.5) is sqrt (sqrt(-0) = -0, sqrt(-inf) = nan) where std::pow gives +0 and +inf;
    # -0.5 and -1 are rsqrt and reciprocal, 2/3/-2 multiply.
    x = torch.tensor([-0.0, float("-inf"), float("inf"), 4.0, -2.0, 0.0, float("nan")])
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        xd = x.to(dtype)
        for e in (0.5, -0.5, -1, 2, 3, -2, 0, 1):
            expected = xd**e
            actual = xd.to(FOO) ** e
            assert_foo_equal(actual, expected)
            finite = ~expected.isnan()
            assert torch.equal(actual.cpu()[finite].signbit(), expected[finite].signbit()), (dtype, e)


def test_integer_pow_never_traps():
    # powi: negative exponents give 1, +-1 or 0; overflow wraps; INT_MIN exponents do not fault.
    for dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        info = torch.iinfo(dtype)
        base = torch.tensor([info.min, info.max, -1, -1, 1, 0, 2, 3, 7], dtype=dtype)
        exp = torch.tensor([2, 3, -3 if info.min < 0 else 3, info.min, info.min, 0, 9, 40, 63], dtype=dtype)
        assert_foo_equal(base.to(FOO) ** exp.to(FOO), base**exp)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.arange(3, device=FOO) ** -1


def test_clamp_nan_bounds():
    x = torch.tensor([-2.0, 0.5, float("nan"), 3.0])
    xf = x.to(FOO)
    assert_foo_equal(xf.clamp(float("nan"), 1.0), x.clamp(float("nan"), 1.0))
    assert_foo_equal(xf.clamp_min(float("nan")), x.clamp_min(float("nan")))
    assert_foo_equal(xf.clamp(-1.0, 1.0), x.clamp(-1.0, 1.0))
    assert_foo_equal(xf.clamp(max=torch.tensor([0.0, float("nan"), 1.0, 1.0], device=FOO)),
                     x.clamp(max=torch.tensor([0.0, float("nan"), 1.0, 1.0])))


def test_many_blocks_with_64bit_indexing():
    # A fresh process with the 64-bit index path forced, over non-contiguous operands and more
    # elements than one grid-stride pass of the capped grid covers.
    code = textwrap.dedent(
        """
        import torch, torch_foo
        torch.manual_seed(0)
        n = 70001
        a = torch.randn(2, n)
        b = torch.randn(n, 2).t()
        m = a > 0
        c = a.abs() + 1
        af, bf, cf, mf = a.to("foo"), b.to("foo"), c.to("foo"), m.to("foo")
        checks = [
            (torch.where(mf[:, ::3], af[:, ::3], bf[:, ::3]), torch.where(m[:, ::3], a[:, ::3], b[:, ::3])),
            (torch.maximum(af, bf), torch.maximum(a, b)),
            (af.le(bf), a.le(b)),
            (torch.addcdiv(af, bf, cf, value=0.5), torch.addcdiv(a, b, c, value=0.5)),
            (torch.lerp(af, bf, 0.3), torch.lerp(a, b, 0.3)),
            (af.clamp(-0.5, 0.5), a.clamp(-0.5, 0.5)),
            (af.masked_fill(mf, 2.0), a.masked_fill(m, 2.0)),
        ]
        for actual, expected in checks:
            torch.testing.assert_close(actual.cpu(), expected)
        print("ok", torch_foo.fallback_report())
        """
    )
    result = run_python(code, env={"TORCH_FOO_FORCE_64BIT_INDEXING": "1", "TORCH_FOO_FALLBACK": "silent"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok {}", result.stdout


@pytest.mark.parametrize("kwargs", [{}, {"foreach": False}, {"amsgrad": True}])
def test_adamw_step_is_native(kwargs):
    # AdamW (foreach by default on a PrivateUse1 device) uses lerp_, addcmul_, addcdiv_, mul_,
    # div_, add_, maximum: none may fall back (sqrt and zero_ belong to other families).
    def step(device):
        torch.manual_seed(0)
        params = [torch.randn(4, 8).to(device).requires_grad_(), torch.randn(4).to(device).requires_grad_()]
        for p in params:
            p.grad = torch.randn(p.shape).to(device)
        opt = torch.optim.AdamW(params, lr=1e-2, **kwargs)
        for _ in range(2):
            opt.step()
        return [p.detach().cpu() for p in params]

    expected = step("cpu")
    torch_foo.reset_fallback_report()
    actual = step(FOO)
    for op in ("lerp", "addcmul", "addcdiv", "mul", "div", "add", "sub", "maximum", "pow"):
        assert fallback_count(op) == 0, torch_foo.fallback_report()
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)
