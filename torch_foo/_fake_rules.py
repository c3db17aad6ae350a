"""The shape, dtype and stride rules of the generated fake implementations (torch_foo/_custom_ops.py).

A custom pointwise op's kernel runs on the at::TensorIterator its `iterator:` names
(generated/pointwise/<kernel>.cpp). Its fake result must be what that iterator allocates: the
broadcast shape, the promoted dtype, and TensorIterator's output strides (the inputs' memory
order). torch's elementwise references model TensorIterator with the helpers used here
(torch._prims_common), which work on symbolic shapes too (torch.compile's dynamic shapes).
"""

from __future__ import annotations

import torch
from torch._prims_common import (
    ELEMENTWISE_TYPE_PROMOTION_KIND,
    compute_elementwise_output_strides,
    elementwise_dtypes,
)

# The promotion of each TensorIterator builder (ATen/TensorIterator.cpp: unary_float_op and
# binary_float_op set promote_integer_inputs_to_float, comparison_op has a bool output).
PROMOTION = {
    "unary_op": ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT,
    "binary_op": ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT,
    "unary_float_op": ELEMENTWISE_TYPE_PROMOTION_KIND.INT_TO_FLOAT,
    "binary_float_op": ELEMENTWISE_TYPE_PROMOTION_KIND.INT_TO_FLOAT,
    "comparison_op": ELEMENTWISE_TYPE_PROMOTION_KIND.ALWAYS_BOOL,
}


def pointwise(op: str, iterator: str, *operands: torch.Tensor) -> torch.Tensor:
    """A new tensor as `iterator` allocates the result of `op` for `operands`."""
    devices = {t.device for t in operands}
    torch._check(len(devices) == 1, lambda: f"{op}: expected all tensors on one device, got {sorted(map(str, devices))}")
    shape = torch.broadcast_shapes(*(t.shape for t in operands))
    _, result = elementwise_dtypes(*operands, type_promotion_kind=PROMOTION[iterator])
    strides = compute_elementwise_output_strides(*(t.expand(shape) for t in operands))
    return torch.empty_strided(shape, strides, dtype=result, device=operands[0].device)


def grad_of(op: str, arg: str, grad: torch.Tensor, shape, dtype: torch.dtype) -> torch.Tensor:
    """The gradient of an input from its formula's value: summed over the dimensions the input
    was broadcast along, in the input's dtype (what autograd's engine expects of a backward)."""
    torch._check(isinstance(grad, torch.Tensor), lambda: f"{op}: the derivative for '{arg}' gave {type(grad).__name__}, not a Tensor")
    if grad.shape != shape:
        grad = grad.sum_to_size(shape)
    return grad if grad.dtype == dtype else grad.to(dtype)


def no_derivative(op: str, arg: str):
    raise NotImplementedError(f"{op}: the manifest (yaml/ops.yaml) declares no derivative for '{arg}'; "
                              f"add '{arg}: \"<formula>\"' to its 'derivatives:'")
