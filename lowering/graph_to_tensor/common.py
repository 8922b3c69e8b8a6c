"""Shared pieces of the graph-to-tensor lowering: type queries, affine maps,
the `Emitter` that inserts tensor ops, and the `FamilyPattern` base."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    f8E8M0FNU,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph import ConstantOp, GraphOp, constant_value_of
from ember.dialects.graph.dims import symbolic_shape, symbolic_type
from ember.dialects.graph.symbolic import Dim, SymExpr, exact_quotient, symbols_of
from ember.dialects.graph.types import (
    array_from_dense,
    dense_from_array,
    is_float,
    is_narrow_float,
)
from ember.dialects.loop_nests import scalar_constant_ops
from ember.dialects.quick_ops import quick
from ember.dialects.symbol_sizes import SymbolSizes, symbol_bindings
from ember.lowering.graph_to_tensor.float_conversions import (
    e8m0_to_float,
    float_to_e8m0,
    float_to_narrow,
    narrow_to_float,
)

PASS_NAME = "convert-graph-to-tensor"
MAX_GATHER_INDICES = 64
"""Gather with more constant indices than this becomes an `ember_linalg.gather`."""

PARALLEL = "parallel"
REDUCTION = "reduction"
"""Iterator kinds of a `linalg.generic`, as the family modules spell them."""

Shape = tuple[Dim, ...]


# ------------------------------------------------------------------- types


def _tensor_type(value: SSAValue) -> TensorType:
    value_type = value.type
    assert isinstance(value_type, TensorType)
    return value_type


def _shape(value: SSAValue) -> Shape:
    """The dims of a tensor value: ints, and `SymExpr`s for symbolic dims
    (the `#graph.dims` encoding, which tensor-level types keep)."""
    return symbolic_shape(_tensor_type(value))


def _elem(value: SSAValue) -> Attribute:
    return _tensor_type(value).element_type


def _is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def _bits(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    return int(t.bitwidth)  # type: ignore[attr-defined]


def _lowest(t: Attribute) -> float:
    """The identity of max over `t` (-inf, the smallest integer, or false)."""
    if is_float(t):
        return -math.inf
    if t == i1 or _is_unsigned(t):
        return 0
    return -(1 << (_bits(t) - 1))


def _highest(t: Attribute) -> float:
    """The identity of min over `t` (+inf, the largest integer, or true)."""
    if is_float(t):
        return math.inf
    if t == i1:
        return 1
    return (1 << _bits(t)) - 1 if _is_unsigned(t) else (1 << (_bits(t) - 1)) - 1


def _max_start(t: Attribute) -> float:
    """Where a NaN-skipping max over `t` starts: NaN for floats (maxnum skips
    it, and it stays the result when every element is NaN), else `_lowest`."""
    return math.nan if is_float(t) else _lowest(t)


def _min_start(t: Attribute) -> float:
    return math.nan if is_float(t) else _highest(t)


def _scalar_attr(value: float, t: Attribute) -> FloatAttr | IntegerAttr:
    if isinstance(t, IntegerType):
        return IntegerAttr(int(bool(value)) if t == i1 else int(value), t)
    return FloatAttr(float(value), t)  # type: ignore[arg-type]


def _normalize_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# ------------------------------------------------------------ affine maps


def _dim(position: int) -> AffineExpr:
    return AffineExpr.dimension(position)


def _map(num_dims: int, results: Sequence[AffineExpr | int]) -> AffineMap:
    exprs = tuple(AffineExpr.constant(r) if isinstance(r, int) else r for r in results)
    return AffineMap(num_dims, 0, exprs)


def _dims_map(num_dims: int, dims: Sequence[int]) -> AffineMap:
    """(d0, ..., dn-1) -> (d_i for i in dims)."""
    return _map(num_dims, [_dim(i) for i in dims])


def _identity(num_dims: int) -> AffineMap:
    return _dims_map(num_dims, range(num_dims))


def broadcast_map(shape: Shape, out_shape: Shape) -> AffineMap:
    """Reads an operand of `shape` broadcast (NumPy rules) to `out_shape`: operand
    dims align with the trailing result dims, a size-1 dim that broadcasts reads
    index 0, missing leading dims are dropped."""
    offset = len(out_shape) - len(shape)
    results: list[AffineExpr | int] = []
    for j, extent in enumerate(shape):
        k = j + offset
        broadcasts = k < 0 or (extent == 1 and out_shape[k] != 1)
        results.append(0 if broadcasts else _dim(k))
    return _map(len(out_shape), results)


# ------------------------------------------------------------ scalar code

_ORDERED = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}


class Body:
    """Appends scalar `arith`/`math` ops to a generic body. Each operation picks
    its float, signed-integer or unsigned-integer form from the operand type
    (i1 counts as unsigned); `op` is the `graph` op being lowered (attributes)."""

    def __init__(self, block: Block, op: GraphOp):
        self.block, self.op = block, op

    def attr(self, name: str) -> Any:
        return self.op.attr(name)

    def has(self, operand: str) -> bool:
        return bool(self.op.operand_group(operand))

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float, t: Attribute) -> SSAValue:
        if _is_unsigned(t):  # arith.constant only takes signless integers
            wide = self.emit(arith.ConstantOp(IntegerAttr(int(value), i64)))
            # The same width is a reinterpretation, narrower ones a truncation.
            cast = arith.BitcastOp if t.width.data == 64 else arith.TruncIOp  # type: ignore[attr-defined]
            return self.emit(cast(wide, t))  # type: ignore[arg-type]
        return self.emit(arith.ConstantOp(_scalar_attr(value, t)))

    def _pick(self, a: SSAValue, b: SSAValue, ops: tuple[type[Operation], ...]) -> SSAValue:
        """ops = (float, signed[, unsigned])."""
        t = a.type
        if is_float(t):
            op_class = ops[0]
        elif (_is_unsigned(t) or t == i1) and len(ops) > 2:
            op_class = ops[2]
        else:
            op_class = ops[1]
        op = quick(lambda: op_class(a, b), op_class, op_class, (a, b), (t,))  # type: ignore[call-arg]
        return self.emit(op)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._pick(a, b, (arith.AddfOp, arith.AddiOp))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._pick(a, b, (arith.SubfOp, arith.SubiOp))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._pick(a, b, (arith.MulfOp, arith.MuliOp))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Float division, or integer division truncating toward zero."""
        return self._pick(a, b, (arith.DivfOp, arith.DivSIOp, arith.DivUIOp))

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """NaN-propagating for floats, as ONNX Max."""
        return self._pick(a, b, (arith.MaximumfOp, arith.MaxSIOp, arith.MaxUIOp))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._pick(a, b, (arith.MinimumfOp, arith.MinSIOp, arith.MinUIOp))

    def max_skipping_nan(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """maxnum for floats: a NaN operand loses (ReduceMax, MaxPool)."""
        return self._pick(a, b, (arith.MaxnumfOp, arith.MaxSIOp, arith.MaxUIOp))

    def min_skipping_nan(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._pick(a, b, (arith.MinnumfOp, arith.MinSIOp, arith.MinUIOp))

    def rem(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """C remainder (the sign of `a`)."""
        if is_float(a.type):
            return self.fmod(a, b)
        return self.emit((arith.RemUIOp if _is_unsigned(a.type) else arith.RemSIOp)(a, b))

    def and_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AndIOp(a, b))

    def or_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.OrIOp(a, b))

    def xor(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.XOrIOp(a, b))

    def not_(self, a: SSAValue) -> SSAValue:
        return self.xor(a, self.const(1, i1))

    def neg(self, a: SSAValue) -> SSAValue:
        if is_float(a.type):
            return self.emit(arith.NegfOp(a))
        return self.sub(self.const(0, a.type), a)

    def abs(self, a: SSAValue) -> SSAValue:
        if is_float(a.type):
            return self.math(xmath.AbsFOp, a)
        return a if _is_unsigned(a.type) or a.type == i1 else self.math(xmath.AbsIOp, a)

    def math(self, op_class: type[Operation], *args: SSAValue) -> SSAValue:
        return self.emit(op_class(*args))  # type: ignore[call-arg]

    def exp(self, a: SSAValue) -> SSAValue:
        return self.math(xmath.ExpOp, a)

    def cmp(self, relation: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """eq/ne/lt/le/gt/ge: ordered for floats (une for ne), signed or unsigned for ints."""
        if is_float(a.type):
            return self.cmpf(_ORDERED[relation], a, b)
        if relation not in ("eq", "ne"):
            relation = ("u" if _is_unsigned(a.type) or a.type == i1 else "s") + relation
        return self.emit(arith.CmpiOp(a, b, relation))

    def cmpf(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.CmpfOp(a, b, predicate))

    def is_nan(self, a: SSAValue) -> SSAValue:
        return self.cmpf("uno", a, a)

    def select(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SelectOp(condition, a, b))

    def convert(
        self, x: SSAValue, to: Attribute, saturate: bool = True, round_mode: str = "up"
    ) -> SSAValue:
        """ONNX Cast: float<->float, float->int truncating, int<->int by
        sign/zero extension or truncation, anything->i1 as `!= 0`, i1->number as 0/1.
        A narrow float (bf16, float8, float4) goes through f32, exactly, and
        a value becomes one with one rounding (`float_conversions`; `saturate`
        is ONNX Cast's, for float8 targets; `round_mode` its rounding to f8E8M0FNU)."""
        src = x.type
        if src == to:
            return x
        if src == f8E8M0FNU:
            return self.convert(e8m0_to_float(self.emit, x), to, saturate)
        if is_narrow_float(src):
            return self.convert(narrow_to_float(self.emit, x), to, saturate)
        if to == f8E8M0FNU:
            return float_to_e8m0(self.emit, self.convert(x, f32), round_mode, saturate)
        if is_narrow_float(to):
            wide = src if src in (f32, f64) else f64 if _bits(src) > 24 else f32
            return float_to_narrow(self.emit, self.convert(x, wide), to, saturate)
        if to == i1:
            zero = self.const(0, src)
            return self.cmpf("une", x, zero) if is_float(src) else self.cmp("ne", x, zero)
        if is_float(src) and is_float(to):
            if _bits(src) == _bits(to):  # f16 <-> bf16
                return self.convert(self.convert(x, f32), to)
            op_class = arith.ExtFOp if _bits(to) > _bits(src) else arith.TruncFOp
            return self.emit(op_class(x, to))
        if is_float(src):
            return self.float_to_int(x, to)
        from_unsigned = _is_unsigned(src) or src == i1
        if is_float(to):
            op_class = arith.UIToFPOp if from_unsigned else arith.SIToFPOp
            return self.emit(op_class(x, to))  # type: ignore[arg-type]
        if _bits(to) > _bits(src):
            op_class = arith.ExtUIOp if from_unsigned else arith.ExtSIOp
            return self.emit(op_class(x, to))  # type: ignore[arg-type]
        if _bits(to) < _bits(src):
            return self.emit(arith.TruncIOp(x, to))  # type: ignore[arg-type]
        wider = IntegerType(2 * _bits(src))  # same width, other signedness: via a wider type
        return self.convert(self.convert(x, wider), to)

    def float_to_int(self, x: SSAValue, to: Attribute) -> SSAValue:
        """Float to integer as onnxruntime converts (docs/semantics.md): through a
        32- or 64-bit conversion that gives INT_MIN for NaN, infinities and
        values out of range, then wrapped to the target width. 64-bit unsigned
        targets (and 32-bit ones from f32/f64) convert values at or above
        2^(w-1) shifted down by 2^(w-1) and flip the top bit back."""
        half = _bits(x.type) == 16
        if half:  # compare and subtract in f32: f16 cannot hold 2^31
            x = self.convert(x, f32)
        bits, unsigned = _bits(to), _is_unsigned(to)
        width = 64 if bits == 64 or (bits == 32 and unsigned and half) else 32
        # Same width: in the target type (a 64-bit reinterpretation has no arith op).
        t = to if bits == width else IntegerType(width)
        if unsigned and bits == width:
            top = float(2 ** (width - 1))
            high = self.cmpf("oge", x, self.const(top, x.type))
            shifted = self._truncate(self.sub(x, self.const(top, x.type)), t)
            flipped = self.xor(shifted, self.const(1 << (width - 1), t))
            result = self.select(high, flipped, self._truncate(x, t))
        else:
            result = self._truncate(x, t)
        return self.convert(result, to)

    def _truncate(self, x: SSAValue, t: Attribute) -> SSAValue:
        """x truncated toward zero to a signed integer, as the bits of `t`; the
        signed minimum when that is out of range or x is NaN (x86's cvttss2si).
        arith.fptosi only sees in-range values (others are poison)."""
        width = _bits(t)
        limit = float(2 ** (width - 1))
        in_range = self.and_(
            self.cmpf("oge", x, self.const(-limit, x.type)),
            self.cmpf("olt", x, self.const(limit, x.type)),
        )
        safe = self.select(in_range, x, self.const(0, x.type))
        converted = self.emit(arith.FPToSIOp(safe, t))  # type: ignore[arg-type]
        minimum = 1 << (width - 1) if _is_unsigned(t) else -(1 << (width - 1))
        return self.select(in_range, converted, self.const(minimum, t))

    def fmod(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """C fmod of floats: x - trunc(x / y) * y in f64 with one fused multiply-add.
        trunc(x / y) can only be one too large (x / y rounded up to an integer),
        which flips the sign of the remainder: then one |y| is added back.
        Exact for f16/f32 operands whose quotient is below 2^29."""
        t = x.type
        wx, wy = self.convert(x, f64), self.convert(y, f64)
        quotient = self.math(xmath.TruncOp, self.div(wx, wy))
        r = self.emit(xmath.FmaOp(self.neg(quotient), wy, wx))
        zero = self.const(0.0, f64)
        wrong_sign = self.select(
            self.cmpf("olt", wx, zero), self.cmpf("ogt", r, zero), self.cmpf("olt", r, zero)
        )
        fixed = self.add(r, self.math(xmath.CopySignOp, self.abs(wy), wx))
        r = self.select(wrong_sign, fixed, r)
        # fmod(x, ±inf) = x for finite x (the formula gives NaN there).
        infinity = self.const(float("inf"), f64)
        finite_by_infinite = self.and_(
            self.cmpf("oeq", self.abs(wy), infinity), self.cmpf("olt", self.abs(wx), infinity)
        )
        r = self.select(finite_by_infinite, wx, r)
        # The remainder has the dividend's sign, zero included.
        return self.convert(self.math(xmath.CopySignOp, r, wx), t)


# ---------------------------------------------------------------- emitter

BodyFn = Callable[[Body, list[SSAValue]], Sequence[SSAValue]]
ValueFn = Callable[[Body, list[SSAValue]], SSAValue]


@dataclass
class Emitter:
    """Inserts tensor-level ops (upstream `linalg` and `tensor`) before the
    `graph` op being lowered."""

    rewriter: PatternRewriter
    op: GraphOp
    sizes_by_function: dict[FuncOp, SymbolSizes] = field(default_factory=dict)
    block: Block | None = None
    """Where new ops go when not in front of the op: the end of this block
    (the body of a loop the lowering builds, `inside`)."""

    def inside(self, block: Block) -> Emitter:
        """An emitter appending to `block`."""
        return replace(self, block=block)

    def emit(self, new: Operation) -> Operation:
        """Inserts `new` (in front of the op, or at the end of `block`),
        with the op's location: the model's nodes it came from."""
        new.location = self.op.location
        if self.block is None:
            self.rewriter.insert(new)
        else:
            self.block.add_op(new)
        return new

    @property
    def sizes(self) -> SymbolSizes:
        """The index values of the symbolic sizes of the function being lowered."""
        return function_sizes(self.op, self.sizes_by_function)

    def value(self, new: Operation) -> SSAValue:
        return self.emit(new).results[0]

    def scalar(self, value: float, t: Attribute) -> SSAValue:
        """An `arith.constant` of type `t` (an unsigned one is the signless
        constant of its bits, `arith.bitcast` to `t`: arith.constant takes
        signless integers only)."""
        return _emit_scalar(value, t, self.value)

    def empty(self, shape: Sequence[Dim], t: Attribute) -> SSAValue:
        """A `tensor.empty` of `shape`, its symbolic dims given by their sizes."""
        sizes, result_type = self.sizes.sizes(shape), symbolic_type(t, shape)
        empty = quick(lambda: tensor.EmptyOp(sizes, result_type), tensor.EmptyOp, tensor.EmptyOp,
                      sizes, (result_type,))  # fmt: skip
        return self.value(empty)

    def fill(self, value: float, shape: Sequence[Dim], t: Attribute) -> SSAValue:
        """`linalg.fill` of a `tensor.empty` with the scalar `value`."""
        scalar, dest = self.scalar(value, t), self.empty(shape, t)
        return self.value(linalg.FillOp([scalar], [dest]))

    def constant(self, array: np.ndarray) -> SSAValue:
        """A `graph.constant` holding `array`."""
        attr = dense_from_array(np.asarray(array))
        return self.value(
            ConstantOp.build(result_types=[attr.get_type()], properties={"value": attr})
        )

    def reshape(self, x: SSAValue, shape: Sequence[Dim]) -> SSAValue:
        """`tensor.reshape` to `shape`, given as an `arith.constant` where static,
        else a `tensor.from_elements` of the sizes (bufferization makes the
        reshape a view, its sizes read from the result type)."""
        if _shape(x) == tuple(shape):
            return x
        if any(isinstance(d, SymExpr) for d in (*shape, *_shape(x))):
            return self._regroup(x, tuple(shape))
        shape_type = TensorType(i64, [len(shape)])
        dims = self.value(
            arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(shape_type, list(shape)))
        )
        return self.value(tensor.ReshapeOp(x, dims, TensorType(_elem(x), list(shape))))

    def _regroup(self, x: SSAValue, shape: Shape) -> SSAValue:
        """A reshape with symbolic dims as MLIR spells one: `tensor.collapse_shape`
        of the source's dims into groups, then `tensor.expand_shape` of each
        group into the result's dims (`regrouping`)."""
        groups = regrouping(_shape(x), shape)
        if groups is None:
            raise DiagnosticException(
                f"{PASS_NAME}: {self.op.name}: cannot regroup {list(_shape(x))} as {list(shape)}"
            )
        sources, targets = groups
        middle = [math.prod(_shape(x)[i] for i in group) for group in sources]
        value = x
        if len(middle) < len(_shape(x)):
            reassociation = ArrayAttr(
                [ArrayAttr([IntegerAttr(i, i64) for i in g]) for g in sources]
            )
            value = self.value(tensor.CollapseShapeOp.create(
                operands=[value], result_types=[symbolic_type(_elem(x), middle)],
                properties={"reassociation": reassociation}))  # fmt: skip
        if len(middle) < len(shape):
            reassociation = ArrayAttr(
                [ArrayAttr([IntegerAttr(i, i64) for i in g]) for g in targets]
            )
            static = [DYNAMIC_INDEX if isinstance(d, SymExpr) else d for d in shape]
            value = self.value(tensor.ExpandShapeOp(value, self.sizes.sizes(shape), reassociation,
                                                    static, symbolic_type(_elem(x), shape)))  # fmt: skip
        return value

    def pad(self, x: SSAValue, low: Sequence[int], high: Sequence[int], value: float) -> SSAValue:
        """`tensor.pad` whose region yields the constant `value`."""
        if not any(low) and not any(high):
            return x
        shape = [d + lo + hi for d, lo, hi in zip(_shape(x), low, high)]
        block = Block(arg_types=[IndexType()] * len(shape))

        def into_block(new: Operation) -> SSAValue:
            block.add_op(new)
            return new.results[0]

        block.add_op(tensor.YieldOp(_emit_scalar(value, _elem(x), into_block)))
        result_type = symbolic_type(_elem(x), shape)
        return self.value(tensor.PadOp(x, [], [], Region(block), low, high, result_type))

    def extract(
        self,
        x: SSAValue,
        offsets: Sequence[Dim | SSAValue],
        sizes: Sequence[Dim],
        strides: Sequence[int] | None = None,
    ) -> SSAValue:
        """`tensor.extract_slice`; a symbolic offset or size is given by its
        value, and an offset may be an `index` value (a loop's step)."""
        strides = strides or [1] * len(sizes)
        at_zero = all(isinstance(o, int) and o == 0 for o in offsets)
        if tuple(sizes) == _shape(x) and at_zero and all(s == 1 for s in strides):
            return x
        if any(not isinstance(d, int) for d in (*offsets, *sizes)):

            def mixed(dims: Sequence[Dim | SSAValue]) -> list[SSAValue | int]:
                return [d if isinstance(d, SSAValue) else
                        self.sizes.size(d) if isinstance(d, SymExpr) else int(d) for d in dims]  # fmt: skip

            result_type = symbolic_type(_elem(x), sizes)
            return self.value(
                tensor.ExtractSliceOp(x, mixed(offsets), mixed(sizes), strides, result_type)
            )
        return self.value(tensor.ExtractSliceOp.from_static_parameters(x, offsets, sizes, strides))

    def insert(self, source: SSAValue, dest: SSAValue, offsets: Sequence[int | SSAValue],
               strides: Sequence[int] | None = None) -> SSAValue:  # fmt: skip
        """`tensor.insert_slice` of all of `source` at `offsets` (ints, or
        `index` values such as a loop's step); its symbolic sizes are given
        by their values."""
        shape = _shape(source)
        static = [DYNAMIC_INDEX if isinstance(d, SymExpr) else int(d) for d in shape]
        sizes = [self.sizes.size(d) for d in shape if isinstance(d, SymExpr)]
        static_offsets = [o if isinstance(o, int) else DYNAMIC_INDEX for o in offsets]
        dynamic = [o for o in offsets if isinstance(o, SSAValue)]
        return self.value(tensor.InsertSliceOp.get(source, dest, static, static_offsets, strides,
                                                   offsets=dynamic, sizes=sizes))  # fmt: skip

    def generic(
        self,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        iterators: Sequence[str],
        body: BodyFn,
    ) -> list[SSAValue]:
        """A `linalg.generic`; `body` gets the block arguments (inputs, then
        outputs) and returns the values to yield."""
        block = Block(arg_types=[_elem(v) for v in (*inputs, *outputs)])
        values = body(Body(block, self.op), list(block.args))
        block.add_op(linalg.YieldOp(*values))
        return list(self.emit(generic(inputs, outputs, maps, iterators, Region(block))).results)

    def parallel(
        self,
        inputs: Sequence[SSAValue],
        shape: Sequence[int],
        t: Attribute,
        body: ValueFn,
        maps: Sequence[AffineMap] | None = None,
    ) -> SSAValue:
        """An all-parallel generic over `shape` into a `tensor.empty`; inputs are
        read through `maps` (default: NumPy broadcasting); `body` gets the input
        block arguments only."""
        shape = tuple(shape)
        maps = maps or [broadcast_map(_shape(v), shape) for v in inputs]
        count = len(inputs)
        return self.generic(
            inputs, [self.empty(shape, t)], [*maps, _identity(len(shape))],
            [PARALLEL] * len(shape), lambda b, args: [body(b, args[:count])],
        )[0]  # fmt: skip

    def reduction(
        self,
        x: SSAValue,
        axes: Collection[int],
        init: float,
        t: Attribute,
        body: ValueFn,
        kept_inputs: Sequence[SSAValue] = (),
    ) -> SSAValue:
        """A generic over the dims of `x` that reduces `axes` into a tensor of the
        kept dims, filled with `init` first. `kept_inputs` have the reduced shape.
        `body` gets (x, *kept_inputs, accumulator) and returns the new accumulator."""
        shape = _shape(x)
        rank = len(shape)
        kept = [i for i in range(rank) if i not in axes]
        kept_map = _dims_map(rank, kept)
        accumulator = self.fill(init, [shape[i] for i in kept], t)
        maps = [_identity(rank), *[kept_map] * len(kept_inputs), kept_map]
        iterators = [REDUCTION if i in axes else PARALLEL for i in range(rank)]
        return self.generic(
            [x, *kept_inputs], [accumulator], maps, iterators, lambda b, a: [body(b, a)]
        )[0]


def generic(
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    maps: Sequence[AffineMap],
    iterators: Sequence[str],
    body: Region,
) -> linalg.GenericOp:
    """A `linalg.generic` on tensors (one result per output) from plain maps and
    iterator kinds ("parallel", "reduction")."""
    # The maps, the iterators and the operand counts set the op's properties.
    key = (linalg.GenericOp, tuple(maps), tuple(iterators), len(inputs), len(outputs))
    return quick(lambda: linalg.GenericOp(
        inputs, outputs, body, [AffineMapAttr(m) for m in maps],
        [IteratorTypeAttr(IteratorType(kind)) for kind in iterators], [o.type for o in outputs],
    ), key, linalg.GenericOp, (*inputs, *outputs), [o.type for o in outputs], (body,))  # fmt: skip


def _emit_scalar(value: float, t: Attribute, emit: Callable[[Operation], SSAValue]) -> SSAValue:
    if _is_unsigned(t):
        attr: FloatAttr | IntegerAttr = IntegerAttr(int(value) % (1 << _bits(t)), t)  # type: ignore[arg-type]
    else:
        attr = _scalar_attr(value, t)
    return [emit(op) for op in scalar_constant_ops(attr)][-1]


def _copy(b: Body, args: list[SSAValue]) -> SSAValue:
    return args[0]


def _transpose(e: Emitter, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    """result[i] = x[i permuted]: a copy generic reading x through the inverse
    permutation (what `linalg.transpose` generalises to; xDSL 0.75 prints that
    op without its discardable attributes, so `ember.fusion_group` would not
    survive a round trip through text). A constant (e.g. a Gemm weight with
    transB) is transposed now, at compile time, instead of on every run."""
    shape = _shape(x)
    out = [shape[p] for p in perm]
    owner = x.owner
    if isinstance(owner, ConstantOp) and isinstance(
        owner.properties["value"], DenseIntOrFPElementsAttr
    ):
        value = owner.properties["value"]
        assert isinstance(value, DenseIntOrFPElementsAttr)
        if len(value.data.data) * 8 == value.get_element_type().bitwidth:  # a splat stays one
            splat = DenseIntOrFPElementsAttr(TensorType(_elem(x), out), value.data)
            return e.value(
                ConstantOp.build(result_types=[splat.get_type()], properties={"value": splat})
            )
        return e.constant(np.ascontiguousarray(np.transpose(array_from_dense(value), perm)))
    identity = _identity(len(perm))
    read = _dims_map(len(perm), [perm.index(axis) for axis in range(len(perm))])
    return e.generic([x], [e.empty(out, _elem(x))], [read, identity], [PARALLEL] * len(perm),
                     lambda b, a: [a[0]])[0]  # fmt: skip


def _matmul(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """(..., M, K) x (..., K, N) into a zero-filled result: `linalg.matmul` for
    2-D operands (xDSL's is 2-D only), a multiply-accumulate generic with the
    same maps plus leading batch dims otherwise."""
    shape = (*_shape(a)[:-1], _shape(b)[-1])
    init = e.fill(0, shape, _elem(a))
    if len(shape) == 2:
        return e.value(linalg.MatmulOp([a, b], [init]))
    batch = len(shape) - 2
    m, n, k = batch, batch + 1, batch + 2
    maps = [_dims_map(batch + 3, [*range(batch), m, k]), _dims_map(batch + 3, [*range(batch), k, n]),
            _dims_map(batch + 3, [*range(batch), m, n])]  # fmt: skip
    iterators = [PARALLEL] * (batch + 2) + [REDUCTION]
    return e.generic([a, b], [init], maps, iterators,
                     lambda bd, x: [bd.add(x[2], bd.mul(x[0], x[1]))])[0]  # fmt: skip


# ------------------------------------------------------ op family patterns

Lowering = Callable[[Emitter, GraphOp], Sequence[SSAValue]]
Check = Callable[[GraphOp], "str | None"]


class NeedsConstants(str):
    """A reason an op cannot be lowered that goes away once the inputs are
    known: operands that must be constants (Slice starts, Reduce axes, ...)."""


class FamilyPattern(RewritePattern):
    """Lowers the ops of one family: `lowerings` maps an op class to the
    function that lowers it; `checks` to one that says why an op of that class
    cannot be lowered (None: it can)."""

    lowerings: ClassVar[Mapping[type[GraphOp], Lowering]] = {}
    checks: ClassVar[Mapping[type[GraphOp], Check]] = {}
    symbolic: ClassVar[frozenset[type[GraphOp]]] = frozenset()
    """The op classes whose lowering takes symbolic dims (sizes known at run time)."""
    unread: ClassVar[Mapping[type[GraphOp], Callable[[GraphOp], frozenset[str]]]] = {}
    """Per op class, the operand groups of an op that its lowering does not
    read (it takes what they say from the result type, e.g. a Slice's ends)."""

    def __init__(self, sizes_by_function: dict[FuncOp, SymbolSizes] | None = None,
                 unused: frozenset[Operation] = frozenset()):  # fmt: skip
        super().__init__()
        self.sizes_by_function = {} if sizes_by_function is None else sizes_by_function
        self.unused = unused
        """Ops left alone: what they compute only feeds unread operands."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp) or op in self.unused:
            return
        lower = self.lowerings.get(type(op))
        if lower is None:
            return
        results = list(lower(Emitter(rewriter, op, self.sizes_by_function), op))
        rewriter.replace(op, [], results)

    @classmethod
    def unsupported(cls, op: GraphOp) -> str | None:
        check = cls.checks.get(type(op))
        reason = check(op) if check is not None else None
        if reason is None and type(op) not in cls.symbolic:
            names = symbols_of(d for v in (*op.operands, *op.results) for d in _shape(v))
            if names:
                return f"symbolic sizes ({', '.join(sorted(names))}) not lowered yet"
        return reason


Groups = list[list[int]]


def regrouping(source: Shape, target: Shape) -> tuple[Groups, Groups] | None:
    """The dims of `source` and of `target` in groups of equal products, in
    order (`[a, b, c] -> [a * b, c]`: `[[0, 1], [2]]` and `[[0], [1]]`), each
    group one dim on at least one side unless its sizes are static (`[2, 32]
    -> [8, 8]`); None where the sizes do not regroup (a symbol that must be
    split). Dims of size 1 join the group before
    them (the first group, at the start)."""

    def significant(shape: Shape) -> list[int]:
        return [i for i, d in enumerate(shape) if d != 1]

    src, dst = significant(source), significant(target)
    sources: Groups = []
    targets: Groups = []
    i = j = 0
    while i < len(src) and j < len(dst):
        a, b = [src[i]], [dst[j]]
        pa, pb = source[src[i]], target[dst[j]]
        i, j = i + 1, j + 1
        while pa != pb:
            if exact_quotient(pb, pa) is not None and i < len(src):
                a.append(src[i])
                pa = pa * source[src[i]]
                i += 1
            elif exact_quotient(pa, pb) is not None and j < len(dst):
                b.append(dst[j])
                pb = pb * target[dst[j]]
                j += 1
            else:
                return None
        static = not any(isinstance(d, SymExpr) for d in (pa, pb))
        if len(a) > 1 and len(b) > 1 and not static:
            return None  # static dims regroup many to many ([S, 2, 32] as [S, 8, 8])
        sources.append(a)
        targets.append(b)
    if i < len(src) or j < len(dst):
        return None
    return _with_unit_dims(sources, len(source)), _with_unit_dims(targets, len(target))


def _with_unit_dims(groups: Groups, rank: int) -> Groups:
    """`groups` of the non-unit dims completed with the unit dims: each joins
    the group of the dim before it (the first group, for leading ones)."""
    if not groups:
        return [list(range(rank))] if rank else []
    owner = {i: g for g, group in enumerate(groups) for i in group}
    result: Groups = [[] for _ in groups]
    current = 0
    for i in range(rank):
        current = owner.get(i, current)
        result[current].append(i)
    return result


def symbolic_broadcast_problem(op: GraphOp) -> str | None:
    """Why broadcasting `op`'s operands to its result needs run-time sizes:
    an operand dim that is a symbol where the result's is not the same
    expression (the symbol may be 1 and broadcast, or not). None if none."""
    out = _shape(op.results[0])
    for value in op.operands:
        shape = _shape(value)
        for dim, target in zip(shape, out[len(out) - len(shape) :]):
            if isinstance(dim, SymExpr) and dim != target:
                return f"{dim} broadcast against {target}"
    return None


def function_sizes(op: Operation, cache: dict[FuncOp, SymbolSizes]) -> SymbolSizes:
    """The `SymbolSizes` of the function holding `op` (made on first use)."""
    func = op.parent_op()
    while func is not None and not isinstance(func, FuncOp):
        func = func.parent_op()
    assert func is not None, "a graph op outside a function"
    if func not in cache:
        block = func.body.block
        cache[func] = SymbolSizes(block, symbol_bindings([a.type for a in block.args]),
                                  tensor.DimOp, PASS_NAME)  # fmt: skip
    return cache[func]


def _constant_operands(op: GraphOp, *names: str) -> bool:
    return all(constant_value_of(v) is not None for n in names for v in op.operand_group(n))


def _int_constant(value: SSAValue) -> list[int]:
    array = constant_value_of(value)
    assert array is not None
    return [int(v) for v in np.asarray(array).reshape(-1)]
