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
from torchgen.model import BaseTy, BaseType, NativeFunction, OptionalType

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


def wrapper(f: NativeFunction, kernel_f: NativeFunction, kernel: str, kind: str, namespace: str) -> Wrapper:
    with native_function_manager(f):
        sig = DispatcherSignature.from_schema(f.func)
        name = "wrapper_" + f.func.name.unambiguous_name()
        checks = device_checks(f, namespace)
        call, locals_, ret = _kernel_call(sig, kernel_f, kernel, kind)
        return Wrapper(name, str(f.func.name), sig.defn(name=name), tuple(checks + locals_ + call + ret))


def device_checks(f: NativeFunction, namespace: str) -> list[str]:
    """Every tensor argument on one foo device; the guard switches to it."""
    label = f"{namespace}::{f.func.name}"
    args = dispatcher.jit_arguments(f.func)
    tensors = [a for a in args if a.type.is_tensor_like()]
    lines = ["::std::optional<c10::Device> common_device_;"]
    if f.func.name.name.base in CROSS_DEVICE_OPS:
        lines += [f'note_device({a.name}, common_device_);' for a in tensors]
        lines.append(f'TORCH_CHECK(common_device_.has_value(), "{label}: expected at least one tensor on the foo device");')
    else:
        outs = {a.name for a in f.func.arguments.out}
        # Like TensorIterator: a pointwise aten op takes a 0-dim CPU tensor as a scalar operand,
        # `self` included (aten's mul_.Scalar calls mul.out with the wrapped scalar as `self`;
        # torch.sub(cpu_scalar, x)), but never an argument it writes.
        pointwise = namespace == "aten" and "pointwise" in f.tags
        for a in tensors:
            writes = a.annotation is not None and a.annotation.is_write
            scalar_ok = pointwise and not (a.name in outs or writes)
            lines.append(
                f'check_device("{label}", "{a.name}", {a.name}, common_device_, {str(scalar_ok).lower()});'
            )
        device = [a for a in args if a.name == "device" and a.type == OptionalType(BaseType(BaseTy.Device))]
        if not tensors and device:
            lines.append("common_device_ = device;")
    if not tensors and len(lines) == 1:
        return []  # nothing to check and no device to switch to
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
    call = f"foo::native::{kernel}({args});"
    if kind == "direct":
        return [f"return {call}"], locals_, []
    if kind == "inplace":
        return [call], locals_, ["return self;"]
    ret = sig.returns_type().cpp_type()
    value = outs[0] if len(outs) == 1 else f"{ret}({', '.join(outs)})"
    return [call], locals_, [f"return {value};"]
