"""F.embedding_bag / nn.EmbeddingBag on foo (csrc/aten/ops/embedding_bag.cpp, kernels/ops/embedding_bag.cu)
against the CPU, with the fallback forbidden: what the OpInfo's first samples (sum mode only) do
not reach -- mean and max, padding_idx, include_last_offset, empty bags, int32 indices, 16-bit
tables, all four results of the aten ops (offset2bag, bag_size, max_indices feed the backward),
the backward ops called directly, scale_grad_by_freq, errors and out-of-range indices."""

import re
import time

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import torch_foo
from conftest import foo_kernels_only

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
MODES = ["sum", "mean", "max"]
MODE_NUM = {"sum": 0, "mean": 1, "max": 2}


def _foo(t):
    return None if t is None else t.to("foo")


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else {}


def _bags(num_weights=20, num_bags=7, max_len=6, seed=0, dtype=torch.int64):
    """Random bags (some empty, duplicated indices) as flat indices and their offsets."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, max_len + 1, (num_bags,), generator=g)
    lengths[1] = 0
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
    indices = torch.randint(0, num_weights, (int(lengths.sum()),), generator=g)
    return indices.to(dtype), offsets.to(dtype)


def _aten_results(op, weight, indices, offsets, mode, psw, last, padding_idx):
    return op(weight, indices, offsets, False, MODE_NUM[mode], False, psw, last, padding_idx)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding_idx", [-1, 3])
@pytest.mark.parametrize("last", [False, True], ids=["offsets", "include_last_offset"])
@pytest.mark.parametrize("op", ["_embedding_bag", "_embedding_bag_forward_only"])
def test_all_four_results_match_cpu(dtype, mode, padding_idx, last, op):
    aten = getattr(torch.ops.aten, op)
    weight = torch.randn(20, 5).to(dtype)
    indices, offsets = _bags()
    indices[::4] = 3  # padding_idx occurs
    if last:
        offsets = torch.cat([offsets, torch.tensor([indices.numel()])])
    psw = torch.randn(indices.numel()).to(dtype) if mode == "sum" else None
    for w in (psw, None) if psw is not None else (None,):
        expected = _aten_results(aten, weight, indices, offsets, mode, w, last, padding_idx)
        with foo_kernels_only():
            actual = _aten_results(aten, _foo(weight), _foo(indices), _foo(offsets), mode, _foo(w), last, padding_idx)
        for name, a, e in zip(["output", "offset2bag", "bag_size", "max_indices"], actual, expected):
            assert a.device.type == "foo" and a.dtype == e.dtype and a.shape == e.shape, name
            if name == "output" and dtype in (torch.float16, torch.bfloat16) and w is not None:
                # 16-bit products with per-sample weights: float on foo, the CPU's rounding differs
                torch.testing.assert_close(a.cpu().double(), e.double(), rtol=2e-2, atol=2e-2)
            else:
                torch.testing.assert_close(a.cpu(), e, **_tol(dtype), msg=name)


@pytest.mark.parametrize("index_dtypes", [(torch.int32, torch.int32), (torch.int32, torch.int64),
                                          (torch.int64, torch.int32)], ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_index_dtypes_promote_as_on_the_cpu(index_dtypes, mode):
    weight = torch.randn(20, 4)
    indices, offsets = _bags()
    indices, offsets = indices.to(index_dtypes[0]), offsets.to(index_dtypes[1])
    expected = _aten_results(torch.ops.aten._embedding_bag, weight, indices, offsets, mode, None, False, -1)
    with foo_kernels_only():
        actual = _aten_results(torch.ops.aten._embedding_bag, _foo(weight), _foo(indices), _foo(offsets), mode, None,
                               False, -1)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e)


def test_many_bags_and_wide_rows():
    """More bags than one grid's worth of blocks would suggest, rows wider than a block."""
    weight = torch.randn(300, 600)
    indices, offsets = _bags(num_weights=300, num_bags=1500, max_len=4, seed=1)
    for mode in MODES:
        expected = F.embedding_bag(indices, weight, offsets, mode=mode)
        with foo_kernels_only():
            actual = F.embedding_bag(_foo(indices), _foo(weight), _foo(offsets), mode=mode)
        torch.testing.assert_close(actual.cpu(), expected, rtol=1e-5, atol=1e-5)


def test_max_keeps_the_first_of_equal_values():
    weight = torch.tensor([[1.0, 5.0], [3.0, 5.0], [3.0, 2.0], [0.0, 0.0]])
    indices, offsets = torch.tensor([0, 1, 2, 3, 3, 2, 1]), torch.tensor([0, 3, 5])
    expected = torch.ops.aten._embedding_bag(weight, indices, offsets, False, 2)
    with foo_kernels_only():
        actual = torch.ops.aten._embedding_bag(_foo(weight), _foo(indices), _foo(offsets), False, 2)
    assert actual[3].tolist() == expected[3].tolist() == [[1, 0], [3, 3], [2, 1]]
    torch.testing.assert_close(actual[0].cpu(), expected[0])


@pytest.mark.parametrize("case", ["no_indices", "no_bags", "no_columns"])
@pytest.mark.parametrize("mode", MODES)
def test_empty_shapes(case, mode):
    weight = torch.randn(6, 0 if case == "no_columns" else 3)
    indices = torch.tensor([], dtype=torch.long) if case == "no_indices" else torch.tensor([1, 2, 5])
    offsets = {"no_bags": torch.tensor([], dtype=torch.long), "no_indices": torch.tensor([0, 0, 0])}.get(
        case, torch.tensor([0, 1, 1]))
    with foo_kernels_only():
        actual = torch.ops.aten._embedding_bag(_foo(weight), _foo(indices), _foo(offsets), False, MODE_NUM[mode])
    if case == "no_bags" and mode == "max":  # the CPU's kernel crashes here (torch 2.13)
        assert [tuple(t.shape) for t in actual] == [(0, 3), (3,), (0,), (0, 3)]
        assert actual[1].tolist() == [-1, -1, -1]  # no bag holds them, as the CPU's cumulative count says
        return
    # The CPU's float fast path fails on rows of no columns; its double path (which returns
    # offset2bag in sum mode too) is the reference.
    expected = list(torch.ops.aten._embedding_bag(weight.double() if case == "no_columns" else weight, indices,
                                                  offsets, False, MODE_NUM[mode]))
    if case == "no_columns":
        expected[0] = expected[0].float()
        if mode == "sum":
            expected[1] = expected[1][:0]
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        torch.testing.assert_close(a.cpu(), e)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("input_2d", [False, True], ids=["offsets", "2d_input"])
def test_gradients_match_cpu(dtype, mode, padding_idx, input_2d):
    torch.manual_seed(0)
    weight = torch.randn(12, 6, dtype=dtype, requires_grad=True)
    if input_2d:
        indices, offsets = torch.randint(0, 12, (5, 4)), None
        indices[0, 1] = 2
    else:
        indices, offsets = _bags(num_weights=12, seed=2)
        indices[::3] = 2
    psw = torch.randn(indices.shape, dtype=dtype, requires_grad=True) if mode == "sum" else None
    kw = dict(mode=mode, padding_idx=padding_idx)
    out = F.embedding_bag(indices, weight, offsets, per_sample_weights=psw, **kw)
    grad = torch.randn_like(out)
    leaves = (weight,) if psw is None else (weight, psw)
    expected = torch.autograd.grad(out, leaves, grad)
    fleaves = [t.detach().to("foo").requires_grad_() for t in leaves]
    with foo_kernels_only():
        fout = F.embedding_bag(_foo(indices), fleaves[0], _foo(offsets),
                               per_sample_weights=fleaves[1] if psw is not None else None, **kw)
        actual = torch.autograd.grad(fout, fleaves, grad.to("foo"))
    torch.testing.assert_close(fout.cpu(), out.detach(), **_tol(dtype))
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a.cpu(), e, **_tol(dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_16bit_gradients_close_to_float32(dtype, mode):
    """16-bit gradients accumulate in float32 and round once: compared with float32 on the same values."""
    weight = torch.randn(12, 6).to(dtype)
    indices, offsets = _bags(num_weights=12, seed=3)
    grad = torch.randn(offsets.numel(), 6).to(dtype)
    weight32 = weight.float().requires_grad_()
    (expected,) = torch.autograd.grad(F.embedding_bag(indices, weight32, offsets, mode=mode), weight32, grad.float())
    fweight = weight.to("foo").requires_grad_()
    with foo_kernels_only():
        (actual,) = torch.autograd.grad(F.embedding_bag(_foo(indices), fweight, _foo(offsets), mode=mode), fweight,
                                        grad.to("foo"))
    assert actual.dtype == dtype
    torch.testing.assert_close(actual.cpu().float(), expected, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding_idx", [-1, 2])
def test_dense_backward_called_directly_matches_cpu(mode, padding_idx):
    weight = torch.randn(12, 5, dtype=torch.float64)
    indices, offsets = _bags(num_weights=12, seed=4)
    indices[::3] = 2
    _, offset2bag, bag_size, max_indices = torch.ops.aten._embedding_bag(weight, indices, offsets, False,
                                                                         MODE_NUM[mode], False, None, False, padding_idx)
    grad = torch.randn(offsets.numel(), 5, dtype=torch.float64)
    psw = torch.randn(indices.numel(), dtype=torch.float64) if mode == "sum" else None
    args = (indices, offset2bag, bag_size, max_indices)
    expected = torch.ops.aten._embedding_bag_dense_backward(grad, *args, 12, False, MODE_NUM[mode], psw, padding_idx)
    with foo_kernels_only():
        actual = torch.ops.aten._embedding_bag_dense_backward(grad.to("foo"), *map(_foo, args), 12, False,
                                                              MODE_NUM[mode], _foo(psw), padding_idx)
    torch.testing.assert_close(actual.cpu(), expected)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_divides_by_each_rows_count(mode):
    """Each row's gradient is divided by how often that row is indexed, as CUDA's and
    F.embedding's backward do. (The CPU's embedding_bag backward in torch 2.13 divides by the count
    of another row -- the i-th distinct index's position in the sorted indices -- so it is not the
    reference here.)"""
    weight = torch.randn(6, 3, dtype=torch.float64)
    indices, offsets = torch.tensor([3, 3, 1, 0, 3, 4, 1]), torch.tensor([0, 3, 5])
    grad = torch.randn(3, 3, dtype=torch.float64)
    # The reference: per position, grad[bag] / count[index] (/ bag size for mean).
    bag = torch.tensor([0, 0, 0, 1, 1, 2, 2])
    counts = torch.bincount(indices, minlength=6).double()
    rows = grad[bag] / counts[indices].unsqueeze(1)
    if mode == "mean":
        rows = rows / torch.bincount(bag).double()[bag].unsqueeze(1)
    expected = torch.zeros(6, 3, dtype=torch.float64).index_add_(0, indices, rows)
    fweight = weight.to("foo").requires_grad_()
    with foo_kernels_only():
        out = F.embedding_bag(_foo(indices), fweight, _foo(offsets), mode=mode, scale_grad_by_freq=True)
        (actual,) = torch.autograd.grad(out, fweight, grad.to("foo"))
    torch.testing.assert_close(actual.cpu(), expected)


def test_an_embedding_bag_model_trains_natively():
    torch.manual_seed(5)
    cpu = nn.Sequential(nn.EmbeddingBag(50, 16, mode="mean", padding_idx=0), nn.Linear(16, 3))
    foo = nn.Sequential(nn.EmbeddingBag(50, 16, mode="mean", padding_idx=0), nn.Linear(16, 3))
    foo.load_state_dict(cpu.state_dict())
    foo = foo.to("foo")
    text = torch.randint(0, 50, (8, 10))
    text[:, -3:] = 0  # padded sequences
    target = torch.randint(0, 3, (8,))
    for model, dev in ((cpu, "cpu"), (foo, "foo")):
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            with foo_kernels_only():
                F.cross_entropy(model(text.to(dev)), target.to(dev)).backward()
            opt.step()
    for (name, a), (_, b) in zip(cpu.state_dict().items(), foo.state_dict().items()):
        torch.testing.assert_close(b.cpu(), a, rtol=1e-5, atol=1e-5, msg=name)


@pytest.mark.parametrize("bad", ["psw_with_mean", "psw_dtype", "float_indices", "last_offset_without_offsets",
                                 "3d_input", "1d_input_2d_offsets"])
def test_bad_arguments_raise_the_cpus_errors(bad):
    weight, indices, offsets, psw = torch.randn(6, 3), torch.tensor([1, 2, 4]), torch.tensor([0, 1]), None
    kw = {}
    if bad == "psw_with_mean":
        psw, kw = torch.randn(3), dict(mode="mean")
    elif bad == "psw_dtype":
        psw = torch.randn(3, dtype=torch.float64)
    elif bad == "float_indices":
        indices = indices.float()
    elif bad == "last_offset_without_offsets":
        offsets, kw = torch.tensor([], dtype=torch.long), dict(include_last_offset=True)
    elif bad == "3d_input":
        indices, offsets = torch.zeros(1, 1, 3, dtype=torch.long), None
    else:
        offsets = offsets.view(1, 2)
    with pytest.raises((RuntimeError, ValueError)) as cpu_error:
        F.embedding_bag(indices, weight, offsets, per_sample_weights=psw, **kw)
    with foo_kernels_only(), pytest.raises(type(cpu_error.value)) as foo_error:
        F.embedding_bag(_foo(indices), _foo(weight), _foo(offsets), per_sample_weights=_foo(psw), **kw)
    # The same message, but for the tensor type's name (torch.FloatTensor / fooFloatType)
    first_line = lambda e: re.sub(r"got \S+ instead", "got <type> instead", str(e.value).split("\n")[0])  # noqa: E731
    assert first_line(foo_error) == first_line(cpu_error)


@pytest.mark.parametrize("mode", MODES)
def test_an_index_out_of_range_poisons_its_bag_only(mode):
    """The CPU raises; that needs the indices on the host (a synchronisation), so foo instead makes
    the bag's output NaN, reads nothing outside the table, and the device keeps working."""
    weight = torch.randn(5, 3)
    indices, offsets = torch.tensor([0, 1, 7, 2, -4, 3]), torch.tensor([0, 2, 4, 5])
    with foo_kernels_only():
        out = F.embedding_bag(_foo(indices), _foo(weight), _foo(offsets), mode=mode).cpu()
    good = F.embedding_bag(torch.tensor([0, 1, 3]), weight, torch.tensor([0, 2]), mode=mode)
    torch.testing.assert_close(out[[0, 3]], good)
    assert out[[1, 2]].isnan().all()
    torch.testing.assert_close((_foo(weight) + 1).cpu(), weight + 1)


def test_no_host_synchronisation_in_the_forward_and_backward():
    """Nothing in the ops waits for the device: queued behind about a second of matrix products on
    the sim stream, the forward and backward (psw, mean and max, 16-bit) return at once and the
    stream is still busy. A read of device data (an offsets check, an error slot) would wait."""
    if torch_foo.driver() != "sim":
        pytest.skip("times the sim stream's queue")
    indices, offsets = _foo(_bags(num_weights=10)[0]), _foo(_bags(num_weights=10)[1])
    x = torch.randn(1024, 1024, device="foo")
    torch.foo.synchronize()
    with foo_kernels_only():
        y = x
        for _ in range(4):
            y = y @ x
        start = time.perf_counter()
        for mode, dtype in (("sum", torch.float32), ("mean", torch.bfloat16), ("max", torch.float64)):
            weight = torch.randn(10, 4, device="foo", dtype=dtype, requires_grad=True)
            psw = torch.randn(indices.numel(), device="foo", dtype=dtype, requires_grad=True) if mode == "sum" else None
            F.embedding_bag(indices, weight, offsets, mode=mode, per_sample_weights=psw).sum().backward()
        elapsed = time.perf_counter() - start
        busy = not torch.foo.current_stream().query()
    torch.foo.synchronize()
    assert busy and elapsed < 0.3, f"the ops took {elapsed:.3f} s with the stream busy={busy}"
