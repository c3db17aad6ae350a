"""Native creation ops (arange, linspace, fill_/zero_ behind zeros/ones/full) against the CPU,
bit for bit: over dtypes, negative and float steps, empty ranges, ranges past the CPU's
parallel grain (its thread chunks change how it rounds), strided out=, and the CPU's errors."""

import random

import pytest
import torch

import torch_foo
from conftest import foo_kernels_only

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def same_as_cpu(fn):
    """fn(device) gives the same tensor (dtype, shape, bits) on foo as on the CPU, natively,
    or raises the same exception type."""
    try:
        expected = fn("cpu")
    except Exception as e:  # noqa: BLE001 - the CPU's error is the specification
        with pytest.raises(type(e)):
            fn("foo")
        return
    with foo_kernels_only():
        actual = fn("foo")
    assert actual.device.type == "foo"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert torch.equal(actual.cpu(), expected), f"{(actual.cpu() != expected).sum().item()} elements differ"


ARANGE = [(0, 10, 1), (10, 0, -3), (5, 5, 1), (0, 1, 3), (0, 1000, 0.1), (0.3, 1e3, 0.7), (-5, 5, 0.013),
          (0, -10, -0.37), (1, 3000, 1.1), (2.5, 40000.1, 0.5), (-3, 100000, 1.7)]
_rng = random.Random(0)
ARANGE += [(s, s + st * _rng.randint(0, 3000), st)
           for s, st in ((_rng.uniform(-100, 100), _rng.choice([-1, 1]) * _rng.uniform(0.001, 5)) for _ in range(8))]


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_arange_matches_cpu(dtype):
    for start, end, step in ARANGE:
        if not dtype.is_floating_point and int(step) == 0:
            # The step truncates to 0: torch 2.13's CPU raises this; 2.11's dies of SIGFPE (int64)
            # or computes something (narrower ints), so it is not asked. foo raises on every torch.
            with pytest.raises((RuntimeError, ValueError), match="step must be nonzero"):
                torch.arange(start, end, step, dtype=dtype, device="foo")
            continue
        same_as_cpu(lambda d: torch.arange(start, end, step, dtype=dtype, device=d))


@pytest.mark.parametrize("threads", [1, 3])
def test_arange_past_the_cpu_grain(threads):
    # Past 32768 elements the CPU splits the range over its threads, and each chunk restarts its
    # vector loop: the rounding of some elements depends on the chunk boundaries.
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for dtype in FLOATS:
            same_as_cpu(lambda d: torch.arange(0, 100000, 0.37, dtype=dtype, device=d))
    finally:
        torch.set_num_threads(old)


def test_arange_default_dtypes_and_out():
    same_as_cpu(lambda d: torch.arange(10, device=d))              # int64
    same_as_cpu(lambda d: torch.arange(0, 1, 0.25, device=d))      # float32 (default dtype)
    same_as_cpu(lambda d: torch.arange(2**62, 2**62 + 100, 3, device=d))  # beyond double's precision
    same_as_cpu(lambda d: torch.arange(0, 300, 7, dtype=torch.int8, device=d))  # wraps as on the CPU

    def strided_out(d):
        out = torch.zeros(20, device=d)[::2]
        torch.arange(0, 1, 0.1, out=out)
        return out
    same_as_cpu(strided_out)

    def resized_out(d):
        out = torch.zeros(0, dtype=torch.int32, device=d)
        torch.arange(-4, 9, 2, out=out)
        return out
    same_as_cpu(resized_out)


@pytest.mark.parametrize("args", [(0, 3, 0), (0, 3, -1), (3, 0, 1), (0, float("inf"), 1), (0, float("nan"), 1)], ids=str)
def test_arange_errors(args):
    same_as_cpu(lambda d: torch.arange(*args, device=d))
    with pytest.raises(RuntimeError):
        torch.arange(*args, device="foo")


def test_arange_bool_unsupported_like_cpu():
    same_as_cpu(lambda d: torch.arange(3, dtype=torch.bool, device=d))


LINSPACE = [(0, 1, 7), (0, 1, 2), (0, 1, 1), (0, 1, 0), (-3.3, 7.7, 101), (1, -1, 1000), (0, 255, 17),
            (-100, 100, 33), (3, 3, 5), (5, 0, 6), (0, 1e4, 40001)]
LINSPACE += [(_rng.uniform(-1000, 1000), _rng.uniform(-1000, 1000), _rng.randint(2, 3000)) for _ in range(8)]


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_linspace_matches_cpu(dtype):
    for start, end, steps in LINSPACE:
        same_as_cpu(lambda d: torch.linspace(start, end, steps, dtype=dtype, device=d))


def test_linspace_out_and_errors():
    def strided_out(d):
        out = torch.zeros(5, 4, device=d)[:, 1]
        torch.linspace(-1, 1, 5, out=out)
        return out
    same_as_cpu(strided_out)
    same_as_cpu(lambda d: torch.linspace(0, 1, -1, device=d))
    same_as_cpu(lambda d: torch.linspace(0, 300, 11, dtype=torch.int8, device=d))  # start/end overflow int8
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.linspace(0, 1, -1, device="foo")


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
def test_zeros_ones_full_fill(dtype):
    same_as_cpu(lambda d: torch.zeros(4, 3, dtype=dtype, device=d))
    same_as_cpu(lambda d: torch.ones(4, 3, dtype=dtype, device=d))
    for value in (0, 1, -1, 2.5, 300, 1e6, True):
        same_as_cpu(lambda d: torch.full((3, 5), value, dtype=dtype, device=d))

    def strided(d):  # gaps (written in place through the layout) and a transposed row
        x = torch.zeros(6, 5, dtype=dtype, device=d)
        x[:, ::2].fill_(1)
        x.t()[1].fill_(1)
        x[1:4, 1:3].zero_()
        return x
    same_as_cpu(strided)


def test_fill_edge_cases():
    same_as_cpu(lambda d: torch.empty((), device=d).fill_(3))
    same_as_cpu(lambda d: torch.zeros(3, device=d).expand(2, 3).fill_(2))  # overlapping: one value anyway
    same_as_cpu(lambda d: torch.empty(0, 3, device=d).fill_(2))
    same_as_cpu(lambda d: torch.zeros(4, 5, device=d).permute(1, 0).fill_(7))
    same_as_cpu(lambda d: torch.empty(3, dtype=torch.uint8, device=d).fill_(-1))  # 255, as on the CPU
    for dtype, value in ((torch.uint8, 300), (torch.float16, 1e6), (torch.float32, 1e300), (torch.int32, 2**40)):
        with pytest.raises(RuntimeError, match="overflow"):
            torch.empty(3, dtype=dtype, device="foo").fill_(value)


def test_factories_hit_no_fallback(no_fallback):
    torch.arange(10, device="foo")
    torch.linspace(0, 1, 7, device="foo")
    torch.zeros(3, device="foo")
    torch.ones(2, 2, device="foo")
    torch.full((2, 3), 1.5, device="foo")
    torch.zeros_like(torch.empty(3, device="foo"))


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool], ids=str)
def test_eye_matches_cpu(dtype):
    """The eye OpInfo's first samples are all n = 0; these are not."""
    for n, m in [(1, None), (5, None), (3, 7), (7, 3), (0, 4), (4, 0), (300, 257)]:
        args = (n,) if m is None else (n, m)
        same_as_cpu(lambda device, args=args: torch.eye(*args, dtype=dtype, device=device))


def test_eye_out_and_errors():
    # out= of another shape is resized; a transposed out= keeps its strides, the diagonal found through them.
    same_as_cpu(lambda device: torch.eye(4, 6, out=torch.full((2, 2), 7.0, device=device)))
    same_as_cpu(lambda device: torch.eye(5, out=torch.full((5, 5), 7.0, device=device).t()))
    same_as_cpu(lambda device: torch.eye(3, 4, out=torch.full((4, 3), 7, device=device).t()))
    out = torch.full((6, 5), 9.0, device="foo").t()
    with foo_kernels_only():
        torch.eye(5, 6, out=out)
    assert out.stride() == (1, 5) and torch.equal(out.cpu(), torch.eye(5, 6))
    same_as_cpu(lambda device: torch.eye(-1, device=device))
    same_as_cpu(lambda device: torch.eye(3, -2, device=device))
