"""Dtypes foo does not compute (complex, float8, uint16/32/64, bits, sub-byte and quantized types):
where only bytes move (allocation, copies both ways, views, view_as_real/view_as_complex) they
work, everything else raises a clean Python error naming the op and the dtype, and nothing
crashes the process. The sweep over every torch.dtype runs in subprocesses, one per dtype group,
so a crash fails the test instead of taking pytest down."""

import json
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import torch_foo

ALL_DTYPES = sorted({v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=str)


def kind_of(dtype):
    name = str(dtype)
    if dtype == getattr(torch, "bcomplex32", None):  # torch 2.14: the CPU moves it, computes nothing
        return "bytes_only"
    if dtype.is_complex:
        return "complex"
    if re.fullmatch(r"torch\.u?int[1-7]|torch\.q\w+", name):
        return "subbyte_quantized"
    if "float8" in name or "float4" in name or "bits" in name or re.fullmatch(r"torch\.uint(16|32|64)", name):
        return "bytes_only"
    return "computed"


# One worker process per group: a crash fails that group's test and names the dtype.
GROUP_OF_KIND = {"computed": "computed_complex", "complex": "computed_complex", "bytes_only": "other",
                 "subbyte_quantized": "other"}
GROUPS = ["computed_complex", "other"]


def group_of(dtype):
    return GROUP_OF_KIND[kind_of(dtype)]


# ---- the worker: runs in a subprocess (python tests/test_dtypes.py GROUP) and prints JSON ----

def _bytes(t):
    """A CPU tensor's bytes in logical order (works for dtypes the CPU cannot copy: via uint8)."""
    u8 = torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage(), t.storage_offset() * t.element_size(),
                                                  tuple(t.shape) + (t.element_size(),),
                                                  tuple(s * t.element_size() for s in t.stride()) + (1,))
    return np.ascontiguousarray(u8.numpy()).tobytes()


def _random_cpu(dtype, shape):
    if dtype.is_complex:  # finite values: conj must flip signs, not meet nan payloads
        # (bcomplex32, new in torch 2.14, has bfloat16 parts: view_as_complex does not make it)
        real = {torch.complex32: torch.float16, torch.complex64: torch.float32,
                getattr(torch, "bcomplex32", None): torch.bfloat16}.get(dtype, torch.float64)
        return torch.randn(*shape, 2).to(real).view(dtype).squeeze(-1)
    n = int(np.prod(shape)) * dtype.itemsize
    return torch.randint(0, 256, (n,), dtype=torch.uint8).view(dtype).reshape(shape)


def _run_checks(dtype):
    results = {}

    def check(name, fn):
        try:
            results[name] = ["ok", fn()]
        except Exception as e:  # noqa: BLE001 - the point is to record which exception it was
            results[name] = [type(e).__name__, str(e).splitlines()[0][:300] if str(e) else ""]

    def alloc():
        x = torch.empty(3, 5, dtype=dtype, device="foo")
        assert x.dtype == dtype and x.device.type == "foo" and x.shape == (3, 5)

    def copies():
        c = _random_cpu(dtype, (3, 5))
        f = c.to("foo")
        assert f.dtype == dtype and f.device.type == "foo"
        assert _bytes(f.cpu()) == _bytes(c), "contiguous round trip"
        assert _bytes(f.t().cpu()) == _bytes(c.t()), "strided device -> host"
        assert _bytes(c.t().to("foo").cpu()) == _bytes(c.t()), "strided host -> device"
        assert _bytes(f.t().contiguous().cpu()) == _bytes(c.t()), "strided copy on the device"
        if torch.foo.device_count() > 1:
            assert _bytes(f.t().to("foo:1").cpu()) == _bytes(c.t()), "device -> device"

    def fill():
        try:
            expected = torch.empty(2, 3, dtype=dtype).fill_(1)
        except Exception:  # the CPU cannot: foo must raise cleanly too (checked by the caller)
            expected = None
        got = torch.empty(4, 3, dtype=dtype, device="foo")[::2].fill_(1).cpu()
        assert expected is not None, "foo filled a dtype the CPU cannot fill"
        assert _bytes(got) == _bytes(expected)

    def view():
        c = _random_cpu(dtype, (4, 6))
        f = c.to("foo")
        assert _bytes(f[1:, ::2].cpu()) == _bytes(c[1:, ::2])
        assert _bytes(f.view(2, 12).t().cpu()) == _bytes(c.view(2, 12).t())
        if dtype.is_complex:
            r = torch.view_as_real(f)
            assert r.device.type == "foo" and r.shape == (4, 6, 2)
            assert _bytes(r.cpu()) == _bytes(torch.view_as_real(c))
            # torch's view_as_complex takes no bfloat16 parts (bcomplex32, 2.14), on any device
            back = r.view(dtype).squeeze(-1) if r.dtype == torch.bfloat16 else torch.view_as_complex(r)
            assert _bytes(back.cpu()) == _bytes(c)
            try:
                want = c.conj().resolve_conj()
            except NotImplementedError:  # the CPU cannot conjugate it (bcomplex32, torch 2.14)
                want = None
            if want is not None:
                assert _bytes(f.conj().cpu().resolve_conj()) == _bytes(want)

    def fallback_op():
        c = _random_cpu(dtype, (3, 4))
        try:
            expected = torch.flip(c, [0])
        except Exception:
            expected = None
        got = torch.flip(c.to("foo"), [0])  # not in the manifest: runs on the CPU through the fallback
        assert got.device.type == "foo" and expected is not None
        assert _bytes(got.cpu()) == _bytes(expected)

    def native_ops():
        # one native op of each family: a value or a clean error, never a crash
        f = _random_cpu(dtype, (3, 4)).to("foo")
        outcomes = []
        for op in (lambda: f + f, lambda: f.abs(), lambda: f.sum(), lambda: f @ f.t(), lambda: f == f,
                   lambda: torch.where(f == f, f, f), lambda: f.softmax(1), lambda: f.normal_(),
                   lambda: f.random_(0, 2), lambda: torch.randperm(3, dtype=dtype, device="foo"),
                   lambda: torch.arange(3, dtype=dtype, device="foo"), lambda: f.float().cpu()):
            try:
                op()
                outcomes.append("ok")
            except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
                outcomes.append(f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        return outcomes

    torch_foo.set_fallback_policy("silent")
    check("alloc", alloc)
    check("copies", copies)
    check("fill", fill)
    check("view", view)
    check("fallback_op", fallback_op)
    check("native_ops", native_ops)
    return results


def _worker(group):
    import warnings

    warnings.simplefilter("ignore")
    for dtype in ALL_DTYPES:
        if group_of(dtype) == group:
            print(f"checking {dtype}", file=sys.stderr, flush=True)  # the last line names a crash's dtype
            print(json.dumps({"dtype": str(dtype), "results": _run_checks(dtype)}), flush=True)


# ---- the tests ----

CLEAN = {"RuntimeError", "NotImplementedError", "TypeError", "ValueError"}


def _names(dtype):
    """Ways an error message may name dtype: torch.uint16 -> uint16; c10's UInt16; quantized backends."""
    short = str(dtype).split(".")[1]
    c10 = {"int64": "long", "int32": "int", "int16": "short", "int8": "char", "uint8": "byte", "float16": "half",
           "float32": "float", "float64": "double"}
    names = {short, c10.get(short, short)}
    names |= {"complexfloat", "complexdouble", "complexhalf"} if dtype.is_complex else set()
    names |= {"quantized"} if short.startswith("q") else set()
    return names


def _assert_clean(dtype, check, outcome):
    kind, message = outcome
    assert kind in CLEAN, f"{dtype} {check}: {kind}: {message}"
    flat = re.sub(r"[^a-z0-9]", "", message.lower())
    assert any(n.replace("_", "") in flat for n in _names(dtype)), f"{dtype} {check}: error does not name the dtype: {message}"


@pytest.mark.parametrize("group", GROUPS)
def test_every_dtype_moves_or_fails_cleanly(group):
    proc = subprocess.run([sys.executable, __file__, group], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"the worker died (crash?) after: {proc.stderr.strip().splitlines()[-3:]}"
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    expected = [str(d) for d in ALL_DTYPES if group_of(d) == group]
    assert [r["dtype"] for r in records] == expected
    for record in records:
        dtype = getattr(torch, record["dtype"].split(".")[1])
        res = record["results"]
        for check, outcome in res.items():
            if outcome[0] != "ok":
                _assert_clean(dtype, check, outcome)
        kind = kind_of(dtype)
        if not str(dtype).startswith("torch.q"):  # bytes move for every dtype but the quantized ones
            assert res["alloc"][0] == res["copies"][0] == res["view"][0] == "ok", (dtype, res)
        if kind in ("computed", "complex"):
            assert res["fill"][0] == res["fallback_op"][0] == "ok", (dtype, res)
        if res["native_ops"][0] == "ok":
            for outcome in res["native_ops"][1]:
                if outcome != "ok":
                    _assert_clean(dtype, "native op", outcome.split(": ", 1))


# ---- complex specifics and the snippets of issue 7 ----

def test_fft_snippets_of_issue_7():
    x = torch.randn(5, 6, 7)
    xf = x.to("foo")
    y = torch.fft.ifft(xf, norm="ortho")  # crashed the process (stack overflow) before
    assert y.device.type == "foo" and y.dtype == torch.complex64
    torch.testing.assert_close(y.cpu(), torch.fft.ifft(x, norm="ortho"))
    z = torch.fft.ifft(xf, n=10, dim=1)  # raised "copy_: foo has no kernel for dtype unknown"
    assert z.shape == (5, 10, 7)
    torch.testing.assert_close(z.cpu(), torch.fft.ifft(x, n=10, dim=1))


def same(a, b):
    """Equal values of two CPU complex tensors (torch.equal has no ComplexHalf kernel)."""
    return a.dtype == b.dtype and torch.equal(torch.view_as_real(a), torch.view_as_real(b))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.complex32], ids=str)
def test_complex_casts_and_fill(dtype):
    real = torch.float16 if dtype == torch.complex32 else torch.float32
    c = torch.complex(torch.randn(4, 3), torch.randn(4, 3)).to(dtype)
    f = c.to("foo")
    # real -> complex, complex -> complex, complex -> real on the device
    r = torch.randn(4, 3).to(real)
    assert same(r.to("foo").to(dtype).cpu(), r.to(dtype))
    assert same(f.to(torch.complex128).cpu(), c.to(torch.complex128))
    assert same(f.to(torch.complex64).t().contiguous().cpu(), c.to(torch.complex64).t().contiguous())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Casting complex values to real discards the imaginary part"
        assert torch.equal(f.to(torch.float64).cpu(), torch.view_as_real(c)[..., 0].to(torch.float64))
    assert same(torch.empty(2, 2, dtype=dtype, device="foo").fill_(1 - 2j).cpu(),
                torch.full((2, 2), 1 - 2j, dtype=torch.complex128).to(dtype))
    assert same(torch.zeros(2, dtype=dtype, device="foo").cpu(), torch.zeros(2, dtype=dtype))
    if dtype == torch.complex32:
        with pytest.raises(RuntimeError, match=r"\"mul\" not implemented for 'Complex\w*' on foo"):
            f * f  # an op no kernel computes names itself and the dtype
    else:  # complex64/128 compute in the pointwise formulas (kernels/core/dtype.h complex_t)
        torch.testing.assert_close((f * f).cpu(), c * c)
        with pytest.raises(RuntimeError, match=r"\"sin\" not implemented for 'Complex\w*' \(complex\d+\) on foo"):
            torch.sin(f)  # a formula that does not claim complex names itself and the dtype



@pytest.mark.parametrize("dtype", [torch.complex32, torch.complex64, torch.complex128], ids=str)
def test_data_movement_kernels_move_complex_elements(dtype, no_fallback):
    """flip/roll/tril/repeat/cat/masked_select move elements as words of their size (complex128: 16 bytes)."""
    c = torch.complex(torch.randn(3, 4), torch.randn(3, 4)).to(dtype)
    f = c.to("foo")
    for op in (lambda t: t.flip(0), lambda t: t.roll(1, 1), lambda t: t.t().tril(-1), lambda t: t.repeat(2, 1),
               lambda t: torch.cat([t, t[:1]]), lambda t: torch.stack([t, t], 1),
               lambda t: torch.masked_select(t, (torch.arange(4) % 3 == 0).to(t.device))):
        got = op(f)
        expected = op(c.to(torch.complex64)).to(dtype) if dtype == torch.complex32 else op(c)  # no CPU kernels for complex32
        assert got.device.type == "foo" and same(got.cpu(), expected)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_conjugate_and_negative_views_resolve_in_copies(dtype):
    c = torch.complex(torch.randn(4, 3), torch.randn(4, 3)).to(dtype)
    f = c.to("foo")
    assert torch.equal(f.conj().cpu().resolve_conj(), c.conj().resolve_conj())  # device -> host
    assert torch.equal(c.conj().to("foo").resolve_conj().cpu(), c.conj().resolve_conj())  # host -> device
    assert torch.equal(f.conj().clone().resolve_conj().cpu(), c.conj().resolve_conj())  # on the device
    assert torch.equal(torch._neg_view(f).cpu().resolve_neg(), -c)
    assert torch.equal(torch._neg_view(f).conj().resolve_neg().resolve_conj().cpu(), (-c).conj().resolve_conj())
    out = torch.empty(4, 3, dtype=dtype, device="foo")
    out.copy_(c.conj())  # a plain destination gets the conjugated values
    assert torch.equal(out.cpu(), c.conj().resolve_conj())
    out.conj().copy_(c)  # a conjugate destination stores conj(values)
    assert torch.equal(out.cpu(), c.conj().resolve_conj())
    if torch.foo.device_count() > 1:
        assert torch.equal(f.conj().to("foo:1").resolve_conj().cpu(), c.conj().resolve_conj())


def test_unsupported_device_casts_name_the_dtypes():
    x = torch.ones(3, device="foo")
    with pytest.raises(NotImplementedError, match="copy_: foo cannot convert Float to UInt16"):
        x.to(torch.uint16)
    # host <-> device casts the device cannot do run on the CPU
    u16 = torch.tensor([0, 1, 2], dtype=torch.uint16)
    assert torch.equal(torch.tensor([0, 1, 2]).to("foo", torch.uint16).cpu(), u16)
    assert torch.equal(u16.to("foo").to("cpu", torch.float32), torch.tensor([0.0, 1.0, 2.0]))
    f8 = torch.tensor([0.5, 2.0]).to("foo", torch.float8_e4m3fn)
    assert f8.dtype == torch.float8_e4m3fn and torch.equal(f8.cpu().float(), torch.tensor([0.5, 2.0]))


if __name__ == "__main__":
    _worker(sys.argv[1])
