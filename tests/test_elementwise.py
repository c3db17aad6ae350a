"""The elementwise launcher itself (csrc/aten/core/elementwise.cpp, csrc/kernels/core/elementwise.cuh):
geometry from TensorIterator, both index widths, host scalars, device-side casts of mixed dtypes,
and the fallback for more dims than the kernel geometry holds. Per-op coverage is generated from
the manifest elsewhere; these use add/mul/copy as carriers."""

import torch

from conftest import assert_foo_equal, run_python


def test_broadcast_and_transposed_operands():
    a, b = torch.randn(33, 1, 7), torch.randn(5, 7)
    assert_foo_equal(a.to("foo") + b.to("foo").t().contiguous().t(), a + b)
    c = torch.randn(40, 60)
    assert_foo_equal(c.to("foo").t()[:30] * c.to("foo")[:30, :40], c.t()[:30] * c[:30, :40])


def test_host_scalars_in_any_position_keep_their_value():
    x = torch.randn(17)
    assert_foo_equal(x.to("foo") * 2.5, x * 2.5)
    assert_foo_equal(torch.tensor(3.0) * x.to("foo"), torch.tensor(3.0) * x)
    i = torch.arange(10, dtype=torch.int64)
    assert_foo_equal(i.to("foo") + (2**40 + 1), i + (2**40 + 1))  # no float round trip


def test_mixed_dtypes_are_cast_on_the_device():
    i, f, h = torch.arange(12, dtype=torch.int32), torch.randn(12, dtype=torch.float64), torch.randn(12).half()
    assert_foo_equal(i.to("foo") * f.to("foo"), i * f)
    assert_foo_equal(i.to("foo") / 4, i / 4)
    out = torch.empty(12, dtype=torch.float64, device="foo")
    torch.add(h.to("foo"), h.to("foo"), out=out)
    assert_foo_equal(out, torch.add(h, h, out=torch.empty(12, dtype=torch.float64)))


def test_more_dims_than_the_geometry_holds():
    shape = (2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3)
    a = torch.randn(shape)
    b = torch.randn(shape).transpose(0, 17)
    ref = a + b.transpose(0, 17)  # strides that cannot coalesce below 16 dims
    assert_foo_equal(a.to("foo") + b.to("foo").transpose(0, 17), ref)


def test_64bit_indexing_path_gives_the_same_results():
    code = """
import torch, torch_foo
a = torch.randn(37, 41)
b = torch.randn(41)
got = (a.to("foo").t() + b.to("foo")[:, None]).cpu()
torch.testing.assert_close(got, a.t() + b[:, None], rtol=0, atol=0)
h = a.to("foo").t().to(torch.float16).cpu()
torch.testing.assert_close(h, a.t().half(), rtol=0, atol=0)
print("ok")
"""
    result = run_python(code, env={"TORCH_FOO_FORCE_64BIT_INDEXING": "1"})
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]


def test_unsupported_dtype_names_op_and_dtype():
    x = torch.ones(3, dtype=torch.bool, device="foo")
    try:
        torch.div(x, x, rounding_mode="trunc")
    except RuntimeError as error:
        assert "div" in str(error) and "bool" in str(error), str(error)
    else:
        raise AssertionError("a dtype without a kernel must raise")
