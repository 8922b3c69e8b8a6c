"""A NumPy interpreter for tensor-level IR, to check lowerings against `graph` IR.

    outputs = run_tensor_module(module, {"input": array})

Runs `func.func @main` (or the only function) made of `graph.constant`,
upstream `linalg` and `tensor` ops, `ember_linalg.gather`/`scatter`, scalar `arith`
ops (fill values, reshape shapes), `loop.kernel` (its region runs in
order; its results are what its `loop.yield` yields), `scf.for` on tensors
(its body once per step, carrying what `scf.yield` yields; slices may be
at its induction variable) and `func.return`;
`arith`/`math` ops appear inside the bodies of `linalg.generic`. A generic is evaluated on
whole arrays:

- its parallel dims form an array "space"; each input is read through its
  indexing map as an array broadcastable to that space (a strided view when
  every index is `a * d + c` of its own parallel dim or a constant, fancy
  indexing with `np.indices`-style index arrays otherwise), and each body op
  runs once, as a NumPy function, over the whole space (`linalg.index` is
  the position along its dim);
- its reduction dims are iterated by a Python loop over the product of their
  extents, each step vectorised over the parallel dims; the accumulators are
  the output block arguments.

`linalg.matmul` and `linalg.conv_2d_nchw_fchw` (im2col + matmul) run
directly in NumPy, or, with `generalize=True`, as the generic they stand
for. Values keep the IR's element types (f32 stays f32); integers wrap, and
each `arith` op reads its integer operands as signed or unsigned as its name
says. Every result is checked against its declared type.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.func import ReturnOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from ember.dialects import loop
from ember.dialects.ember_linalg import (
    GatherOp,
    ScatterOp,
    addressed_axes,
    generalize,
    indexing_maps,
    iterator_kinds,
)
from ember.dialects.graph import ConstantOp
from ember.dialects.graph.types import array_from_dense, numpy_dtype
from ember.errors import EmberError
from ember.reference import _bind_inputs, entry_function
from ember.reference.evaluate import InterpreterError, check_result

__all__ = ["run_tensor_module"]

Arrays = list[np.ndarray]


def run_tensor_module(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    *,
    generalize: bool = False,
) -> list[np.ndarray]:
    """Runs the module's entry function on NumPy inputs (by name or in order)."""
    func = entry_function(module)
    env: dict[SSAValue, np.ndarray] = _bind_inputs(func, inputs)
    return _run_block(func.body.block, env, generalize)


def _run_block(block: Block, env: dict[SSAValue, np.ndarray], generalize: bool) -> Arrays:
    """Runs `block`'s ops in order, binding their results in `env` (a kernel's
    region sees the values around it); returns what its terminator passes on."""
    for op in block.ops:
        if isinstance(op, ReturnOp | loop.YieldOp | scf.YieldOp):
            return [env[v] for v in op.operands]
        if isinstance(op, loop.KernelOp):
            outputs = _run_block(op.body.block, env, generalize)
        elif isinstance(op, scf.ForOp):
            outputs = _run_for(op, env, generalize)
        else:
            outputs = run_op(op, [env[v] for v in op.operands], generalize=generalize)
        for index, (array, declared) in enumerate(zip(outputs, op.result_types)):
            array = np.asarray(array)
            if isinstance(declared, TensorType):
                array = check_result(op.name, index, array, declared)
            env[op.results[index]] = array
    raise InterpreterError("the entry function has no return")


def _run_for(op: scf.ForOp, env: dict[SSAValue, np.ndarray], generalize: bool) -> Arrays:
    """`scf.for` on tensors: its body once per step, the carried values
    passed from each step's yield to the next."""
    start, stop, step = (int(env[v]) for v in (op.lb, op.ub, op.step))
    carried = [env[v] for v in op.iter_args]
    body = op.body.block
    for position in range(start, stop, step):
        env[body.args[0]] = np.array(position)
        for arg, value in zip(body.args[1:], carried):
            env[arg] = value
        carried = _run_block(body, env, generalize)
    return carried


def run_op(op: Operation, operands: Arrays, *, generalize: bool = False) -> Arrays:
    """The results of one tensor-level op on concrete operands."""
    if generalize and isinstance(op, NamedOperation) and not isinstance(op, linalg.FillOp):
        return _run_generalized(op, operands)
    run = _TENSOR_OPS.get(type(op))
    if run is None:
        if isinstance(op, arith.ConstantOp | arith.BitcastOp):  # fill values, shapes
            return [_top_level_scalar(op, operands)]
        raise InterpreterError(f"the tensor-level interpreter cannot run '{op.name}'")
    try:
        with np.errstate(all="ignore"):
            return run(op, operands)
    except EmberError:
        raise
    except (ValueError, IndexError, TypeError) as error:
        raise InterpreterError(f"{op.name}: {error}") from error


def _run_generalized(op: NamedOperation, operands: Arrays) -> Arrays:
    generic = generalize(op)
    try:
        return run_op(generic, operands)
    finally:
        generic.erase()


def _top_level_scalar(op: Operation, operands: Arrays) -> np.ndarray:
    value = op.properties.get("value")
    if isinstance(value, DenseIntOrFPElementsAttr):
        return array_from_dense(value)
    return _typed(_SCALAR_OPS[op.name](op, operands), op.results[0].type)


# --------------------------------------------------------------- generics


class _Space:
    """The parallel dims of a generic as an array space; reading operands into it."""

    def __init__(self, bounds: list[int], parallel: list[int]):
        self.bounds = bounds
        self.parallel = parallel
        self.axis = {d: k for k, d in enumerate(parallel)}
        self.shape = tuple(bounds[d] for d in parallel)

    def _output_order(self, amap: AffineMap) -> list[int]:
        order = []
        for expr in amap.results:
            if not isinstance(expr, AffineDimExpr) or expr.position not in self.axis:
                raise InterpreterError("linalg.generic: output maps must be parallel dims")
            order.append(self.axis[expr.position])
        if sorted(order) != list(range(len(self.parallel))):
            raise InterpreterError("linalg.generic: an output map must use each parallel dim once")
        return order

    def from_output(self, init: np.ndarray, amap: AffineMap) -> np.ndarray:
        """An output's initial value with its axes in space order."""
        return np.transpose(init, np.argsort(self._output_order(amap)))

    def to_output(self, value: np.ndarray, amap: AffineMap, init: np.ndarray) -> np.ndarray:
        full = np.broadcast_to(value, self.shape).astype(init.dtype, copy=False)
        return np.array(np.transpose(full, self._output_order(amap)), order="C")

    def read(self, x: np.ndarray, amap: AffineMap, fixed: dict[int, int]) -> np.ndarray:
        """x[map(d)] for every point of the space, with reduction dims `fixed`."""
        view = self._read_projection(x, amap, fixed)
        if view is not None:
            return view
        index = [self.evaluate(expr, fixed) for expr in amap.results]
        for i, extent in zip(index, x.shape):
            if np.size(i) and (np.min(i) < 0 or np.max(i) >= extent):
                raise InterpreterError("linalg.generic: an indexing map reads out of bounds")
        return np.asarray(x[tuple(index)])

    def _read_projection(
        self, x: np.ndarray, amap: AffineMap, fixed: dict[int, int]
    ) -> np.ndarray | None:
        """A strided view of x when every map result is `a * d + c` for a distinct
        parallel dim d, or a constant (reduction dims being fixed); else None."""
        index: list[slice | int] = []
        dims: list[int] = []
        for expr, extent in zip(amap.results, x.shape):
            form = _linear_form(expr, fixed)
            if form is None or len(form[0]) > 1:
                return None
            coefficients, offset = form
            if not coefficients:
                if not 0 <= offset < extent:
                    raise InterpreterError("linalg.generic: an indexing map reads out of bounds")
                index.append(offset)
                continue
            ((dim, step),) = coefficients.items()
            if dim in dims:
                return None
            last = offset + step * (self.bounds[dim] - 1)
            if min(offset, last) < 0 or max(offset, last) >= extent:
                raise InterpreterError("linalg.generic: an indexing map reads out of bounds")
            stop = last + (1 if step > 0 else -1)
            index.append(slice(offset, None if stop < 0 else stop, step))
            dims.append(dim)
        part = x[tuple(index)]
        order = sorted(range(len(dims)), key=lambda i: self.axis[dims[i]])
        part = np.transpose(part, order)
        return part.reshape([self.bounds[d] if d in dims else 1 for d in self.parallel])

    def position(self, dim: int, fixed: dict[int, int]) -> np.ndarray | int:
        """The index along `dim` at every point of the space (`linalg.index`)."""
        return self.evaluate(AffineExpr.dimension(dim), fixed)

    def evaluate(self, expr: AffineExpr, fixed: dict[int, int]) -> np.ndarray | int:
        if isinstance(expr, AffineConstantExpr):
            return expr.value
        if isinstance(expr, AffineDimExpr):
            if expr.position in fixed:
                return fixed[expr.position]
            shape = [1] * len(self.parallel)
            shape[self.axis[expr.position]] = self.bounds[expr.position]
            return np.arange(self.bounds[expr.position]).reshape(shape)
        if isinstance(expr, AffineBinaryOpExpr):
            lhs, rhs = self.evaluate(expr.lhs, fixed), self.evaluate(expr.rhs, fixed)
            match expr.kind:
                case AffineBinaryOpKind.Add:
                    return lhs + rhs
                case AffineBinaryOpKind.Mul:
                    return lhs * rhs
                case AffineBinaryOpKind.Mod:
                    return lhs % rhs
                case AffineBinaryOpKind.FloorDiv:
                    return lhs // rhs
                case AffineBinaryOpKind.CeilDiv:
                    return -(-lhs // rhs)
        raise InterpreterError(f"linalg.generic: unsupported affine expression {expr}")


def _linear_form(expr: AffineExpr, fixed: dict[int, int]) -> tuple[dict[int, int], int] | None:
    """expr as ({parallel dim: nonzero coefficient}, constant), with the `fixed`
    dims substituted; None when it is not linear (floordiv, mod, dim * dim)."""
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineDimExpr):
        if expr.position in fixed:
            return {}, fixed[expr.position]
        return {expr.position: 1}, 0
    if not isinstance(expr, AffineBinaryOpExpr):
        return None
    lhs, rhs = _linear_form(expr.lhs, fixed), _linear_form(expr.rhs, fixed)
    if lhs is None or rhs is None:
        return None
    if expr.kind is AffineBinaryOpKind.Add:
        merged = {d: lhs[0].get(d, 0) + rhs[0].get(d, 0) for d in {*lhs[0], *rhs[0]}}
        return {d: a for d, a in merged.items() if a}, lhs[1] + rhs[1]
    if expr.kind is AffineBinaryOpKind.Mul and not (lhs[0] and rhs[0]):
        (terms, offset), factor = (lhs, rhs[1]) if not rhs[0] else (rhs, lhs[1])
        return {d: a * factor for d, a in terms.items() if a * factor}, offset * factor
    return None


def _run_generic(op: Operation, operands: Arrays) -> Arrays:
    assert isinstance(op, linalg.GenericOp)
    bounds = list(op.get_static_loop_ranges())
    kinds = iterator_kinds(op)
    parallel = [d for d, kind in enumerate(kinds) if kind == IteratorType.PARALLEL]
    reduction = [d for d, kind in enumerate(kinds) if kind != IteratorType.PARALLEL]
    space = _Space(bounds, parallel)
    count = len(op.inputs)
    maps = indexing_maps(op)
    inputs, inits = operands[:count], operands[count:]
    accumulators = [space.from_output(x, m) for x, m in zip(inits, maps[count:])]
    if 0 not in space.shape:
        for point in itertools.product(*(range(bounds[d]) for d in reduction)):
            fixed = dict(zip(reduction, point))
            args = [space.read(x, m, fixed) for x, m in zip(inputs, maps)]
            positions = {d: space.position(d, fixed) for d in range(len(bounds))}
            accumulators = run_body(op.body.block, [*args, *accumulators], positions)
    return [
        space.to_output(value, m, init) for value, m, init in zip(accumulators, maps[count:], inits)
    ]


def run_body(
    block: Block, args: Arrays, positions: Mapping[int, np.ndarray | int] | None = None
) -> Arrays:
    """Runs a generic's (or `tensor.pad`'s) body once on arrays; returns the
    yielded arrays. `positions` gives `linalg.index` its value per dim."""
    env: dict[SSAValue, np.ndarray] = dict(zip(block.args, args))
    for op in block.ops:
        if isinstance(op, linalg.YieldOp | tensor.YieldOp):
            return [env[v] for v in op.arguments]
        if isinstance(op, linalg.IndexOp) and positions is not None:
            env[op.result] = np.asarray(positions[op.dim.value.data], dtype=np.int64)
            continue
        run = _SCALAR_OPS.get(op.name)
        if run is None:
            raise InterpreterError(f"linalg.generic: the interpreter cannot run '{op.name}'")
        result = run(op, [env[v] for v in op.operands])
        env[op.results[0]] = _typed(result, op.results[0].type)
    raise InterpreterError("linalg.generic: the body has no linalg.yield")


def _typed(value: Any, element_type: Attribute) -> np.ndarray:
    """`value` as an array of `element_type` (`index` as int64, as on a 64-bit target)."""
    array = np.asarray(value)
    dtype = np.dtype(np.int64) if isinstance(element_type, IndexType) else numpy_dtype(element_type)
    return array if array.dtype == dtype else array.astype(dtype)


# ------------------------------------------------------------ scalar ops

Scalar = Callable[[Operation, Arrays], Any]


def _result_dtype(op: Operation) -> np.dtype[Any]:
    t = op.results[0].type
    return np.dtype(np.int64) if isinstance(t, IndexType) else numpy_dtype(t)


def _signed(a: np.ndarray) -> np.ndarray:
    """The two's-complement reading of integer bits (i1 true is -1)."""
    if a.dtype == np.bool_:
        return np.where(a, -1, 0).astype(np.int8)
    return a.view(f"i{a.dtype.itemsize}") if a.dtype.kind == "u" else a


def _unsigned(a: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "i" else a


def _elementwise(fn: Callable[..., Any]) -> Scalar:
    return lambda op, a: fn(*a)


def _signed_op(fn: Callable[..., Any]) -> Scalar:
    return lambda op, a: fn(*(_signed(x) for x in a))


def _unsigned_op(fn: Callable[..., Any]) -> Scalar:
    return lambda op, a: fn(*(_unsigned(x) for x in a))


def _wrapping(fn: Callable[..., Any]) -> Scalar:
    """Integer +, -, *: NumPy wraps; i1 arithmetic is modulo 2."""

    def run(op: Operation, a: Arrays) -> Any:
        if a[0].dtype == np.bool_:
            return (fn(*(x.astype(np.uint8) for x in a)) & 1).astype(np.bool_)
        return fn(*a)

    return run


def _truncating_division(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    quotient = np.floor_divide(a, b)
    inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return np.where(inexact, quotient + 1, quotient)


def _constant(op: Operation, a: Arrays) -> np.ndarray:
    return np.asarray(_attribute_value(op.properties["value"]), dtype=_result_dtype(op))


def _attribute_value(attr: Attribute) -> float | int | bool:
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        if isinstance(attr.type, IndexType):
            return int(value)
        return bool(value) if attr.type.width.data == 1 else int(value)  # type: ignore[attr-defined]
    raise InterpreterError(f"unsupported scalar attribute {attr}")


_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
         "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")  # fmt: skip
_RELATIONS: dict[str, Callable[..., np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip


def _predicate(op: Operation, names: tuple[str, ...]) -> str:
    return names[op.properties["predicate"].value.data]  # type: ignore[attr-defined]


def _cmpi(op: Operation, a: Arrays) -> np.ndarray:
    name = _predicate(op, _CMPI)
    x, y = a
    if name not in ("eq", "ne"):
        read = _signed if name[0] == "s" else _unsigned
        x, y, name = read(x), read(y), name[1:]
    return _RELATIONS[name](x, y)


def _cmpf(op: Operation, a: Arrays) -> np.ndarray:
    name = _predicate(op, _CMPF)
    x, y = a
    ordered = ~(np.isnan(x) | np.isnan(y))
    if name in ("true", "false"):
        return np.full(np.broadcast(x, y).shape, name == "true")
    if name in ("ord", "uno"):
        return ordered if name == "ord" else ~ordered
    holds = _RELATIONS[name[1:]](x, y)
    return ordered & holds if name[0] == "o" else ~ordered | holds


def _to_float(read: Callable[[np.ndarray], np.ndarray]) -> Scalar:
    return lambda op, a: read(a[0]).astype(_result_dtype(op))


def _to_int(signed: bool) -> Scalar:
    """fptosi / fptoui: truncate toward zero into the result's bits."""

    def run(op: Operation, a: Arrays) -> np.ndarray:
        dtype = _result_dtype(op)
        if dtype == np.bool_:
            return (a[0].astype(np.int64) & 1).astype(np.bool_)
        kind = "i" if signed else "u"
        return a[0].astype(f"{kind}{dtype.itemsize}").view(dtype)

    return run


def _extend(read: Callable[[np.ndarray], np.ndarray]) -> Scalar:
    return lambda op, a: read(a[0]).astype(_result_dtype(op))


def _trunci(op: Operation, a: Arrays) -> np.ndarray:
    dtype = _result_dtype(op)
    if dtype == np.bool_:
        return (_unsigned(a[0]) & 1).astype(np.bool_)
    return a[0].astype(dtype)


def _in_f64(fn: Callable[..., Any]) -> Scalar:
    """Evaluated in float64 and rounded once to the result type."""
    return lambda op, a: np.asarray(fn(*(x.astype(np.float64) for x in a)))


_erf = np.frompyfunc(math.erf, 1, 1)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.trunc(x + np.copysign(0.5, x))


def _fma(op: Operation, a: Arrays) -> np.ndarray:
    wide = np.longdouble if a[0].dtype == np.float64 else np.float64
    x, y, z = (v.astype(wide) for v in a)
    return x * y + z


def _ipowi(op: Operation, a: Arrays) -> np.ndarray:
    """Integer power; a negative exponent gives 0 except for bases 1 and -1."""
    base, exponent = (_signed(x).astype(np.int64) for x in a)
    negative = exponent < 0
    power = np.power(base, np.where(negative, 0, exponent))
    odd = np.where(exponent % 2 == 0, 1, -1)
    inverse = np.where(base == 1, 1, np.where(base == -1, odd, 0))
    return np.where(negative, inverse, power)


_SCALAR_OPS: dict[str, Scalar] = {
    "arith.constant": _constant,
    "arith.addf": _elementwise(np.add),
    "arith.subf": _elementwise(np.subtract),
    "arith.mulf": _elementwise(np.multiply),
    "arith.divf": _elementwise(np.divide),
    "arith.negf": _elementwise(np.negative),
    "arith.maximumf": _elementwise(np.maximum),
    "arith.minimumf": _elementwise(np.minimum),
    "arith.maxnumf": _elementwise(np.fmax),
    "arith.minnumf": _elementwise(np.fmin),
    "arith.addi": _wrapping(np.add),
    "arith.subi": _wrapping(np.subtract),
    "arith.muli": _wrapping(np.multiply),
    "arith.divsi": _signed_op(_truncating_division),
    "arith.divui": _unsigned_op(np.floor_divide),
    "arith.floordivsi": _signed_op(np.floor_divide),
    "arith.ceildivsi": _signed_op(lambda a, b: -np.floor_divide(-a, b)),
    "arith.remsi": _signed_op(np.fmod),
    "arith.remui": _unsigned_op(np.remainder),
    "arith.maxsi": _signed_op(np.maximum),
    "arith.minsi": _signed_op(np.minimum),
    "arith.maxui": _unsigned_op(np.maximum),
    "arith.minui": _unsigned_op(np.minimum),
    "arith.andi": _elementwise(np.bitwise_and),
    "arith.ori": _elementwise(np.bitwise_or),
    "arith.xori": _elementwise(np.bitwise_xor),
    "arith.shli": _unsigned_op(np.left_shift),
    "arith.shrui": _unsigned_op(np.right_shift),
    "arith.shrsi": _signed_op(np.right_shift),
    "arith.cmpi": _cmpi,
    "arith.cmpf": _cmpf,
    "arith.select": lambda op, a: np.where(a[0], a[1], a[2]),
    "arith.bitcast": lambda op, a: a[0].view(_result_dtype(op)),
    "arith.index_cast": lambda op, a: a[0].astype(_result_dtype(op)),
    "arith.extf": _to_float(lambda x: x),
    "arith.truncf": _to_float(lambda x: x),
    "arith.sitofp": _to_float(_signed),
    "arith.uitofp": _to_float(_unsigned),
    "arith.fptosi": _to_int(signed=True),
    "arith.fptoui": _to_int(signed=False),
    "arith.extsi": _extend(_signed),
    "arith.extui": _extend(_unsigned),
    "arith.trunci": _trunci,
    "math.absf": _elementwise(np.abs),
    "math.absi": _signed_op(np.abs),
    "math.exp": _elementwise(np.exp),
    "math.exp2": _elementwise(np.exp2),
    "math.expm1": _elementwise(np.expm1),
    "math.log": _elementwise(np.log),
    "math.log1p": _elementwise(np.log1p),
    "math.log2": _elementwise(np.log2),
    "math.log10": _elementwise(np.log10),
    "math.sqrt": _elementwise(np.sqrt),
    "math.rsqrt": _in_f64(lambda x: 1.0 / np.sqrt(x)),
    "math.cbrt": _elementwise(np.cbrt),
    "math.sin": _elementwise(np.sin),
    "math.cos": _elementwise(np.cos),
    "math.tan": _elementwise(np.tan),
    "math.asin": _elementwise(np.arcsin),
    "math.acos": _elementwise(np.arccos),
    "math.atan": _elementwise(np.arctan),
    "math.atan2": _elementwise(np.arctan2),
    "math.sinh": _elementwise(np.sinh),
    "math.cosh": _elementwise(np.cosh),
    "math.tanh": _elementwise(np.tanh),
    "math.asinh": _elementwise(np.arcsinh),
    "math.acosh": _elementwise(np.arccosh),
    "math.atanh": _elementwise(np.arctanh),
    "math.erf": _in_f64(lambda x: _erf(x).astype(np.float64)),
    "math.floor": _elementwise(np.floor),
    "math.ceil": _elementwise(np.ceil),
    "math.trunc": _elementwise(np.trunc),
    "math.roundeven": _elementwise(np.rint),
    "math.round": _in_f64(_round_half_away),
    "math.copysign": _elementwise(np.copysign),
    "math.powf": _elementwise(np.power),
    "math.fpowi": lambda op, a: np.power(a[0], _signed(a[1]).astype(a[0].dtype)),
    "math.ipowi": _ipowi,
    "math.fma": _fma,
}


# ------------------------------------------------------------- tensor ops


def _result_type(op: Operation, index: int = 0) -> TensorType:
    result_type = op.result_types[index]
    assert isinstance(result_type, TensorType)
    return result_type


def _empty(op: Operation, a: Arrays) -> Arrays:
    """Undefined contents: NaN for floats, so that reading them shows."""
    result_type = _result_type(op)
    dtype = numpy_dtype(result_type.element_type)
    fill = np.nan if dtype.kind == "f" else 0
    return [np.full(tuple(result_type.get_shape()), fill, dtype=dtype)]


def _fill(op: Operation, a: Arrays) -> Arrays:
    value, init = a
    if value.dtype != init.dtype:
        raise InterpreterError(f"linalg.fill: a {value.dtype} value into {init.dtype}")
    return [np.full(init.shape, value, dtype=init.dtype)]


def _pad(op: Operation, a: Arrays) -> Arrays:
    assert isinstance(op, tensor.PadOp)
    low, high = op.static_low.get_values(), op.static_high.get_values()
    (value,) = run_body(op.region.block, [np.zeros((), np.int64)] * len(low))
    if value.dtype != a[0].dtype:
        raise InterpreterError(f"tensor.pad: yields {value.dtype} to pad {a[0].dtype}")
    return [np.pad(a[0], list(zip(low, high)), constant_values=value)]


def _slices(op: tensor.ExtractSliceOp | tensor.InsertSliceOp, a: Arrays) -> tuple[slice, ...]:
    """The op's slices, each dynamic offset, size or stride read from its
    operand (after the source, or the source and destination)."""
    dynamic = iter(int(v) for v in a[1 if isinstance(op, tensor.ExtractSliceOp) else 2 :])

    def values(static: Sequence[int]) -> list[int]:
        return [next(dynamic) if v == DYNAMIC_INDEX else v for v in static]

    offsets = values(op.static_offsets.get_values())
    sizes, strides = values(op.static_sizes.get_values()), values(op.static_strides.get_values())
    return tuple(
        slice(o, o + (s - 1) * st + 1 if s > 0 else o, st)
        for o, s, st in zip(offsets, sizes, strides)
    )


def _extract_slice(op: Operation, a: Arrays) -> Arrays:
    assert isinstance(op, tensor.ExtractSliceOp)
    return [np.array(a[0][_slices(op, a)])]


def _insert_slice(op: Operation, a: Arrays) -> Arrays:
    assert isinstance(op, tensor.InsertSliceOp)
    source, dest = a[:2]
    result = dest.copy()
    result[_slices(op, a)] = source
    return [result]


def _reshape(op: Operation, a: Arrays) -> Arrays:
    shape = tuple(_result_type(op).get_shape())
    if tuple(int(d) for d in a[1]) != shape:
        raise InterpreterError(f"tensor.reshape: shape operand {a[1]} is not the result's {shape}")
    return [a[0].reshape(shape)]


def _matmul(op: Operation, a: Arrays) -> Arrays:
    lhs, rhs, init = a
    return [init + np.matmul(lhs, rhs)]


def _windows(
    x: np.ndarray, out: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
    dilations: Sequence[int], op_name: str,
) -> np.ndarray:  # fmt: skip
    """A read-only view (N, C, OH, OW, KH, KW) of x[n, c, oh*s + kh*d, ow*s + kw*d]."""
    for axis in (0, 1):
        last = (out[axis] - 1) * strides[axis] + (kernel[axis] - 1) * dilations[axis]
        if out[axis] and kernel[axis] and last >= x.shape[2 + axis]:
            raise InterpreterError(f"{op_name}: windows read past the input")
    x = np.ascontiguousarray(x)
    sn, sc, sh, sw = x.strides
    return as_strided(
        x,
        shape=(*x.shape[:2], *out, *kernel),
        strides=(sn, sc, sh * strides[0], sw * strides[1], sh * dilations[0], sw * dilations[1]),
        writeable=False,
    )


def _conv2d(op: Operation, a: Arrays) -> Arrays:
    """im2col, one matmul."""
    assert isinstance(op, linalg.Conv2DNchwFchwOp)
    x, w, init = a
    n, (f, c, kh, kw), (oh, ow) = x.shape[0], w.shape, init.shape[2:]
    strides, dilations = op.strides.get_values(), op.dilations.get_values()
    win = _windows(x, (oh, ow), (kh, kw), strides, dilations, op.name)  # type: ignore[arg-type]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    y = np.matmul(cols, w.reshape(f, c * kh * kw).T).reshape(n, oh, ow, f)
    return [init + y.transpose(0, 3, 1, 2)]


def _addressed(
    op: GatherOp | ScatterOp, space_shape: tuple[int, ...], indices: np.ndarray,
    shape: tuple[int, ...],
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:  # fmt: skip
    """For every point of the op's space: the element of a tensor of `shape`
    that it addresses (index values wrapped and clamped, as the op says), and
    whether its index values were in range."""
    space = _Space(list(space_shape), list(range(len(space_shape))))

    def at(expr: AffineExpr) -> np.ndarray:
        return np.broadcast_to(space.evaluate(expr, {}), space_shape)

    index_maps, data_map = op.maps()
    axes = addressed_axes(data_map)
    values: list[np.ndarray] = []
    in_range = np.ones(space_shape, dtype=bool)
    for j, amap in enumerate(index_maps):
        raw = indices[tuple(at(e) for e in amap.results)].astype(np.int64)
        extent = shape[axes[j]]
        wrapped = np.where(raw < 0, raw + extent, raw)
        in_range &= (wrapped >= 0) & (wrapped < extent)
        values.append(np.clip(wrapped, 0, max(extent - 1, 0)))
    element = tuple(values[e.position] if isinstance(e, AffineSymExpr) else at(e)
                    for e in data_map.results)  # fmt: skip
    return element, in_range


def _gather(op: Operation, a: Arrays) -> Arrays:
    assert isinstance(op, GatherOp)
    data, indices = a
    element, _ = _addressed(op, tuple(_result_type(op).get_shape()), indices, data.shape)
    return [np.asarray(data[element])]


def _scatter(op: Operation, a: Arrays) -> Arrays:
    """The updates applied in order: points that land on an element already
    updated wait for the next round, so each round's targets are distinct and
    run the combine body as arrays."""
    assert isinstance(op, ScatterOp)
    updates, indices, target = a
    element, in_range = _addressed(op, updates.shape, indices, target.shape)
    result = np.array(target)
    if not result.size:
        return [result]
    flat = np.ravel_multi_index(element, target.shape)[in_range]
    values = updates[in_range]
    order = np.argsort(flat, kind="stable")
    ranks = np.empty(len(flat), dtype=np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(flat[order])) + 1] if len(flat) else np.zeros(0, int)
    ranks[order] = np.arange(len(flat)) - np.repeat(starts, np.diff(np.r_[starts, len(flat)]))
    view = result.reshape(-1)
    for round_ in range(int(ranks.max()) + 1 if len(flat) else 0):
        chosen = ranks == round_
        (combined,) = run_body(op.combine.block, [values[chosen], view[flat[chosen]]])
        view[flat[chosen]] = combined
    return [result]


def _concat(op: Operation, a: Arrays) -> Arrays:
    assert isinstance(op, tensor.ConcatOp)
    return [np.concatenate(a, axis=op.dim.value.data)]


_TENSOR_OPS: dict[type[Operation], Callable[[Operation, Arrays], Arrays]] = {
    ConstantOp: lambda op, a: [array_from_dense(op.properties["value"])],  # type: ignore[arg-type]
    tensor.EmptyOp: _empty,
    linalg.FillOp: _fill,
    tensor.PadOp: _pad,
    tensor.ExtractSliceOp: _extract_slice,
    tensor.InsertSliceOp: _insert_slice,
    tensor.ReshapeOp: _reshape,
    tensor.ConcatOp: _concat,
    linalg.GenericOp: _run_generic,
    linalg.MatmulOp: _matmul,
    linalg.Conv2DNchwFchwOp: _conv2d,
    GatherOp: _gather,
    ScatterOp: _scatter,
}
