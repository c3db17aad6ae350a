"""The elementwise launcher itself (csrc/aten/core/elementwise.cpp, csrc/kernels/core/elementwise.cuh):
geometry from TensorIterator, both index widths, host scalars, device-side casts of mixed dtypes,
and the fallback for more dims than the kernel geometry holds. Per-op coverage is generated from
the manifest elsewhere; these use add/mul/copy as carriers."""

import pytest
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


# Elements per vector of the contiguous path (16 bytes of the widest operand: elementwise.cuh).
VECTOR_WIDTHS = {torch.float32: 4, torch.float16: 8, torch.bfloat16: 8, torch.bool: 16, torch.uint8: 16,
                 torch.float64: 2, torch.int64: 2, torch.complex64: 2, torch.complex128: 1}


def _values(n, dtype):
    return (torch.arange(n) % 7 - 3).to(dtype) if dtype != torch.bool else torch.arange(n) % 3 == 0


@pytest.mark.parametrize("dtype", list(VECTOR_WIDTHS), ids=str)
def test_contiguous_path_at_every_alignment_and_tail(dtype):
    """Contiguous operands move in aligned vectors, misaligned ones and the last partial vector
    element by element (whole-vector accesses run on a GPU and in the checked sim build, which
    runs this test: tests/test_sim_checked_build.py; the fast sim build visits the same runs
    element by element): every operand offset within a vector (views x[o:], which start off the
    allocation's alignment), every tail length, runs of a thread (512 elements on sim) cut
    anywhere, each operand misaligned alone, a scalar operand and a narrower output (a bool
    comparison of wider inputs) all give the CPU's values."""
    v = VECTOR_WIDTHS[dtype]
    lengths = sorted({*range(1, 2 * v + 2), 511, 512, 513, 1024 + v - 1, 4099})
    a_base, b_base = _values(4099 + v, dtype), _values(4099 + v, dtype).flip(0)
    fa, fb = a_base.to("foo"), b_base.to("foo")
    add = torch.logical_or if dtype == torch.bool else torch.add
    for offset in range(v + 1):
        for n in lengths:
            a, b = a_base[offset:offset + n], b_base[:n]
            assert_foo_equal(add(fa[offset:offset + n], fb[:n]), add(a, b))  # first input misaligned
            assert_foo_equal(add(fb[:n], fa[offset:offset + n]), add(b, a))  # second input misaligned
            out = torch.empty(n + v, dtype=dtype, device="foo")[offset:offset + n]
            add(fa[:n], fb[:n], out=out)  # output misaligned
            assert_foo_equal(out, add(a_base[:n], b))
            if dtype != torch.bool:
                assert_foo_equal(fa[offset:offset + n] * 3, a * 3)  # a host scalar has no alignment
            if not dtype.is_complex and dtype != torch.bool:
                assert_foo_equal(fa[offset:offset + n] < fb[:n], a < b)  # bool output, wider inputs


SIZES = (1, 2, 3, 5, 7, 31, 32, 33, 255, 256, 257, 4099, 65537)


def test_strided_path_divides_every_dimension_size():
    """Strided operands split each element's index with the host's dividers (32-bit offsets) or
    `/` and `%` (64-bit): transposed and sliced operands over sizes that are primes, powers of two
    and their neighbours, checked exactly (integer values, so any element read from another's
    address shows)."""
    for inner in SIZES:
        for outer in (3, 33, 257):
            if inner * outer > 2**22:
                continue
            a = torch.arange(outer * inner * 2, dtype=torch.int64).reshape(outer, inner * 2)[:, ::2]
            b = torch.arange(inner * outer, dtype=torch.int64).reshape(inner, outer).t()
            got = a.to("foo") + b.to("foo") * 1000003
            assert_foo_equal(got, a + b * 1000003)
    c = torch.arange(7 * 33 * 257, dtype=torch.float32).reshape(7, 33, 257)
    assert_foo_equal(c.to("foo").permute(2, 0, 1) * 2, c.permute(2, 0, 1) * 2)
