"""The pieces of one unboxed C++ wrapper: dispatcher signature, device checks, guard, kernel call."""

from __future__ import annotations

from dataclasses import dataclass

from torchgen.api import dispatcher, translate
from torchgen.api.types import (
    BaseCType,
    ConstRefCType,
    DispatcherSignature,
    Expr,
    MutRefCType,
    NamedCType,
    NativeSignature,
    tensorT,
)
from torchgen.context import native_function_manager
from torchgen.model import BaseTy, BaseType, DeviceCheckType, NativeFunction, OptionalType

from . import structured

# Ops that copy between the CPU and foo by definition: at least one tensor must be on foo.
CROSS_DEVICE_OPS = frozenset({"_copy_from", "_copy_from_and_resize"})


@dataclass(frozen=True)
class Wrapper:
    name: str  # C++ function name of the wrapper
    op: str  # operator name for m.impl, e.g. "add.Tensor"
    signature: str  # C++ definition line, without the body
    body: tuple[str, ...]  # statements


def native_decl(f: NativeFunction, kernel: str) -> str:
    with native_function_manager(f):
        return NativeSignature(f.func, symint=False).decl(name=kernel) + ";"


def wrapper(f: NativeFunction, kernel_f: NativeFunction, kernel: str, kind: str, namespace: str,
            guard: bool = True) -> Wrapper:
    """`guard`: whether the op gets a device guard (torchgen's `device_guard`; see needs_guard)."""
    with native_function_manager(f):
        sig = DispatcherSignature.from_schema(f.func)
        name = "wrapper_" + f.func.name.unambiguous_name()
        checks = device_checks(f, namespace, guard)
        if kind == "structured":
            # torchgen's structured wrapper of this overload (structured.py), native signature.
            call, locals_, ret = _kernel_call(sig, f, "at::" + structured.wrapper_name(f), "direct")
        else:
            call, locals_, ret = _kernel_call(sig, kernel_f, "foo::native::" + kernel, kind)
        count = [f'FOO_COUNT_CALL("{kernel}");']  # measured coverage (csrc/aten/core/call_counts.h)
        return Wrapper(name, str(f.func.name), sig.defn(name=name), tuple(count + checks + locals_ + call + ret))


def needs_guard(f: NativeFunction, device_kernels: frozenset[str]) -> bool:
    """torchgen's `device_guard: False` (views and metadata ops) means no DeviceGuard. It describes
    the op's device kernels; an op with only composite kernels upstream (var_mean.correction_out)
    says nothing about ours, which launch work on the device."""
    return f.device_guard or str(f.func.name) not in device_kernels


# Non-pointwise aten ops whose named tensor argument may be a 0-dim CPU tensor (a fill value).
CPU_SCALAR_ARGS = {"fill": ("value",), "masked_fill": ("value",)}  # keyed by base name (fill_ → fill)
# Advanced indexing takes CPU index tensors of any shape, as on CUDA (`x[idx]`, `x[idx] = v` with
# `idx` on the CPU): the kernel moves them to the device (ATen's AdvancedIndex does the same).
CPU_INDEX_ARGS = {"index": ("indices",), "_index_put_impl": ("indices",), "index_put": ("indices",)}  # base names


def device_checks(f: NativeFunction, namespace: str, guard: bool = True) -> list[str]:
    """Every tensor argument on one foo device; the guard switches to it.

    torchgen's `device_check: ExactSame` means exactly that. `NoCheck` means the op checks devices
    itself (TensorIterator) or mixes them on purpose; our kernels read device memory, so we still
    check, but accept a 0-dim CPU tensor wherever the op takes one as a scalar (pointwise ops, as
    TensorIterator does, and fill values).
    """
    label = f"{namespace}::{f.func.name}"
    args = dispatcher.jit_arguments(f.func)
    tensors = [a for a in args if a.type.is_tensor_like()]
    lines = ["::std::optional<c10::Device> common_device_;"]
    if f.func.name.name.base in CROSS_DEVICE_OPS:
        lines += [f'note_device({a.name}, common_device_);' for a in tensors]
        lines.append(f'TORCH_CHECK(common_device_.has_value(), "{label}: expected at least one tensor on the foo device");')
    else:
        outs = {a.name for a in f.func.arguments.out}
        # Like TensorIterator: a pointwise aten op takes a 0-dim CPU tensor as a scalar operand
        # (any input, as on CUDA); so do the ops whose 0-dim `value` tensor is a fill value.
        relaxed = namespace == "aten" and f.device_check == DeviceCheckType.NoCheck
        pointwise = relaxed and "pointwise" in f.tags
        scalar_args = CPU_SCALAR_ARGS.get(f.func.name.name.base, ()) if relaxed else ()
        index_args = CPU_INDEX_ARGS.get(f.func.name.name.base, ()) if relaxed else ()
        for a in tensors:
            if a.name in index_args:
                lines.append(f'check_device_or_cpu("{label}", "{a.name}", {a.name}, common_device_);')
                continue
            writes = a.annotation is not None and a.annotation.is_write
            scalar_ok = (pointwise or a.name in scalar_args) and not (a.name in outs or writes)
            lines.append(
                f'check_device("{label}", "{a.name}", {a.name}, common_device_, {str(scalar_ok).lower()});'
            )
        device = [a for a in args if a.name == "device" and a.type == OptionalType(BaseType(BaseTy.Device))]
        if not tensors and device:
            lines.append("common_device_ = device;")
    if not tensors and len(lines) == 1:
        return []  # nothing to check and no device to switch to
    if guard:
        lines.append("const c10::OptionalDeviceGuard device_guard_(common_device_);")
    return lines


def _out_exprs(name: str, value: str) -> list[Expr]:
    return [
        Expr(value, NamedCType(name, MutRefCType(BaseCType(tensorT)))),
        Expr(value, NamedCType(name, ConstRefCType(BaseCType(tensorT)))),
    ]


def _kernel_call(sig: DispatcherSignature, kernel_f: NativeFunction, kernel: str, kind: str):
    with native_function_manager(kernel_f):
        target = NativeSignature(kernel_f.func, symint=False).arguments()
    outs = [a.name for a in kernel_f.func.arguments.out]
    bindings: list = list(sig.arguments())
    locals_: list[str] = []
    if kind == "functional":
        locals_ = [f"at::Tensor {o};  // undefined: the out kernel allocates it" for o in outs]
        for o in outs:
            bindings += _out_exprs(o, o)
    elif kind == "inplace":
        bindings += _out_exprs(outs[0], "self")
    args = ", ".join(e.expr for e in translate.translate(bindings, target, method=False))
    call = f"{kernel}({args});"
    if kind == "direct":
        return [f"return {call}"], locals_, []
    if kind == "inplace":
        return [call], locals_, ["return self;"]
    ret = sig.returns_type().cpp_type()
    value = outs[0] if len(outs) == 1 else f"{ret}({', '.join(outs)})"
    return [call], locals_, [f"return {value};"]
