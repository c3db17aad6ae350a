"""Graph capture and replay, with torch.cuda's API: ``torch.foo.FooGraph`` (also
``torch.foo.CUDAGraph``), the ``torch.foo.graph`` context manager, ``graph_pool_handle`` and
``make_graphed_callables``.

A capture records the work queued on a (non-default) stream instead of running it: on sim the
stream keeps each kernel launch (its function, copied arguments, grid, block, shared bytes) and
each copy or memset; on cuda the driver uses CUDA stream capture. Memory allocated on the
capturing stream comes from a private pool of the caching allocator that the graph keeps, so a
replay, which runs the recorded work again on the current stream with no dispatcher or Python
work per op, reads and writes the addresses the capture saw. docs/torch-foo-vs-cuda.md §15.
"""

import gc

import torch

from torch_foo import _C
from torch_foo._memory import MemPool
from torch_foo._streams import Stream, current_stream
from torch_foo._streams import stream as _stream_context
from torch_foo._utils import _device_index

__all__ = [
    "CUDAGraph",
    "FooGraph",
    "graph",
    "graph_pool_handle",
    "is_current_stream_capturing",
    "make_graphed_callables",
]


_CAPTURE_MODES = ("global", "thread_local", "relaxed")


def _pool_id(pool):
    """The allocator's pool number of a graph pool token: graph_pool_handle(), FooGraph.pool(), a MemPool."""
    if pool is None:
        return None
    if isinstance(pool, MemPool):
        return pool.id[1]
    if isinstance(pool, tuple) and len(pool) == 2 and all(isinstance(p, int) for p in pool):
        return pool[1]
    raise TypeError(f"pool must be a token from graph_pool_handle(), FooGraph.pool() or a MemPool, got {pool!r}")


def graph_pool_handle():
    """A token for a memory pool that several graphs may share (``pool=`` of FooGraph.capture_begin
    and graph), as torch.cuda.graph_pool_handle. The pool lives while a graph uses it."""
    _C._lazy_init()
    return (0, int(_C._graph_pool_create()))


def is_current_stream_capturing(device=None):
    """Whether the current stream of ``device`` is capturing a graph."""
    return _C._is_current_stream_capturing(_device_index(device))


class FooGraph:
    """A captured graph of foo work, as torch.cuda.CUDAGraph.

    ``capture_begin()`` on a non-default stream starts recording that stream's work; the work is
    recorded, not run, until ``capture_end()``. ``replay()`` queues the recorded work on the current
    stream. Tensors used by the capture must stay alive and keep their addresses: copy new data
    into them (``static.copy_(new)``) and replay.
    """

    def __init__(self, keep_graph=False):
        _C._lazy_init()
        self._graph = _C._Graph()

    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Begin capturing the current stream. ``pool``: share a memory pool with other graphs;
        ``capture_error_mode``: "global" | "thread_local" | "relaxed" (cudaStreamCaptureMode; sim
        applies its per-stream rules in every mode)."""
        if capture_error_mode not in _CAPTURE_MODES:
            raise ValueError(f"capture_error_mode must be one of {_CAPTURE_MODES}, got {capture_error_mode!r}")
        self._graph.capture_begin(_pool_id(pool), capture_error_mode)

    def capture_end(self):
        """End the capture; raises (and leaves the graph empty) if a forbidden call invalidated it."""
        self._graph.capture_end()

    def replay(self):
        """Queue the captured work on the current stream (asynchronous, like any launch)."""
        self._graph.replay()

    def reset(self):
        """Drop the captured graph and its use of the memory pool."""
        self._graph.reset()

    def pool(self):
        """The graph's memory pool token, to share it with another capture."""
        return (0, int(self._graph.pool()))

    def instantiate(self):
        """Nothing to do: capture_end instantiates (torch.cuda's keep_graph=False behaviour)."""

    def num_tasks(self):
        """How many kernel launches, copies and memsets the graph holds (foo only)."""
        return int(self._graph.size())


CUDAGraph = FooGraph


class graph:
    """``with torch.foo.graph(g):`` captures the block into ``g``, as torch.cuda.graph: it
    synchronizes the device, collects garbage, and captures on ``stream`` (default: a side stream
    shared by all captures). If the block raises, the capture is abandoned, ``g`` is left empty
    and the error propagates; the device stays usable."""

    default_capture_stream = None

    def __init__(self, foo_graph, pool=None, stream=None, capture_error_mode="global"):
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = Stream()
            stream = graph.default_capture_stream
        self.foo_graph = foo_graph
        self.pool = pool
        self.capture_stream = stream
        self.capture_error_mode = capture_error_mode
        self._stream_ctx = _stream_context(stream)

    def __enter__(self):
        torch.foo.synchronize()
        gc.collect()
        self._stream_ctx.__enter__()
        try:
            self.foo_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self._stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.foo_graph.capture_end()
            else:
                self.foo_graph.reset()  # the block's own error is the one to see
        finally:
            self._stream_ctx.__exit__(exc_type, exc, tb)
        return False


def _flat_tensors(args, what):
    flat, spec = torch.utils._pytree.tree_flatten(args)
    for a in flat:
        if not isinstance(a, torch.Tensor):
            raise TypeError(f"make_graphed_callables: {what} must be tensors only, got {type(a).__name__}")
    return flat, spec


class _Graphed:
    """One callable's captured forward and backward graphs, and their static tensors."""

    def __init__(self, func, sample_args, params):
        self.func = func
        self.flat_args, self.args_spec = _flat_tensors(sample_args, "sample_args")
        self.params = tuple(params)
        self.inputs = tuple(self.flat_args) + self.params  # what the backward graph differentiates
        self.fwd = FooGraph()
        self.bwd = FooGraph()

    def warmup(self, iterations, allow_unused):
        for _ in range(iterations):
            outputs, _ = _flat_tensors(self.func(*torch.utils._pytree.tree_unflatten(self.flat_args, self.args_spec)), "outputs")
            self._grads(outputs, tuple(torch.empty_like(o) for o in outputs if o.requires_grad), allow_unused)
            del outputs

    def _grads(self, outputs, grad_outputs, allow_unused):
        needs = tuple(o for o in outputs if o.requires_grad)
        wanted = tuple(i for i in self.inputs if i.requires_grad)
        if not needs or not wanted:
            return ()
        return torch.autograd.grad(needs, wanted, grad_outputs=grad_outputs, only_inputs=True, allow_unused=allow_unused)

    def capture_forward(self, pool):
        with graph(self.fwd, pool=pool):
            out = self.func(*torch.utils._pytree.tree_unflatten(self.flat_args, self.args_spec))
        self.static_outputs, self.out_spec = _flat_tensors(out, "outputs")

    def capture_backward(self, pool, allow_unused):
        self.static_grad_outputs = tuple(torch.empty_like(o) if o.requires_grad else None for o in self.static_outputs)
        with graph(self.bwd, pool=pool):
            grads = self._grads(self.static_outputs, tuple(g for g in self.static_grad_outputs if g is not None), allow_unused)
        grads = iter(grads)
        # One entry per input: its captured gradient, or None for inputs that need none.
        self.static_grad_inputs = tuple(next(grads) if i.requires_grad else None for i in self.inputs)

    def autograd_function(self):
        graphed = self

        class Graphed(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *inputs):
                for static, new in zip(graphed.flat_args, inputs[: len(graphed.flat_args)]):
                    if static.data_ptr() != new.data_ptr():
                        static.copy_(new)
                graphed.fwd.replay()
                return tuple(o.detach() for o in graphed.static_outputs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *grads):
                for static, g in zip(graphed.static_grad_outputs, grads):
                    if static is None:
                        continue
                    if g is None:
                        static.zero_()
                    elif static.data_ptr() != g.data_ptr():
                        static.copy_(g)
                graphed.bwd.replay()
                return tuple(g.detach() if g is not None else None for g in graphed.static_grad_inputs)

        def call(*user_args):
            flat, _ = _flat_tensors(user_args, "arguments")
            out = Graphed.apply(*(tuple(flat) + graphed.params))
            return torch.utils._pytree.tree_unflatten(list(out), graphed.out_spec)

        return call


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    """Graphed versions of ``callables`` (modules or functions), as torch.cuda.make_graphed_callables:
    each one's forward and backward are captured into graphs (sharing one memory pool) after
    ``num_warmup_iters`` eager iterations on a side stream, and calling the result copies the
    arguments into the captured inputs and replays. A module's parameters are differentiated too;
    a module in another training mode than at capture runs its own forward."""
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise ValueError("make_graphed_callables: one tuple of sample_args per callable")
    for c in callables:
        if isinstance(c, torch.nn.Module) and (c._backward_hooks or c._forward_hooks or c._forward_pre_hooks):
            raise RuntimeError("make_graphed_callables: modules must have no hooks registered")
    graphed = []
    for c, args in zip(callables, sample_args):
        args = args if isinstance(args, tuple) else (args,)
        params = tuple(c.parameters()) if isinstance(c, torch.nn.Module) else ()
        graphed.append(_Graphed(c, args, params))
    mempool = graph_pool_handle() if pool is None else pool
    torch.foo.synchronize()
    side = Stream()
    side.wait_stream(current_stream())
    with _stream_context(side):
        for g in graphed:
            g.warmup(num_warmup_iters, allow_unused_input)
    torch.foo.synchronize()
    for g in graphed:  # forwards in order, backwards in reverse: the order they will replay in
        g.capture_forward(mempool)
    for g in reversed(graphed):
        g.capture_backward(mempool, allow_unused_input)

    results = []
    for c, g in zip(callables, graphed):
        call = g.autograd_function()
        if isinstance(c, torch.nn.Module):
            captured_training = c.training
            original_forward = c.forward

            def forward(*args, _call=call, _module=c, _training=captured_training, _orig=original_forward, **kwargs):
                if _module.training == _training and not kwargs:
                    return _call(*args)
                return _orig(*args, **kwargs)

            c.forward = forward
            results.append(c)
        else:
            results.append(call)
    return results[0] if just_one else tuple(results)
