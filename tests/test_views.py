"""Views alias their base's device memory; resize_ and set_ keep or share storage."""

import pytest
import torch

from conftest import assert_foo_equal

BASE = torch.arange(24, dtype=torch.float32).reshape(4, 6)


@pytest.fixture
def x():
    return BASE.to("foo")


def _same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.parametrize(
    "make,offset",
    [
        (lambda t: t.view(6, 4), 0),
        (lambda t: t.view(-1), 0),
        (lambda t: t[1:], 6),
        (lambda t: t[:, 2], 2),
        (lambda t: t.t(), 0),
        (lambda t: t.transpose(0, 1)[1:], 1),
        (lambda t: torch.as_strided(t, (3, 3), (6, 2), 1), 1),
        (lambda t: t.reshape(24), 0),
        (lambda t: t.unsqueeze(0).expand(2, 4, 6), 0),
    ],
    ids=["view", "view-flat", "slice", "select", "t", "transpose-slice", "as_strided", "reshape", "expand"],
)
def test_views_alias_base(x, make, offset):
    v = make(x)
    expected = make(BASE)
    assert v._is_view() and v._base is x
    assert _same_storage(v, x)
    assert v.storage_offset() == offset and v.stride() == expected.stride()
    assert v.data_ptr() == x.data_ptr() + offset * x.element_size()
    assert_foo_equal(v, expected)


def test_write_through_contiguous_view(x):
    src = torch.full((3, 6), -1.0)
    x[1:].copy_(src)
    expected = BASE.clone()
    expected[1:] = -1.0
    assert_foo_equal(x, expected)


def test_write_through_strided_views(x):
    expected = BASE.clone()
    src = torch.arange(12, dtype=torch.float32).reshape(4, 3) * -1
    x[:, ::2].copy_(src)
    expected[:, ::2] = src
    x.t()[5].copy_(torch.tensor([100.0, 101.0, 102.0, 103.0]))  # column 5
    expected[:, 5] = torch.tensor([100.0, 101.0, 102.0, 103.0])
    assert_foo_equal(x, expected)


def test_write_through_view_from_foo_source(x, two_devices):
    src = torch.ones(6).to("foo:1")  # cross-device source into a view
    x[2].copy_(src)
    expected = BASE.clone()
    expected[2] = 1.0
    assert_foo_equal(x, expected)


def test_resize_grows_and_keeps_data():
    t = torch.arange(6, dtype=torch.float32).to("foo")
    t.resize_(20)
    assert t.shape == (20,) and t.device == torch.device("foo:0")
    assert t.untyped_storage().nbytes() >= 20 * 4
    assert torch.equal(t[:6].cpu(), torch.arange(6, dtype=torch.float32))
    t.resize_(2, 3)
    assert_foo_equal(t, torch.arange(6, dtype=torch.float32).reshape(2, 3))
    t.resize_(0)
    assert t.numel() == 0 and t.device == torch.device("foo:0")


def test_set_source_tensor(x):
    y = torch.empty(0, device="foo")
    y.set_(x)
    assert _same_storage(y, x) and y.shape == x.shape
    assert_foo_equal(y, BASE)


def test_set_source_storage(x):
    y = torch.empty(0, device="foo")
    y.set_(x.untyped_storage())
    assert _same_storage(y, x)
    assert_foo_equal(y, BASE.flatten())


def test_set_source_storage_offset(x):
    y = torch.empty(0, device="foo")
    y.set_(x.untyped_storage(), 2, (2, 2), (6, 1))
    assert _same_storage(y, x) and y.storage_offset() == 2
    assert_foo_equal(y, torch.tensor([[2.0, 3.0], [8.0, 9.0]]))
    y.copy_(torch.zeros(2, 2))  # writes land in x
    assert x[0, 2].item() == 0.0 and x[1, 3].item() == 0.0


# resize_, set_ and the view ops are ATen's own logic (CUDA's registrations); these pin the rules
# foo's hand-written versions got wrong or worded their own way.
def test_resize_to_the_same_size_keeps_strides():
    """ATen's resize_impl_: same sizes, nothing changes (the CPU and CUDA keep a transposed out=)."""
    for device in ("cpu", "foo"):
        t = torch.arange(6.0, device=device).reshape(2, 3).t()
        t.resize_(3, 2)
        assert t.stride() == (1, 3), device
        assert torch.equal(t.cpu(), torch.arange(6.0).reshape(2, 3).t())
        t.resize_(3, 2, memory_format=torch.contiguous_format)  # a memory format restrides
        assert t.stride() == (2, 1), device


@pytest.mark.parametrize("call", [
    lambda t: t.as_strided((4, 4), (4, 1), 20),          # past the storage
    lambda t: t.as_strided((2, 2), (1, 1), -1),          # negative offset
    lambda t: t.view(5, 5),                               # wrong element count
    lambda t: t.t().view(24),                             # not viewable
    lambda t: torch.empty(0, device=t.device).set_(t.untyped_storage(), 0, (2, 2), (1,)),
    lambda t: torch.empty(0, device=t.device).set_(t.untyped_storage(), -1, (2, 2), (2, 1)),
], ids=["as_strided_oob", "as_strided_offset", "view_numel", "view_strides", "set_stride_len", "set_offset"])
def test_view_and_set_errors_as_the_cpu(call):
    """The CPU's exception type and message, word for word."""
    with pytest.raises(Exception) as cpu:
        call(BASE.clone())
    with pytest.raises(type(cpu.value)) as foo:
        call(BASE.to("foo"))
    assert str(foo.value) == str(cpu.value)


def test_set_to_another_device_storage_is_refused(x):
    with pytest.raises(RuntimeError, match="the devices must match"):
        x.set_(torch.zeros(3).untyped_storage(), 0, (3,), (1,))


def test_set_beyond_the_storage_grows_it_as_the_cpu():
    """set_ with sizes the storage cannot hold grows the storage (ATen's resize_impl_), keeping
    its bytes; foo used to refuse."""
    t = BASE.to("foo")
    y = torch.empty(0, device="foo").set_(t.untyped_storage(), 0, (4, 7), (7, 1))
    assert y.shape == (4, 7) and t.untyped_storage().nbytes() >= 28 * 4
    assert torch.equal(y.flatten()[:24].cpu(), BASE.flatten())
