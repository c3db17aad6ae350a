"""Inductor's loop-level IR -> foo kernels in the project's CUDA C++ dialect (docs/compile.md).

``FooKernel`` is a ``SIMDKernel`` (the base of Inductor's Triton, Metal and Halide generators):
Inductor hands it the loads, stores, pointwise ops and reductions of one fused group of nodes
over flattened iteration ranges ``xindex`` (the output elements) and ``r0_index`` (the reduced
elements), and it writes one ``__global__`` kernel:

- every kernel is a grid-stride loop over ``xindex``, launched with
  ``torch_foo::launch_independent`` (threads never talk to each other, so on sim each thread is
  a plain call, no fiber);
- a reduction gives each output element (a row) to one thread, which walks ``r0_index`` in a
  loop and accumulates in registers; a node that needs a finished reduction (softmax's
  ``exp(x - max)``, layer norm's ``(x - mean) * rstd``) starts a new loop over the row, so
  softmax is one kernel with three passes over its row;
- 16-bit floats are loaded as float and computed in float (as the eager kernels' opmath_t);
  math goes through ``torch_foo::math::`` (``kernels/math.cuh``, ``kernels/formulas.cuh``).
"""

import math

import sympy
import torch
from torch._inductor import config as inductor_config
from torch._inductor.codegen.common import (
    DTYPE_TO_COMPUTATION_DTYPE,
    CSEVariable,
    DeferredLine,
    IndentedBuffer,
    OpOverrides,
    PythonPrinter,
)
from torch._inductor.codegen.simd import SIMDKernel, SIMDScheduling
from torch._inductor.utils import get_fused_kernel_name, get_kernel_metadata
from torch._inductor.virtualized import V, ops
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.printers import CppPrinter

DTYPE_TO_C = {
    torch.bool: "bool",
    torch.int8: "int8_t",
    torch.int16: "int16_t",
    torch.int32: "int32_t",
    torch.int64: "int64_t",
    torch.uint8: "uint8_t",
    torch.float16: "torch_foo::half_t",
    torch.bfloat16: "torch_foo::bfloat16_t",
    torch.float32: "float",
    torch.float64: "double",
}

NAME_PLACEHOLDER = "FOO_KERNEL_NAME"


def c_type(dtype):
    if dtype not in DTYPE_TO_C:
        raise NotImplementedError(f"torch_foo inductor: no kernel type for {dtype}")
    return DTYPE_TO_C[dtype]


def c_constant(value, dtype):
    """A literal of ``dtype``'s compute type (float literals stay float: no silent double math)."""
    if dtype == torch.bool:
        return "true" if value else "false"
    compute = DTYPE_TO_COMPUTATION_DTYPE.get(dtype, dtype)
    if compute.is_floating_point:
        t = c_type(compute)
        if math.isnan(value):
            return f"std::numeric_limits<{t}>::quiet_NaN()"
        if math.isinf(value):
            return f"{'-' if value < 0 else ''}std::numeric_limits<{t}>::infinity()"
        text = repr(float(value))
        return f"{text}f" if compute == torch.float32 else text
    if isinstance(value, float):
        value = int(value)
    if value == -(2**63):
        return "std::numeric_limits<int64_t>::min()"
    return f"static_cast<{c_type(compute)}>({int(value)}ll)"


class FooExprPrinter(CppPrinter):
    """Index expressions in the kernels' C++: floor division and Python's modulo through the
    helpers of the module preamble (no c10 header in a kernel)."""

    def _print_FloorDiv(self, expr):
        x, div = expr.args
        return f"foo_inductor::floordiv<int64_t>({self.doprint(x)}, {self.doprint(div)})"

    def _print_ModularIndexing(self, expr):
        x, div, mod = expr.args
        x = self.doprint(x)
        if div != 1:
            x = f"foo_inductor::floordiv<int64_t>({x}, {self.doprint(div)})"
        return f"(static_cast<int64_t>({x}) % static_cast<int64_t>({self.doprint(mod)}))"

    def _print_PythonMod(self, expr):
        x, div = expr.args
        return f"foo_inductor::pymod<int64_t>({self.doprint(x)}, {self.doprint(div)})"


_cexpr = FooExprPrinter().doprint


def _same(a, b):
    return f"static_cast<decltype({a} + {b})>({a})", f"static_cast<decltype({a} + {b})>({b})"


class FooOverrides(OpOverrides):
    """Pointwise ops as C++ expressions of the kernel dialect."""

    @staticmethod
    def to_dtype(x, dtype, src_dtype=None, use_compute_types=True):
        if dtype in (torch.float16, torch.bfloat16):
            # Round to the 16-bit type, then keep computing in float (as a kernel storing T would).
            return f"static_cast<float>(static_cast<{c_type(dtype)}>({x}))"
        if dtype == torch.bool:
            return f"static_cast<bool>({x})"
        return f"static_cast<{c_type(dtype)}>({x})"

    @staticmethod
    def to_dtype_bitcast(x, dtype, src_dtype):
        return f"foo_inductor::bitcast<{c_type(dtype)}>(static_cast<{c_type(src_dtype)}>({x}))"

    @staticmethod
    def constant(value, dtype):
        return c_constant(value, dtype)

    @staticmethod
    def index_expr(expr, dtype):
        index = V.kernel.index_to_str(V.kernel.prepare_indexing(expr))
        var = V.kernel.cse.generate(V.kernel.compute, index, dtype=torch.int64)
        return ops.to_dtype(var, dtype)

    @staticmethod
    def value_expr(expr, dtype):
        # A size or index used as a value (arange, x.shape[0] in arithmetic): the same C++.
        return FooOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask, body, other):
        kernel = V.kernel
        scoped = IndentedBuffer()
        with kernel.swap_buffers(scoped), scoped.indent():
            result = body()
        dtype = result.dtype if isinstance(result, CSEVariable) and result.dtype is not None else torch.float32
        var = kernel.cse.newvar(dtype=dtype)
        if isinstance(other, (int, float, bool)):
            other = c_constant(other, dtype)
        kernel.compute.writeline(f"{c_type(dtype)} {var};")
        kernel.compute.writeline(f"if ({mask}) {{")
        kernel.compute.splice(scoped)
        kernel.compute.writeline(f"  {var} = {result};")
        kernel.compute.writeline(f"}} else {{ {var} = static_cast<{c_type(dtype)}>({other}); }}")
        return var

    @staticmethod
    def where(a, b, c):
        return f"({a}) ? ({b}) : static_cast<decltype({b})>({c})"

    @staticmethod
    def maximum(a, b):
        a, b = _same(a, b)
        return f"torch_foo::math::maximum({a}, {b})"

    @staticmethod
    def minimum(a, b):
        a, b = _same(a, b)
        return f"torch_foo::math::minimum({a}, {b})"

    @staticmethod
    def pow(a, b):
        a, b = _same(a, b)
        return f"foo_inductor::pow({a}, {b})"

    @staticmethod
    def fmod(a, b):
        a, b = _same(a, b)
        return f"torch_foo::math::fmod({a}, {b})"

    @staticmethod
    def atan2(a, b):
        a, b = _same(a, b)
        return f"torch_foo::math::atan2({a}, {b})"

    @staticmethod
    def hypot(a, b):
        a, b = _same(a, b)
        return f"torch_foo::math::hypot({a}, {b})"

    @staticmethod
    def copysign(a, b):
        a, b = _same(a, b)
        return f"torch_foo::math::copysign({a}, {b})"

    @staticmethod
    def nextafter(a, b):
        a, b = _same(a, b)
        return f"torch_foo::math::nextafter({a}, {b})"

    @staticmethod
    def floordiv(a, b):
        a, b = _same(a, b)
        return f"foo_inductor::floordiv({a}, {b})"

    @staticmethod
    def truncdiv(a, b):
        return f"foo_inductor::truncdiv({a}, {b})"

    @staticmethod
    def mod(a, b):
        a, b = _same(a, b)
        return f"foo_inductor::cmod({a}, {b})"

    @staticmethod
    def remainder(a, b):
        a, b = _same(a, b)
        return f"foo_inductor::pymod({a}, {b})"

    @staticmethod
    def truediv(a, b):
        return f"({a} / {b})"

    @staticmethod
    def int_truediv(a, b):
        return f"(static_cast<double>({a}) / static_cast<double>({b}))"

    @staticmethod
    def neg(x):
        return f"torch_foo::math::neg({x})"

    @staticmethod
    def abs(x):
        return f"torch_foo::math::abs({x})"

    @staticmethod
    def sign(x):
        return f"torch_foo::math::sign({x})"

    @staticmethod
    def signbit(x):
        return f"foo_inductor::signbit({x})"

    @staticmethod
    def isnan(x):
        return f"foo_inductor::isnan({x})"

    @staticmethod
    def isinf(x):
        return f"foo_inductor::isinf({x})"

    @staticmethod
    def rsqrt(x):
        return f"foo_inductor::rsqrt({x})"

    @staticmethod
    def reciprocal(x):
        return f"(static_cast<decltype({x})>(1) / {x})"

    @staticmethod
    def sigmoid(x):
        return f"foo_inductor::sigmoid({x})"

    @staticmethod
    def relu(x):
        return f"torch_foo::math::maximum({x}, static_cast<decltype({x})>(0))"

    @staticmethod
    def round(x):
        return f"torch_foo::math::nearbyint({x})"

    @staticmethod
    def rand(seed, offset):
        return f"foo_inductor::rand({seed}, {offset})"

    @staticmethod
    def randn(seed, offset):
        return f"foo_inductor::randn({seed}, {offset})"

    @staticmethod
    def randint64(seed, offset, low, high):
        return f"foo_inductor::randint64({seed}, {offset}, {low}, {high})"

    @staticmethod
    def logical_and(a, b):
        return f"(static_cast<bool>({a}) && static_cast<bool>({b}))"

    @staticmethod
    def logical_or(a, b):
        return f"(static_cast<bool>({a}) || static_cast<bool>({b}))"

    @staticmethod
    def logical_xor(a, b):
        return f"(static_cast<bool>({a}) != static_cast<bool>({b}))"

    @staticmethod
    def logical_not(a):
        return f"(!static_cast<bool>({a}))"



def _math_unary(name, fn=None):
    fn = fn or name

    def impl(x):
        return f"torch_foo::math::{fn}(foo_inductor::to_float({x}))"

    impl.__name__ = name
    setattr(FooOverrides, name, staticmethod(impl))


for _name in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin", "cos", "tan", "asin",
              "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma"):
    _math_unary(_name)
for _name in ("floor", "ceil", "trunc"):
    def _rounding(x, _fn=_name):
        return f"foo_inductor::{_fn}({x})"

    setattr(FooOverrides, _name, staticmethod(_rounding))


class FooKernel(SIMDKernel):
    overrides = FooOverrides
    suffix = ";"
    newvar_prefix = "auto "
    pexpr = PythonPrinter().doprint
    cexpr = staticmethod(_cexpr)
    sexpr = staticmethod(_cexpr)
    kexpr = staticmethod(_cexpr)

    def __init__(self, tiling, **kwargs):
        super().__init__(tiling, **kwargs)
        self.reduction_prefix = IndentedBuffer()  # accumulators, declared before a row loop
        self._params = None

    # ---- types and indexing -------------------------------------------------------------------

    def dtype_to_str(self, dtype):
        return c_type(dtype)

    def get_index_dtype_as_torch_dtype(self):
        return torch.int64

    def codegen_iteration_ranges_entry(self, entry):
        line = f"const int64_t {entry.name} = {self.kexpr(self.rename_indexing(entry.expr))};"
        if entry.root.is_loop:
            self.indexing_code.writeline(line)  # inside the row loop that defines r0_index
        else:
            self.body.writeline(line)

    def check_bounds(self, expr, size, lower, upper):
        # Indices come from tensors the eager path checks (embedding, gather); the compiled path
        # trusts them, as Inductor's Triton kernels do without debug asserts.
        return

    # ---- loads and stores ---------------------------------------------------------------------

    def load(self, name, index):
        var = self.args.input(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        line = f"{var}[{self.index_to_str(index)}]"
        if dtype in (torch.float16, torch.bfloat16):
            line = f"static_cast<float>({line})"
            dtype = torch.float32
        return self.cse.generate(self.loads, line, dtype=dtype)

    def store(self, name, index, value, mode=None):
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        target = f"{var}[{self.index_to_str(index)}]"
        if mode is None:
            line = f"{target} = static_cast<{c_type(dtype)}>({value});"
        elif mode == "atomic_add":
            line = f"atomicAdd(&{target}, static_cast<{c_type(dtype)}>({value}));"
        else:
            raise NotImplementedError(f"torch_foo inductor: store mode {mode}")
        (self.compute if self.inside_reduction else self.stores).writeline(DeferredLine(name, line))

    # ---- reductions: one thread per row, accumulating in registers ---------------------------

    def _acc(self, dtype, init):
        var = self.cse.newvar(dtype=dtype)
        self.reduction_prefix.writeline(f"{c_type(dtype)} {var} = {init};")
        return var

    def reduction(self, dtype, src_dtype, reduction_type, value):
        key = (src_dtype, reduction_type, value)
        if key in self.cse.reduction_cache:
            return self.cse.reduction_cache[key]
        result = self._reduction(dtype, src_dtype, reduction_type, value)
        self.cse.reduction_cache[key] = result
        return result

    def _reduction(self, dtype, src_dtype, reduction_type, value):
        assert self.inside_reduction
        compute = DTYPE_TO_COMPUTATION_DTYPE.get(src_dtype, src_dtype)
        if reduction_type in ("welford_reduce", "welford_combine"):
            return self._welford(reduction_type, value)
        if reduction_type == "online_softmax_reduce":
            return self._online_softmax(compute, value)
        if reduction_type in ("argmax", "argmin"):
            return self._arg_reduction(reduction_type, compute, value)
        acc_dtype = DTYPE_TO_COMPUTATION_DTYPE.get(dtype, dtype)
        if reduction_type == "any":
            acc_dtype = torch.bool
        init = {
            "sum": c_constant(0, acc_dtype),
            "prod": c_constant(1, acc_dtype),
            "xor_sum": c_constant(0, acc_dtype),
            "any": "false",
            "max": f"foo_inductor::lowest<{c_type(acc_dtype)}>()",
            "min": f"foo_inductor::highest<{c_type(acc_dtype)}>()",
        }.get(reduction_type)
        if init is None:
            raise NotImplementedError(f"torch_foo inductor: reduction {reduction_type}")
        acc = self._acc(acc_dtype, init)
        v = f"static_cast<{c_type(acc_dtype)}>({value})"
        update = {
            "sum": f"{acc} = {acc} + {v};",
            "prod": f"{acc} = {acc} * {v};",
            "xor_sum": f"{acc} = {acc} ^ {v};",
            "any": f"{acc} = {acc} || {v};",
            "max": f"{acc} = torch_foo::math::maximum({acc}, {v});",
            "min": f"{acc} = torch_foo::math::minimum({acc}, {v});",
        }[reduction_type]
        self.compute.writeline(update)
        return acc

    def _arg_reduction(self, reduction_type, compute, value):
        t = c_type(compute)
        best = self._acc(compute, f"foo_inductor::{'lowest' if reduction_type == 'argmax' else 'highest'}<{t}>()")
        index = self._acc(torch.int64, "0")
        first = self._acc(torch.bool, "true")
        better = ">" if reduction_type == "argmax" else "<"
        rindex = self._linear_rindex()
        # NaN wins and stays (torch.argmax); the first index wins a tie.
        self.compute.splice(f"""
            {{
              const {t} v = static_cast<{t}>({value});
              if ({first} || (!foo_inductor::isnan({best}) && (foo_inductor::isnan(v) || v {better} {best}))) {{
                {best} = v; {index} = {rindex}; {first} = false;
              }}
            }}""")
        return index

    def _linear_rindex(self):
        trees = [t for t in self.range_trees if t.is_reduction]
        assert len(trees) == 1, "one reduction range"
        return trees[0].name

    def _welford(self, reduction_type, value):
        mean = self._acc(torch.float32, "0.0f")
        m2 = self._acc(torch.float32, "0.0f")
        weight = self._acc(torch.float32, "0.0f")
        if reduction_type == "welford_reduce":
            self.compute.writeline(f"foo_inductor::welford_add({mean}, {m2}, {weight}, static_cast<float>({value}));")
        else:
            v_mean, v_m2, v_weight = value
            self.compute.writeline(
                f"foo_inductor::welford_merge({mean}, {m2}, {weight}, {v_mean}, {v_m2}, {v_weight});")
        return mean, m2, weight

    def _online_softmax(self, compute, value):
        t = c_type(compute)
        vmax = self._acc(compute, f"-std::numeric_limits<{t}>::infinity()")
        vsum = self._acc(compute, c_constant(0, compute))
        self.compute.writeline(f"foo_inductor::online_softmax_add({vmax}, {vsum}, static_cast<{t}>({value}));")
        return vmax, vsum

    # ---- assembling the kernel ----------------------------------------------------------------

    def codegen_body(self):
        if not (self.indexing_code or self.loads or self.compute or self.stores or self.reduction_prefix):
            return
        loop = [t for t in self.range_trees if t.is_loop and t.is_reduction]
        if self.inside_reduction and loop:
            (tree,) = loop
            self.body.splice(self.reduction_prefix)
            self.body.writeline(f"for (int64_t {tree.name} = 0; {tree.name} < {tree.prefix}numel; ++{tree.name}) {{")
            with self.body.indent():
                self.body.splice(self.indexing_code)
                self.body.splice(self.loads)
                self.body.splice(self.compute)
            self.body.writeline("}")
            self.body.splice(self.stores)
            # What the loop computed is out of scope after it; the accumulators stay.
            keep = OrderedSet(v for item in self.cse.reduction_cache.values()
                              for v in (item if isinstance(item, tuple) else (item,)))
            self.cse.invalidate(keep)
            for node in self.range_tree_nodes.values():
                if node.root is tree:
                    node.cache_clear()
        else:
            self.body.splice(self.reduction_prefix)
            self.body.splice(self.indexing_code)
            self.body.splice(self.loads)
            self.body.splice(self.compute)
            self.body.splice(self.stores)
        for buf in (self.reduction_prefix, self.indexing_code, self.loads, self.compute, self.stores):
            buf.clear()

    def kernel_params(self):
        """[(C declaration, C name, wrapper expression, ctypes kind)] in call order, fixed once."""
        if self._params is not None:
            return self._params
        params = []
        arg_defs, call_args, _, arg_types = self.args.python_argdefs()
        for arg, call_arg, arg_type in zip(arg_defs, call_args, arg_types):
            name = arg.name
            if name.startswith("ks"):
                params.append((f"int64_t {name}", name, self.pexpr(call_arg) if not isinstance(call_arg, str)
                               else call_arg, "i"))
            elif isinstance(arg_type, torch.dtype):
                const = "const " if name.startswith("in_ptr") else ""
                params.append((f"{const}{c_type(arg_type)}* __restrict__ {name}", name, f"{call_arg}.data_ptr()",
                               "p"))
            else:
                raise NotImplementedError(f"torch_foo inductor: kernel argument {name} of type {arg_type}")
        for tree in self.range_trees:
            if tree.is_reduction and not self.features.is_reduction():
                continue
            if not isinstance(tree.numel, (sympy.Integer, int)):
                params.append((f"int64_t {tree.prefix}numel", f"{tree.prefix}numel", tree.numel, "i"))
        self._params = params
        return params

    def codegen_kernel(self, name=None):
        self.codegen_body()
        params = self.kernel_params()
        code = IndentedBuffer()
        decls = ", ".join(p[0] for p in params)
        names = ", ".join(p[1] for p in params)
        n = NAME_PLACEHOLDER
        code.writeline("namespace foo_inductor::FOO_TARGET {")
        code.writeline(f"__global__ void {n}_kernel({decls}) {{")
        with code.indent():
            for tree in self.range_trees:
                if tree.is_reduction and not self.features.is_reduction():
                    continue
                if isinstance(tree.numel, (sympy.Integer, int)):
                    code.writeline(f"constexpr int64_t {tree.prefix}numel = {int(tree.numel)};")
            code.writeline("const int64_t xstride = static_cast<int64_t>(gridDim.x) * blockDim.x;")
            code.writeline("for (int64_t xindex = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; "
                           "xindex < xnumel; xindex += xstride) {")
            with code.indent():
                code.splice(self.body)
            code.writeline("}")
        code.writeline("}")
        xnumel = self.range_trees[0].numel
        x = str(int(xnumel)) if isinstance(xnumel, (sympy.Integer, int)) else "xnumel"
        code.writeline(f"void {n}_launch(torch_foo::Stream stream{', ' if decls else ''}{decls}) {{")
        with code.indent():
            code.writeline(f"const unsigned threads = torch_foo::threads_for({x});")
            code.writeline(f'torch_foo::launch_independent("inductor::{n}", {n}_kernel, '
                           f"torch_foo::blocks_for({x}, threads), dim3(threads), stream{', ' if names else ''}{names});")
        code.writeline("}")
        code.writeline("}  // namespace foo_inductor::FOO_TARGET")
        code.writeline("#if !defined(__CUDACC__)")
        plain = decls.replace(" __restrict__", "")
        code.writeline("#if defined(FOO_WITH_CUDA)")
        code.writeline(f"namespace foo_inductor::cuda {{ void {n}_launch(torch_foo::Stream{', ' if plain else ''}"
                       f"{plain}); }}")
        code.writeline("#endif")
        code.writeline(f'extern "C" const char* {n}(int32_t device{", " if plain else ""}{plain}) {{')
        with code.indent():
            code.writeline("return foo_inductor::run(device, [&](torch_foo::Stream stream) {")
            with code.indent():
                code.writeline("#if defined(FOO_WITH_CUDA)")
                code.writeline(f"if (torch_foo_on_cuda()) return foo_inductor::cuda::{n}_launch(stream"
                               f"{', ' if names else ''}{names});")
                code.writeline("#endif")
                code.writeline(f"foo_inductor::sim::{n}_launch(stream{', ' if names else ''}{names});")
            code.writeline("});")
        code.writeline("}")
        code.writeline("#endif")
        return code.getvalue()

    def call_kernel(self, name, node=None, deallocate_ws=True):
        wrapper = V.graph.wrapper_code
        for v in self.args.sizevars:
            wrapper.ensure_size_computed(v)
        device = V.graph.get_current_device_or_throw()
        args = [str(device.index or 0)]
        for _, _, expr, _ in self.kernel_params():
            if isinstance(expr, sympy.Expr):
                expr = self.pexpr(expr) if isinstance(expr, sympy.Symbol) else \
                    wrapper.generate_numel_expr(name, next(t for t in self.range_trees if t.numel == expr)).inner
            args.append(str(expr))
        wrapper.writeline(f"{name}({', '.join(args)})")

    def signature(self):
        return "d" + "".join(p[3] for p in self.kernel_params())


class FooScheduling(SIMDScheduling):
    """Fuses as Inductor's SIMD backends do; tiles nothing (one flattened output range, one
    flattened reduction range) and generates ``FooKernel``s."""

    kernel_type = FooKernel

    @classmethod
    def get_tiling_and_scores(cls, node_schedule, numel, reduction_numel=sympy.S.One, coalesce_analysis=None):
        return cls.create_tiling([numel], [reduction_numel]), None

    def define_kernel(self, src_code, node_schedule, kernel):
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        kind = "red" if kernel.features.is_reduction() else "poi"
        fused = get_fused_kernel_name(node_schedule, inductor_config.triton.descriptive_names)
        name = f"foo_{kind}_{fused}_{wrapper.next_kernel_suffix()}"
        wrapper.src_to_kernel[src_code] = name
        origins, _ = get_kernel_metadata(node_schedule, wrapper)
        source = src_code.replace(NAME_PLACEHOLDER, name)
        # Inductor's metadata comments are Python's ("# ..."), which C++ would read as directives.
        comment = "\n".join("//" + line.lstrip("#") for line in origins.splitlines())
        wrapper.add_foo_kernel(name, f"{comment}\n{source}", kernel.signature())
        return name

