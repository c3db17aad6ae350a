"""Device-side errors (issue 21, "no hidden synchronisation"): ops whose kernels check their input
(the index ops' ranges, nll_loss/cross_entropy's and the margin losses' targets,
binary_cross_entropy's and bernoulli_'s [0, 1]) no longer wait for the device. A kernel that meets bad input records it in the device's error word;
the op returns; the next point that waits anyway (torch.foo.synchronize, .cpu(), .item(),
Stream/Event synchronize) raises the CPU's exception type and message, naming the op, and clears
the word, so the device stays usable. TORCH_FOO_LAUNCH_BLOCKING=1 raises at the op
(runtime/device_error.h, docs/torch-foo-vs-cuda.md)."""

import textwrap
import warnings

import pytest
import torch
import torch.nn.functional as F

from conftest import foo_kernels_only, run_python

SYNC = "called a synchronizing foo operation"


@pytest.fixture(autouse=True)
def _mode_restored():
    yield
    torch.foo.set_sync_debug_mode("default")
    torch.foo.synchronize()  # no error left behind for the next test


def foo(t):
    return t.to("foo")


X = torch.arange(12.0).view(3, 4)
GOOD = torch.tensor([0, 2])
BAD = torch.tensor([0, 3])
PROBS = torch.tensor([0.2, 0.7])
LOGITS = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
TARGETS = torch.tensor([0, 3, 1, 2, 0])


def _cases():
    """name -> (exception, message (regex), op named, call(device_fn, idx) -> tensor). `idx` is GOOD or BAD;
    a call applies `d` (to foo, or identity on the CPU) to every tensor it uses."""
    return {
        "index": (IndexError, "index 3 is out of bounds for dimension 0 with size 3", "index",
                  lambda d, i: d(X)[d(i)]),
        "index_neg": (IndexError, "index -4 is out of bounds for dimension 0 with size 3", "index",
                      lambda d, i: d(X)[d(torch.where(i == 3, -4, -1))]),
        "index_put": (IndexError, "index 3 is out of bounds for dimension 0 with size 3", "index_put_",
                      lambda d, i: d(X.clone()).index_put_((d(i),), d(torch.tensor(1.0)), accumulate=True)),
        "index_select": (IndexError, "index out of range in self", "index_select",
                         lambda d, i: d(X).index_select(0, d(i))),
        "embedding": (IndexError, "index out of range in self", "embedding",
                      lambda d, i: F.embedding(d(i), d(X))),
        "gather": (RuntimeError, "index 3 is out of bounds for dimension 0 with size 3", "gather",
                   lambda d, i: d(X).gather(0, d(i.view(2, 1).expand(2, 4).contiguous()))),
        "scatter": (RuntimeError, "index 5 is out of bounds for dimension 1 with size 4", "scatter",
                    lambda d, i: d(X.clone()).scatter_(1, d(torch.where(i == 3, 5, 1).view(2, 1)), 1.0)),
        "scatter_add": (RuntimeError, "index 3 is out of bounds for dimension 0 with size 3", "scatter_add",
                        lambda d, i: d(X.clone()).scatter_add_(0, d(i.view(2, 1)), d(torch.ones(2, 1)))),
        "scatter_reduce": (RuntimeError, "index 3 is out of bounds for dimension 0 with size 3", "scatter_reduce",
                           lambda d, i: d(X.clone()).scatter_reduce_(0, d(i.view(2, 1)), d(torch.ones(2, 1)), "amax")),
        "index_add": (RuntimeError, "index 3 is out of bounds for dimension 0 with size 3", "index_add",
                      lambda d, i: d(X.clone()).index_add_(0, d(i), d(torch.ones(2, 4)))),
        "index_add_1d": (IndexError, "index out of range in self", "index_add",
                         lambda d, i: d(torch.zeros(3)).index_add_(0, d(i), d(torch.ones(2)))),
        "index_add_alpha": (IndexError, "index out of range in self", "index_add",
                            lambda d, i: d(X.clone()).index_add_(0, d(i), d(torch.ones(2, 4)), alpha=2)),
        "embedding_backward": (IndexError, "embedding_dense_backward: index 3 is out of range for 3 embeddings",
                               "embedding_dense_backward",
                               lambda d, i: torch.ops.aten.embedding_dense_backward(d(torch.ones(2, 4)), d(i), 3, -1,
                                                                                    False)),
        "cross_entropy": (IndexError, "Target 7 is out of bounds.", "nll_loss_forward",
                          lambda d, i: F.cross_entropy(d(LOGITS), d(torch.where(TARGETS == 3, 7 if i is BAD else 3,
                                                                                TARGETS)))),
        "nll_loss_none": (IndexError, "Target 7 is out of bounds.", "nll_loss_forward",
                          lambda d, i: F.nll_loss(d(LOGITS), d(torch.where(TARGETS == 3, 7 if i is BAD else 3, TARGETS)),
                                                  reduction="none")),
        "nll_loss2d": (IndexError, "Target -2 is out of bounds.", "nll_loss2d_forward",
                       lambda d, i: F.nll_loss(d(LOGITS.view(1, 5, 2, 2)),
                                               d(torch.tensor([[[0, 1], [2, -2 if i is BAD else 3]]])))),
        "nll_loss_backward": (IndexError, "Target 7 is out of bounds.", "nll_loss_backward",
                              lambda d, i: torch.ops.aten.nll_loss_backward(
                                  d(torch.tensor(1.0)), d(LOGITS), d(torch.where(TARGETS == 3, 7 if i is BAD else 3, TARGETS)),
                                  None, 1, -100, d(torch.tensor(5.0)))),
        "bce_input": (RuntimeError, "all elements of input should be between 0 and 1", "binary_cross_entropy",
                      lambda d, i: F.binary_cross_entropy(d(PROBS * (3.0 if i is BAD else 1.0)), d(PROBS))),
        "bce_target": (RuntimeError, "all elements of target should be between 0 and 1", "binary_cross_entropy",
                       lambda d, i: F.binary_cross_entropy(d(PROBS), d(PROBS - (1.0 if i is BAD else 0.0)))),
        "bernoulli": (RuntimeError, r"Expected p_in >= 0 && p_in <= 1 to be true, but got false\.", "bernoulli_",
                      lambda d, i: d(torch.zeros(2)).bernoulli_(d(PROBS * (2.0 if i is BAD else 0.0)))),
        "multi_margin": (RuntimeError, "target out of range", "multi_margin_loss",
                         lambda d, i: F.multi_margin_loss(d(LOGITS), d(torch.where(TARGETS == 3, 4 if i is BAD else 3,
                                                                                   TARGETS)))),
        "multi_margin_backward": (RuntimeError, "target out of range", "multi_margin_loss_backward",
                                  lambda d, i: torch.ops.aten.multi_margin_loss_backward(
                                      d(torch.tensor(1.0)), d(LOGITS), d(torch.where(TARGETS == 3, -1 if i is BAD else 3,
                                                                                     TARGETS)), 1, 1.0, None, 1)),
        "multilabel_margin": (RuntimeError, "argument #2 'target' is out of range", "multilabel_margin_loss_forward",
                              lambda d, i: F.multilabel_margin_loss(
                                  d(LOGITS), d(torch.tensor([[0, 3, -1, 0]] * 4 + [[1, 4 if i is BAD else 2, -1, 0]])))),
    }


CASES = _cases()


def _no_device(t):
    return t


@pytest.mark.parametrize("case", sorted(CASES))
def test_valid_input_does_not_synchronise(case):
    _, _, _, call = CASES[case]
    expected = call(_no_device, GOOD)
    torch.foo.set_sync_debug_mode("error")  # any host wait raises
    with foo_kernels_only():
        actual = call(foo, GOOD)
    torch.foo.set_sync_debug_mode("default")
    torch.testing.assert_close(actual.cpu(), expected)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_raises_at_the_next_synchronisation(case):
    error, message, op, call = CASES[case]
    if case != "embedding_backward":  # the CPU's skips the index (foo raises, as it did before)
        with pytest.raises(error, match=message):  # the CPU's exception and message
            call(_no_device, BAD)
    torch.foo.set_sync_debug_mode("error")
    call(foo, BAD)  # neither waits nor raises
    torch.foo.set_sync_debug_mode("default")
    with pytest.raises(error, match=message) as info:
        torch.foo.synchronize()
    assert f"by a kernel of foo's {op};" in str(info.value)
    torch.foo.synchronize()  # cleared: reported once
    # The device keeps working, the same op included.
    torch.testing.assert_close(call(foo, GOOD).cpu(), call(_no_device, GOOD))


@pytest.mark.parametrize("wait", ["cpu", "item", "stream", "event", "synchronize", "masked_select"])
def test_every_host_wait_reports(wait):
    x = foo(X)
    bad = x.index_select(0, foo(BAD))
    with pytest.raises(IndexError, match="index out of range in self"):
        if wait == "cpu":
            bad.cpu()
        elif wait == "item":
            x.sum().item()
        elif wait == "stream":
            torch.foo.current_stream().synchronize()
        elif wait == "event":
            event = torch.foo.Event()
            event.record()
            event.synchronize()
        elif wait == "synchronize":
            torch.foo.synchronize()
        else:
            x.masked_select(x > 3)  # an op that waits to size its result
    assert x.sum().item() == 66.0


def test_first_error_wins_and_the_word_clears():
    x = foo(X)
    x.gather(0, foo(torch.tensor([[3, 0, 0, 0]])))
    F.cross_entropy(foo(LOGITS), foo(torch.tensor([0, 1, 9, 2, 0])))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3") as info:
        x.cpu()
    assert "foo's gather;" in str(info.value)
    torch.foo.synchronize()  # the later error was not recorded over the first
    F.cross_entropy(foo(LOGITS), foo(torch.tensor([0, 1, 9, 2, 0])))
    with pytest.raises(IndexError, match="Target 9 is out of bounds."):
        torch.foo.synchronize()


def test_side_streams_and_devices():
    x = foo(X)
    side = torch.foo.Stream()
    for wait in (side.synchronize, torch.foo.synchronize):
        with torch.foo.stream(side):
            x.index_select(0, foo(BAD))
        with pytest.raises(IndexError, match="index out of range in self"):
            wait()
    if torch.foo.device_count() > 1:
        y = X.to("foo:1")
        y.index_select(0, BAD.to("foo:1"))
        torch.foo.synchronize(0)  # device 0 has no error
        with pytest.raises(IndexError, match="index out of range in self"):
            torch.foo.synchronize(1)
        torch.testing.assert_close(y.index_select(0, GOOD.to("foo:1")).cpu(), X[GOOD])


def test_launch_blocking_raises_at_the_op():
    code = textwrap.dedent("""
        import torch
        import torch.nn.functional as F
        x = torch.arange(12.0, device="foo").view(3, 4)
        bad = torch.tensor([0, 3], device="foo")
        for name, call in [("index_select", lambda: x.index_select(0, bad)),
                           ("nll_loss_forward", lambda: F.cross_entropy(x, torch.tensor([0, 9, 1], device="foo"))),
                           ("binary_cross_entropy", lambda: F.binary_cross_entropy(x, x))]:
            try:
                call()
            except (IndexError, RuntimeError) as e:
                assert f"foo's {name}, at the op" in str(e), e
                print(name, type(e).__name__, str(e).splitlines()[0])
            else:
                raise AssertionError(name + " did not raise at the op")
        torch.foo.synchronize()
        print(x.index_select(0, torch.tensor([2], device="foo")).sum().item())
    """)
    result = run_python(code, env={"TORCH_FOO_LAUNCH_BLOCKING": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n") == [
        "index_select IndexError index out of range in self",
        "nll_loss_forward IndexError Target 9 is out of bounds.",
        "binary_cross_entropy RuntimeError all elements of input should be between 0 and 1",
        "38.0",
        "",
    ]


# ---- a training step of the model zoo's models waits for nothing ---------------------------------


def _step_without_waiting(model, batch, loss_fn, steps=2, mode="error"):
    model = model.to("foo")
    inputs = [foo(t) for t in batch]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    torch.foo.synchronize()
    torch.foo.set_sync_debug_mode(mode)
    with foo_kernels_only():
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_fn(model, *inputs)
            loss.backward()
            opt.step()
    torch.foo.set_sync_debug_mode("default")
    assert torch.isfinite(torch.tensor(loss.item()))


def test_gpt_training_step_does_not_synchronise():
    import test_model_zoo as zoo

    torch.manual_seed(0)
    _step_without_waiting(zoo.TinyGPT(), zoo._tokens(64), zoo._lm_loss)


def test_cnn_and_unet_training_steps_do_not_synchronise():
    import test_model_zoo as zoo

    torch.manual_seed(1)
    g = torch.Generator().manual_seed(4)
    _step_without_waiting(zoo.CNN(p=0.5), (torch.randn(8, 3, 16, 16, generator=g),
                                           torch.randint(0, 10, (8,), generator=g)), zoo._classify)
    x = torch.randn(2, 1, 16, 16, generator=g)
    _step_without_waiting(zoo.UNet(), (x, (x > 0).float()), zoo._segment)


def test_lstm_training_step_waits_only_in_torchs_packing():
    """pack_padded_sequence/pad_packed_sequence copy their indices to the host (torch's own
    code, on CUDA too): those are the step's only waits."""
    import test_model_zoo as zoo

    torch.manual_seed(4)
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 7, 8, generator=g)
    lengths = torch.tensor([7, 4, 6])
    targets = torch.randint(0, 4, (3, 7), generator=g)

    def loss_fn(m, x, t):
        logits = m(x, lengths)
        return F.cross_entropy(logits.reshape(-1, 4), t[:, : logits.shape[1]].reshape(-1))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _step_without_waiting(zoo.LSTMTagger(), (x, targets), loss_fn, mode="warn")
    waits = [w for w in caught if SYNC in str(w.message)]
    assert waits and all(w.filename.endswith(("nn/utils/rnn.py", "nn/modules/rnn.py")) for w in waits), [
        (w.filename, w.lineno, str(w.message)) for w in waits]


def test_hf_gpt2_training_step_does_not_synchronise():
    transformers = pytest.importorskip("transformers")
    import test_model_zoo as zoo

    config = transformers.GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(3)
    _step_without_waiting(transformers.GPT2LMHeadModel(config), zoo._tokens(64),
                          lambda m, tokens, targets: m(input_ids=tokens, labels=tokens).loss)
