"""`convert-graph-to-tensor`: lowers `graph` ops to `tensor` ops with scalar bodies.

Every `graph` op except `graph.constant` (which is the tensor-level constant
too) becomes `tensor` ops; the scalar work inside `tensor.generic` bodies is
`arith`/`math` code. There is one rewrite pattern per op family, each driven
by a table from ONNX op type to the function that lowers it:

- elementwise (unary, binary, variadic Sum/Max/Min/Mean, Where, Cast, Clip,
  PRelu, Pow, Mod, comparisons, logic, IsNaN, Identity/Dropout): ONE
  all-parallel generic writing into a `tensor.empty`. Broadcasting lives in
  the indexing maps: a size-1 operand dim that broadcasts reads index 0, and
  missing leading dims are dropped. The table gives the scalar body.
- windows: Conv (2-D) is `tensor.pad` (explicit or resolved auto_pad) +
  `tensor.fill` 0 + `tensor.conv2d`, then a bias generic; MaxPool and
  AveragePool (2-D) pad (-inf or 0; ceil_mode is extra high padding) and run
  `tensor.pool2d`, averages divided by the window size or, when windows see
  different numbers of elements, by a count computed with NumPy at compile
  time and passed as a `graph.constant`. 1-D windows are reshaped to
  N x C x 1 x L (filters F x C x 1 x K) and lowered as 2-D; 3-D (and higher)
  windows use one generic in place of the named op. Global pools are
  reductions.
- contractions: Gemm and MatMul become `tensor.matmul` (rank 2, or rank 3 for
  batches, after broadcast copies and `tensor.reshape`), with copy generics
  for transposes and a generic epilogue for alpha and beta * C.
- normalisation: BatchNormalization, InstanceNormalization and
  LayerNormalization (mean and variance reductions), LRN (window sum over
  zero-padded channels), Softmax/LogSoftmax (max, sum of exp, divide or log).
- reductions: ReduceX is a `tensor.fill` of the neutral element and one
  reduction generic, then a generic for Mean, L2 and LogSumExp; ArgMax and
  ArgMin carry (value, index) and read indices from an iota constant.
- data movement: Reshape/Flatten/Squeeze/Unsqueeze are `tensor.reshape`;
  Transpose, Expand, Tile, DepthToSpace and negative-step Slice are copies
  with permuted, broadcast or reversed maps; Concat, Split, Slice, Pad
  and Gather (constant indices, at most 64) are `tensor.insert_slice`,
  `tensor.extract_slice` and `tensor.pad` (Pad in edge, reflect or wrap mode:
  slices of the input, some copied with reversed or broadcast maps, inserted
  around it axis by axis); other Gathers are `tensor.gather` (indices read at
  run time).
- shape queries: Shape, Size, ConstantOfShape and Range (constant operands)
  become `graph.constant`s.

Shapes must be static. Before rewriting anything the pass checks every op:
a dynamic shape is an error naming the op, and every op that cannot be
lowered is listed, with the reason, in one diagnostic. Expected input: IR
after `graph-infer-shapes` and `graph-fold-constants`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import dce
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects import tensor as tdialect
from ember.dialects.graph import ConstantOp, GraphOp, constant_value_of
from ember.dialects.graph.types import DYNAMIC, array_from_dense, dense_from_array, is_float
from ember.dialects.tensor import PARALLEL, REDUCTION, _int_array, generic_body

PASS_NAME = "convert-graph-to-tensor"
MAX_GATHER_INDICES = 64
"""Gather with more constant indices than this becomes a `tensor.gather`."""

Shape = tuple[int, ...]

# ------------------------------------------------------------------- types


def _tensor_type(value: SSAValue) -> TensorType:
    value_type = value.type
    assert isinstance(value_type, TensorType)
    return value_type


def _shape(value: SSAValue) -> Shape:
    return tuple(_tensor_type(value).get_shape())


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
            return self.emit(arith.TruncIOp(wide, t))  # type: ignore[arg-type]
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
        return self.emit(op_class(a, b))  # type: ignore[call-arg]

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

    def convert(self, x: SSAValue, to: Attribute) -> SSAValue:
        """ONNX Cast: float<->float, float->int truncating, int<->int by
        sign/zero extension or truncation, anything->i1 as `!= 0`, i1->number as 0/1."""
        src = x.type
        if src == to:
            return x
        if to == i1:
            zero = self.const(0, src)
            return self.cmpf("une", x, zero) if is_float(src) else self.cmp("ne", x, zero)
        if is_float(src) and is_float(to):
            if _bits(src) == _bits(to):  # f16 <-> bf16
                return self.convert(self.convert(x, f32), to)
            op_class = arith.ExtFOp if _bits(to) > _bits(src) else arith.TruncFOp
            return self.emit(op_class(x, to))
        if is_float(src):
            op_class = arith.FPToUIOp if _is_unsigned(to) else arith.FPToSIOp
            return self.emit(op_class(x, to))  # type: ignore[arg-type]
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
    """Inserts tensor-level ops before the `graph` op being lowered."""

    rewriter: PatternRewriter
    op: GraphOp

    def value(self, new: Operation) -> SSAValue:
        self.rewriter.insert(new)
        return new.results[0]

    def empty(self, shape: Sequence[int], t: Attribute) -> SSAValue:
        return self.value(tdialect.EmptyOp(TensorType(t, list(shape))))

    def fill(self, value: float, shape: Sequence[int], t: Attribute) -> SSAValue:
        return self.value(tdialect.FillOp(_scalar_attr(value, t), TensorType(t, list(shape))))

    def constant(self, array: np.ndarray) -> SSAValue:
        """A `graph.constant` holding `array`."""
        attr = dense_from_array(np.asarray(array))
        return self.value(
            ConstantOp.build(result_types=[attr.get_type()], properties={"value": attr})
        )

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        if _shape(x) == tuple(shape):
            return x
        result_type = TensorType(_elem(x), list(shape))
        return self.value(tdialect.ReshapeOp.build(operands=[x], result_types=[result_type]))

    def pad(self, x: SSAValue, low: Sequence[int], high: Sequence[int], value: float) -> SSAValue:
        if not any(low) and not any(high):
            return x
        shape = [d + lo + hi for d, lo, hi in zip(_shape(x), low, high)]
        props = {"low": _int_array(low), "high": _int_array(high),
                 "value": _scalar_attr(value, _elem(x))}  # fmt: skip
        result_type = TensorType(_elem(x), shape)
        return self.value(
            tdialect.PadOp.build(operands=[x], result_types=[result_type], properties=props)
        )

    def extract(
        self,
        x: SSAValue,
        offsets: Sequence[int],
        sizes: Sequence[int],
        strides: Sequence[int] | None = None,
    ) -> SSAValue:
        strides = strides or [1] * len(sizes)
        if tuple(sizes) == _shape(x) and not any(offsets) and all(s == 1 for s in strides):
            return x
        props = {"offsets": _int_array(offsets), "sizes": _int_array(sizes),
                 "strides": _int_array(strides)}  # fmt: skip
        result_type = TensorType(_elem(x), list(sizes))
        return self.value(
            tdialect.ExtractSliceOp.build(
                operands=[x], result_types=[result_type], properties=props
            )
        )

    def insert(self, source: SSAValue, dest: SSAValue, offsets: Sequence[int]) -> SSAValue:
        sizes = _shape(source)
        props = {"offsets": _int_array(offsets), "sizes": _int_array(sizes),
                 "strides": _int_array([1] * len(sizes))}  # fmt: skip
        return self.value(
            tdialect.InsertSliceOp.build(
                operands=[source, dest], result_types=[dest.type], properties=props
            )
        )

    def generic(
        self,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        iterators: Sequence[str],
        body: BodyFn,
    ) -> list[SSAValue]:
        """A `tensor.generic`; `body` gets the block arguments (inputs, then
        outputs) and returns the values to yield."""
        region, block = generic_body([_elem(v) for v in (*inputs, *outputs)])
        values = body(Body(block, self.op), list(block.args))
        block.add_op(tdialect.YieldOp(*values))
        new = tdialect.GenericOp(inputs, outputs, maps, iterators, region)
        self.rewriter.insert(new)
        return list(new.results)

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


def _copy(b: Body, args: list[SSAValue]) -> SSAValue:
    return args[0]


def _transpose(e: Emitter, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    """result[i] = x[i permuted] (`tensor.transpose`). A constant (e.g. a Gemm
    weight with transB) is transposed now, at compile time, instead of on
    every run."""
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
    init = e.empty(out, _elem(x))
    transpose = tdialect.TransposeOp.build(
        operands=[x, init], result_types=[TensorType(_elem(x), out)],
        properties={"permutation": tdialect._int_array(perm)},
    )  # fmt: skip
    return e.value(transpose)


def _matmul(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """`tensor.matmul` of (..., M, K) and (..., K, N) into a zero-filled result."""
    shape = (*_shape(a)[:-1], _shape(b)[-1])
    init = e.fill(0, shape, _elem(a))
    return e.value(
        tdialect.MatmulOp.build(
            operands=[a, b, init], result_types=[TensorType(_elem(a), list(shape))]
        )
    )


# ------------------------------------------------------ op family patterns

Lowering = Callable[[Emitter, GraphOp], Sequence[SSAValue]]
Check = Callable[[GraphOp], "str | None"]


class FamilyPattern(RewritePattern):
    """Lowers the ops of one family: `lowerings` maps an ONNX op type to the
    function that lowers it; `checks` to one that says why an op of that type
    cannot be lowered (None: it can)."""

    lowerings: ClassVar[Mapping[str, Lowering]] = {}
    checks: ClassVar[Mapping[str, Check]] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
            return
        lower = self.lowerings.get(op.SPEC.onnx_type)
        if lower is None:
            return
        results = list(lower(Emitter(rewriter, op), op))
        rewriter.replace(op, [], results)

    @classmethod
    def unsupported(cls, op: GraphOp) -> str | None:
        check = cls.checks.get(op.SPEC.onnx_type)
        return check(op) if check is not None else None


def _constant_operands(op: GraphOp, *names: str) -> bool:
    return all(constant_value_of(v) is not None for n in names for v in op.operand_group(n))


def _int_constant(value: SSAValue) -> list[int]:
    array = constant_value_of(value)
    assert array is not None
    return [int(v) for v in np.asarray(array).reshape(-1)]


# ------------------------------------------------------------- elementwise

ScalarFn = Callable[[Body, list[SSAValue], Attribute], SSAValue]
"""Builds the scalar body of an elementwise op: (builder, input block arguments,
result element type) -> the value to yield."""


def _math(op_class: type[Operation]) -> ScalarFn:
    return lambda b, x, t: b.math(op_class, x[0])


def _binary(method: Callable[[Body, SSAValue, SSAValue], SSAValue]) -> ScalarFn:
    return lambda b, x, t: method(b, x[0], x[1])


def _compare(relation: str) -> ScalarFn:
    return lambda b, x, t: b.cmp(relation, x[0], x[1])


def _fold(method: Callable[[Body, SSAValue, SSAValue], SSAValue]) -> ScalarFn:
    def body(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
        value = x[0]
        for other in x[1:]:
            value = method(b, value, other)
        return value

    return body


def _mean(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.div(_fold(Body.add)(b, x, t), b.const(len(x), t))


def _relu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.max(x[0], b.const(0, t))


def _sign(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """1, -1, or the input itself (0, -0.0, NaN)."""
    v, zero = x[0], b.const(0, t)
    if _is_unsigned(t) or t == i1:
        return b.select(b.cmp("gt", v, zero), b.const(1, t), zero)
    negative = b.select(b.cmp("lt", v, zero), b.const(-1, t), v if is_float(t) else zero)
    return b.select(b.cmp("gt", v, zero), b.const(1, t), negative)


def _reciprocal(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.div(b.const(1, t), x[0])


def _sigmoid(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    one = b.const(1, t)
    return b.div(one, b.add(one, b.exp(b.neg(x[0]))))


def _softplus_of(b: Body, v: SSAValue) -> SSAValue:
    """log(1 + exp(v)) as max(v, 0) + log1p(exp(-|v|)), which never overflows."""
    tail = b.math(xmath.Log1pOp, b.exp(b.neg(b.abs(v))))
    return b.add(b.max(v, b.const(0, v.type)), tail)


def _softplus(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return _softplus_of(b, x[0])


def _mish(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.mul(x[0], b.math(xmath.TanhOp, _softplus_of(b, x[0])))


def _softsign(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.div(x[0], b.add(b.const(1, t), b.abs(x[0])))


def _clamp01(b: Body, v: SSAValue) -> SSAValue:
    return b.min(b.max(v, b.const(0, v.type)), b.const(1, v.type))


def _hard_sigmoid(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    linear = b.add(b.mul(b.const(b.attr("alpha"), t), x[0]), b.const(b.attr("beta"), t))
    return _clamp01(b, linear)


def _hard_swish(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """x * clamp(x / 6 + 0.5, 0, 1)."""
    linear = b.add(b.div(x[0], b.const(6, t)), b.const(0.5, t))
    return b.mul(x[0], _clamp01(b, linear))


def _leaky_relu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    v = x[0]
    scaled = b.mul(b.const(b.attr("alpha"), t), v)
    return b.select(b.cmp("lt", v, b.const(0, t)), scaled, v)


def _elu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """x < 0 ? alpha * expm1(x) : x."""
    v = x[0]
    negative = b.mul(b.const(b.attr("alpha"), t), b.math(xmath.ExpM1Op, v))
    return b.select(b.cmp("lt", v, b.const(0, t)), negative, v)


def _selu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """gamma * (x > 0 ? x : alpha * expm1(x))."""
    v = x[0]
    negative = b.mul(b.const(b.attr("alpha"), t), b.math(xmath.ExpM1Op, v))
    inner = b.select(b.cmp("gt", v, b.const(0, t)), v, negative)
    return b.mul(b.const(b.attr("gamma"), t), inner)


def _celu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """max(x, 0) + min(0, alpha * expm1(x / alpha))."""
    v, zero, alpha = x[0], b.const(0, t), b.const(b.attr("alpha"), t)
    negative = b.mul(alpha, b.math(xmath.ExpM1Op, b.div(v, alpha)))
    return b.add(b.max(v, zero), b.min(zero, negative))


def _thresholded_relu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    v = x[0]
    return b.select(b.cmp("gt", v, b.const(b.attr("alpha"), t)), v, b.const(0, t))


def _gelu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    v, half, one = x[0], b.const(0.5, t), b.const(1, t)
    if b.attr("approximate") == "tanh":
        cube = b.mul(b.mul(v, v), v)
        inner = b.add(v, b.mul(b.const(0.044715, t), cube))
        curve = b.math(xmath.TanhOp, b.mul(b.const(math.sqrt(2 / math.pi), t), inner))
    else:
        curve = b.math(xmath.ErfOp, b.div(v, b.const(math.sqrt(2), t)))
    return b.mul(b.mul(half, v), b.add(one, curve))


def _prelu(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    v, slope = x
    return b.select(b.cmp("lt", v, b.const(0, t)), b.mul(v, slope), v)


def _where(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.select(*x)


def _clip(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """max(x, min) then min(., max), for the bounds that are present."""
    value, bounds = x[0], iter(x[1:])
    if b.has("min"):
        value = b.max(value, next(bounds))
    if b.has("max"):
        value = b.min(value, next(bounds))
    return value


def _cast(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    return b.convert(x[0], t)


def _pow(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """powf for float bases (exponent converted to the base type); an integer
    base goes through f64 powf and truncates back to the base's type, which is
    exact while the result fits in 53 bits."""
    base, exponent = x
    if is_float(t):
        return b.math(xmath.PowFOp, base, b.convert(exponent, t))
    wide = b.math(xmath.PowFOp, b.convert(base, f64), b.convert(exponent, f64))
    return b.convert(wide, t)


def _mod(b: Body, x: list[SSAValue], t: Attribute) -> SSAValue:
    """fmod=1: C remainder (sign of the dividend). fmod=0: Python's (sign of the
    divisor): the remainder plus the divisor when their signs differ."""
    a, d = x
    r = b.rem(a, d)
    if b.attr("fmod") or _is_unsigned(t):
        return r
    zero = b.const(0, t)
    signs_differ = b.xor(b.cmp("lt", r, zero), b.cmp("lt", d, zero))
    adjust = b.and_(b.cmp("ne", r, zero), signs_differ)
    result = b.select(adjust, b.add(r, d), r)
    if is_float(t):  # a zero result takes the divisor's sign, as NumPy's mod does
        result = b.select(b.cmp("eq", result, zero), b.math(xmath.CopySignOp, result, d), result)
    return result


SCALAR_BODIES: dict[str, ScalarFn] = {
    # unary
    "Abs": lambda b, x, t: b.abs(x[0]),
    "Neg": lambda b, x, t: b.neg(x[0]),
    "Relu": _relu,
    "Sign": _sign,
    "Identity": lambda b, x, t: x[0],
    "Dropout": lambda b, x, t: x[0],
    "Sigmoid": _sigmoid,
    "Tanh": _math(xmath.TanhOp),
    "Exp": _math(xmath.ExpOp),
    "Log": _math(xmath.LogOp),
    "Sqrt": _math(xmath.SqrtOp),
    "Reciprocal": _reciprocal,
    "Floor": _math(xmath.FloorOp),
    "Ceil": _math(xmath.CeilOp),
    "Round": _math(xmath.RoundEvenOp),
    "Erf": _math(xmath.ErfOp),
    "Sin": _math(xmath.SinOp),
    "Cos": _math(xmath.CosOp),
    "Tan": _math(xmath.TanOp),
    "Asin": _math(xmath.AsinOp),
    "Acos": _math(xmath.AcosOp),
    "Atan": _math(xmath.AtanOp),
    "Sinh": _math(xmath.SinhOp),
    "Cosh": _math(xmath.CoshOp),
    "Softplus": _softplus,
    "Softsign": _softsign,
    "HardSwish": _hard_swish,
    "Mish": _mish,
    "LeakyRelu": _leaky_relu,
    "Elu": _elu,
    "Celu": _celu,
    "ThresholdedRelu": _thresholded_relu,
    "Selu": _selu,
    "HardSigmoid": _hard_sigmoid,
    "Gelu": _gelu,
    "Not": lambda b, x, t: b.not_(x[0]),
    "IsNaN": lambda b, x, t: b.is_nan(x[0]),
    "Cast": _cast,
    "Clip": _clip,
    # binary
    "Add": _binary(Body.add),
    "Sub": _binary(Body.sub),
    "Mul": _binary(Body.mul),
    "Div": _binary(Body.div),
    "Equal": _compare("eq"),
    "Less": _compare("lt"),
    "LessOrEqual": _compare("le"),
    "Greater": _compare("gt"),
    "GreaterOrEqual": _compare("ge"),
    "And": _binary(Body.and_),
    "Or": _binary(Body.or_),
    "Xor": _binary(Body.xor),
    "Pow": _pow,
    "Mod": _mod,
    "PRelu": _prelu,
    "Where": _where,
    # variadic
    "Sum": _fold(Body.add),
    "Max": _fold(Body.max),
    "Min": _fold(Body.min),
    "Mean": _mean,
}


def _elementwise(body: ScalarFn) -> Lowering:
    def lower(e: Emitter, op: GraphOp) -> list[SSAValue]:
        result = op.results[0]
        t = _elem(result)
        return [e.parallel(list(op.operands), _shape(result), t, lambda b, x: body(b, x, t))]

    return lower


def _check_pow(op: GraphOp) -> str | None:
    if any(_is_unsigned(_elem(v)) for v in op.operands):
        return "unsigned integer operands"
    return None


def _check_cast(op: GraphOp) -> str | None:
    src, to = _elem(op.operands[0]), _elem(op.results[0])
    both_int = isinstance(src, IntegerType) and isinstance(to, IntegerType)
    if both_int and src != to and _bits(src) == _bits(to) == 64:
        return f"cast {src} to {to}"
    return None


class ElementwisePattern(FamilyPattern):
    """Elementwise ops: one all-parallel generic each, body from SCALAR_BODIES."""

    lowerings = {name: _elementwise(body) for name, body in SCALAR_BODIES.items()}
    checks = {"Pow": _check_pow, "Cast": _check_cast}


# ---------------------------------------------------------- shape queries


def _lower_shape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    dims = _shape(op.operands[0])[op.attr("start") : op.attr("end")]
    return [e.constant(np.array(dims, dtype=np.int64))]


def _lower_size(e: Emitter, op: GraphOp) -> list[SSAValue]:
    return [e.constant(np.array(math.prod(_shape(op.operands[0])), dtype=np.int64))]


def _lower_constant_of_shape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A splat `graph.constant` (one element stored)."""
    value = op.attr("value")
    element = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(1)
    result_type = op.result_types[0]
    attr = DenseIntOrFPElementsAttr(result_type, dense_from_array(element).data)  # type: ignore[arg-type]
    return [e.value(ConstantOp.build(result_types=[result_type], properties={"value": attr}))]


def _lower_range(e: Emitter, op: GraphOp) -> list[SSAValue]:
    from ember.reference.evaluate import evaluate

    arrays = [constant_value_of(v) for v in op.operands]
    return [e.constant(evaluate(op, arrays)[0])]


def _check_range(op: GraphOp) -> str | None:
    return None if _constant_operands(op, "start", "limit", "delta") else "non-constant operands"


class ShapeQueryPattern(FamilyPattern):
    """Shape, Size, ConstantOfShape and Range become `graph.constant`s."""

    lowerings = {"Shape": _lower_shape, "Size": _lower_size,
                 "ConstantOfShape": _lower_constant_of_shape, "Range": _lower_range}  # fmt: skip
    checks = {"Range": _check_range}


# ---------------------------------------------------------- data movement


def _lower_reshape(e: Emitter, op: GraphOp) -> list[SSAValue]:
    return [e.reshape(op.operands[0], _shape(op.results[0]))]


def _lower_transpose(e: Emitter, op: GraphOp) -> list[SSAValue]:
    rank = len(_shape(op.operands[0]))
    perm = op.attr("perm") or list(reversed(range(rank)))
    return [_transpose(e, op.operands[0], perm)]


def _lower_expand(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operand_group("input")[0]
    return [e.parallel([x], _shape(op.results[0]), _elem(x), _copy)]


def _lower_tile(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Reshape to (1, s0, 1, s1, ...), broadcast-copy to (r0, s0, r1, s1, ...),
    reshape to (r0 s0, r1 s1, ...)."""
    x = op.operand_group("input")[0]
    shape, out = _shape(x), _shape(op.results[0])
    if 0 in out:
        return [e.empty(out, _elem(x))]
    repeats = [o // s for o, s in zip(out, shape)]
    spread = e.reshape(x, [d for s in shape for d in (1, s)])
    tiled = [d for r, s in zip(repeats, shape) for d in (r, s)]
    return [e.reshape(e.parallel([spread], tiled, _elem(x), _copy), out)]


def _lower_depth_to_space(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Reshape to 6-D, transpose (DCR or CRD order), reshape."""
    x = op.operands[0]
    n, c, h, w = _shape(x)
    block = op.attr("blocksize")
    depth = c // (block * block)
    if op.attr("mode") == "DCR":
        split, perm = [n, block, block, depth, h, w], (0, 3, 4, 1, 5, 2)
    else:
        split, perm = [n, depth, block, block, h, w], (0, 1, 4, 2, 5, 3)
    moved = _transpose(e, e.reshape(x, split), perm)
    return [e.reshape(moved, _shape(op.results[0]))]


def _lower_concat(e: Emitter, op: GraphOp) -> list[SSAValue]:
    out = _shape(op.results[0])
    axis = _normalize_axis(op.attr("axis"), len(out))
    concat = tdialect.ConcatOp.build(operands=[list(op.operands)], result_types=[op.result_types[0]],
                                     properties={"dim": IntegerAttr(axis, i64)})  # fmt: skip
    return [e.value(concat)]


def _lower_split(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operand_group("input")[0]
    axis = _normalize_axis(op.attr("axis"), len(_shape(x)))
    parts, offset = [], 0
    for result in op.results:
        offsets = [0] * len(_shape(x))
        offsets[axis] = offset
        parts.append(e.extract(x, offsets, _shape(result)))
        offset += _shape(result)[axis]
    return parts


def _slice_starts_and_steps(op: GraphOp) -> list[tuple[int, int]]:
    """(first index, step) per dim, with ONNX's clamping of starts."""
    shape = _shape(op.operand_group("data")[0])
    starts = _int_constant(op.operand_group("starts")[0])
    axes_group, steps_group = op.operand_group("axes"), op.operand_group("steps")
    axes = _int_constant(axes_group[0]) if axes_group else list(range(len(starts)))
    steps = _int_constant(steps_group[0]) if steps_group else [1] * len(starts)
    params = [(0, 1)] * len(shape)
    for start, axis, step in zip(starts, axes, steps):
        axis = _normalize_axis(axis, len(shape))
        extent = shape[axis]
        start = start + extent if start < 0 else start
        start = min(max(start, 0), extent if step > 0 else extent - 1)
        params[axis] = (start, step)
    return params


def _lower_slice(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """`tensor.extract_slice` for the dims with positive steps; then, if some
    step is negative, a copy generic that reads those dims at start + step * d
    (`(d0 * -1) + 9` reverses a dim of 10)."""
    x = op.operand_group("data")[0]
    shape, out = _shape(x), _shape(op.results[0])
    params = _slice_starts_and_steps(op)
    offsets = [start if step > 0 else 0 for start, step in params]
    sizes = [size if step > 0 else extent for (_, step), size, extent in zip(params, out, shape)]
    part = e.extract(x, offsets, sizes, [max(step, 1) for _, step in params])
    if all(step > 0 for _, step in params):
        return [part]
    read = _map(len(out), [_dim(i) * step + start if step < 0 else _dim(i)
                           for i, (start, step) in enumerate(params)])  # fmt: skip
    return [e.parallel([part], out, _elem(x), _copy, maps=[read])]


def _check_slice(op: GraphOp) -> str | None:
    if _constant_operands(op, "starts", "ends", "axes", "steps"):
        return None
    return "starts, ends, axes and steps must be constants"


def _lower_gather(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Up to MAX_GATHER_INDICES constant indices: one `tensor.extract_slice` per
    index, inserted in order, then a reshape. Otherwise `tensor.gather`, which
    reads the indices at run time."""
    data, indices = op.operand_group("data")[0], op.operand_group("indices")[0]
    shape, t = _shape(data), _elem(data)
    axis = _normalize_axis(op.attr("axis"), len(shape))
    out = _shape(op.results[0])
    constant = constant_value_of(indices)
    if constant is None or constant.size > MAX_GATHER_INDICES:
        gather = tdialect.GatherOp.build(operands=[data, indices], result_types=[op.result_types[0]],
                                         properties={"axis": IntegerAttr(axis, i64)})  # fmt: skip
        return [e.value(gather)]
    picks = [i + shape[axis] if i < 0 else i for i in _int_constant(indices)]
    sizes = [1 if i == axis else d for i, d in enumerate(shape)]

    def piece(index: int) -> SSAValue:
        return e.extract(data, [index if i == axis else 0 for i in range(len(shape))], sizes)

    if len(picks) == 1:
        return [e.reshape(piece(picks[0]), out)]
    gathered = [len(picks) if i == axis else d for i, d in enumerate(shape)]
    dest = e.empty(gathered, t)
    for k, index in enumerate(picks):
        dest = e.insert(piece(index), dest, [k if i == axis else 0 for i in range(len(shape))])
    return [e.reshape(dest, out)]


def _lower_pad(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Negative pads crop with `tensor.extract_slice` first. Constant mode is a
    `tensor.pad`; edge, reflect and wrap build each padded axis in turn from
    slices of the input (see `_pad_axis`)."""
    x = op.operand_group("data")[0]
    shape = _shape(x)
    pads = _int_constant(op.operand_group("pads")[0])
    axes_group, value_group = op.operand_group("axes"), op.operand_group("constant_value")
    axes = _int_constant(axes_group[0]) if axes_group else list(range(len(shape)))
    low, high = [0] * len(shape), [0] * len(shape)
    for i, axis in enumerate(axes):
        axis = _normalize_axis(axis, len(shape))
        low[axis], high[axis] = pads[i], pads[i + len(axes)]
    sizes = [d - max(-lo, 0) - max(-hi, 0) for d, lo, hi in zip(shape, low, high)]
    y = e.extract(x, [max(-p, 0) for p in low], sizes)
    low, high = [max(p, 0) for p in low], [max(p, 0) for p in high]
    mode = op.attr("mode")
    if mode == "constant":
        filler = constant_value_of(value_group[0]) if value_group else None
        value = 0 if filler is None or filler.size == 0 else filler.reshape(-1)[0].item()
        return [e.pad(y, low, high, value)]
    for axis, (lo, hi) in enumerate(zip(low, high)):
        if lo or hi:
            y = _pad_axis(e, y, axis, lo, hi, mode)
    return [y]


def _index_runs(indices: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first index, step, length) runs of `indices` with step 1, -1 or 0."""
    runs: list[tuple[int, int, int]] = []
    for index in indices:
        if runs:
            first, step, length = runs[-1]
            last = first + step * (length - 1)
            if length == 1 and abs(index - last) <= 1:
                runs[-1] = (first, index - last, 2)
                continue
            if length > 1 and index - last == step:
                runs[-1] = (first, step, length + 1)
                continue
        runs.append((index, 1, 1))
    return runs


def _pad_axis(e: Emitter, x: SSAValue, axis: int, low: int, high: int, mode: str) -> SSAValue:
    """Pads one axis in edge, reflect or wrap mode: the input goes in the middle
    of a `tensor.empty`; each side is read from input positions (NumPy's
    `np.pad` of an index range), as runs of `tensor.extract_slice` pieces:
    ascending runs (wrap) as they are, descending runs (reflect) copied with a
    reversed map `(d) -> (-d + length - 1)`, repeated positions (edge) copied
    from a size-1 slice with a map reading index 0."""
    shape, t = _shape(x), _elem(x)
    rank, extent = len(shape), shape[axis]
    source = np.pad(np.arange(extent), (low, high), mode=mode)
    out = [*shape[:axis], extent + low + high, *shape[axis + 1 :]]
    dest = e.insert(x, e.empty(out, t), [low if i == axis else 0 for i in range(rank)])
    sides = [(0, source[:low]), (low + extent, source[low + extent :])]
    for position, indices in sides:
        for first, step, length in _index_runs([int(i) for i in indices]):
            start = first if step >= 0 else first - length + 1
            size = 1 if step == 0 else length
            offsets = [start if i == axis else 0 for i in range(rank)]
            piece = e.extract(x, offsets, [size if i == axis else d for i, d in enumerate(shape)])
            if step != 1:
                read = -_dim(axis) + (length - 1) if step < 0 else 0
                maps = [_map(rank, [read if i == axis else _dim(i) for i in range(rank)])]
                piece_shape = [length if i == axis else d for i, d in enumerate(shape)]
                piece = e.parallel([piece], piece_shape, t, _copy, maps=maps)
            dest = e.insert(piece, dest, [position if i == axis else 0 for i in range(rank)])
            position += length
    return dest


def _check_pad(op: GraphOp) -> str | None:
    if op.attr("mode") != "constant":  # constant_value is not read
        if not _constant_operands(op, "pads", "axes"):
            return "pads and axes must be constants"
        return None
    if not _constant_operands(op, "pads", "constant_value", "axes"):
        return "pads, constant_value and axes must be constants"
    return None


class DataMovementPattern(FamilyPattern):
    """Reshapes, transposes, broadcasts, slices, concatenation, padding, gathers."""

    lowerings = {
        "Reshape": _lower_reshape,
        "Flatten": _lower_reshape,
        "Squeeze": _lower_reshape,
        "Unsqueeze": _lower_reshape,
        "Transpose": _lower_transpose,
        "Expand": _lower_expand,
        "Tile": _lower_tile,
        "DepthToSpace": _lower_depth_to_space,
        "Concat": _lower_concat,
        "Split": _lower_split,
        "Slice": _lower_slice,
        "Gather": _lower_gather,
        "Pad": _lower_pad,
    }
    checks = {"Slice": _check_slice, "Pad": _check_pad}


# ---------------------------------------------------------------- windows

Pads = list[tuple[int, int]]
AttrFn = Callable[[str], Any]


def _window_attr(op: GraphOp) -> AttrFn:
    """`op.attr`, except that a 1-D window's kernel_shape, strides, dilations and
    pads get a leading 1 (pads 0): a 1-D window lowers as a 2-D one over
    N x C x 1 x L."""
    if len(_shape(op.operands[0])) != 3:
        return op.attr

    def attr(name: str) -> Any:
        value = op.attr(name)
        if not value:
            return value
        if name in ("kernel_shape", "strides", "dilations"):
            return [1, *value]
        if name == "pads":
            return [0, value[0], 0, value[1]]
        return value

    return attr


def _unit_height(shape: Shape) -> Shape:
    """N x C x L -> N x C x 1 x L (other ranks unchanged)."""
    return (*shape[:2], 1, *shape[2:]) if len(shape) == 3 else shape


def _window_params(
    attr: AttrFn, spatial: Shape, kernel: Sequence[int]
) -> tuple[list[int], list[int], Pads]:
    """Strides, dilations and (begin, end) pads of a window, auto_pad resolved."""
    strides = attr("strides") or [1] * len(spatial)
    dilations = attr("dilations") or [1] * len(spatial)
    auto_pad = attr("auto_pad")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads: Pads = []
        for n, k, s, d in zip(spatial, kernel, strides, dilations):
            total = max(0, (-(-n // s) - 1) * s + (k - 1) * d + 1 - n)
            small = total // 2
            pads.append(
                (small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small)
            )
    elif auto_pad == "VALID":
        pads = [(0, 0)] * len(spatial)
    else:
        flat = attr("pads") or [0] * (2 * len(spatial))
        pads = list(zip(flat[: len(spatial)], flat[len(spatial) :]))
    return strides, dilations, pads


def _pad_spatial(e: Emitter, x: SSAValue, pads: Pads, value: float) -> SSAValue:
    return e.pad(x, [0, 0, *[p[0] for p in pads]], [0, 0, *[p[1] for p in pads]], value)


def _conv_generic(
    e: Emitter, x: SSAValue, w: SSAValue, init: SSAValue, strides: Sequence[int],
    dilations: Sequence[int], groups: int,
) -> SSAValue:  # fmt: skip
    """An N-D convolution of the padded `x` as one generic over (n, f, o..., c,
    k...): out[n, f, o...] += x[n, channel, o*s + k*d...] * w[f, c, k...], with
    channel = (f floordiv (F / groups)) * (C / groups) + c, as Conv2DOp.generalize."""
    filters, group_channels, *kernel = _shape(w)
    s = len(kernel)
    count = 2 * s + 3
    n, f, c = _dim(0), _dim(1), _dim(2 + s)
    outs = [_dim(2 + i) for i in range(s)]
    ks = [_dim(3 + s + i) for i in range(s)]
    channel = c if groups == 1 else (f // (filters // groups)) * group_channels + c
    reads = [o * st + k * d for o, k, st, d in zip(outs, ks, strides, dilations)]
    maps = [_map(count, [n, channel, *reads]), _map(count, [f, c, *ks]),
            _map(count, [n, f, *outs])]  # fmt: skip
    iterators = [PARALLEL] * (2 + s) + [REDUCTION] * (1 + s)
    return e.generic([x, w], [init], maps, iterators,
                     lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))])[0]  # fmt: skip


def _lower_conv(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """pad + fill 0 + `tensor.conv2d` (+ a generic adding the bias per channel).
    1-D: reshaped to 2-D (N x C x 1 x L, F x C x 1 x K) and back; 3-D: one
    generic instead of the named op."""
    x, w = op.operand_group("X")[0], op.operand_group("W")[0]
    out, t = _shape(op.results[0]), _elem(x)
    x, w = e.reshape(x, _unit_height(_shape(x))), e.reshape(w, _unit_height(_shape(w)))
    shape = _unit_height(out)
    strides, dilations, pads = _window_params(_window_attr(op), _shape(x)[2:], _shape(w)[2:])
    padded, init = _pad_spatial(e, x, pads, 0), e.fill(0, shape, t)
    groups = op.attr("group")
    if len(shape) == 4:
        props = {"strides": _int_array(strides), "dilations": _int_array(dilations),
                 "groups": IntegerAttr(groups, i64)}  # fmt: skip
        y = e.value(
            tdialect.Conv2DOp.build(
                operands=[padded, w, init], result_types=[TensorType(t, list(shape))],
                properties=props,
            )
        )  # fmt: skip
    else:
        y = _conv_generic(e, padded, w, init, strides, dilations, groups)
    bias = op.operand_group("B")
    if bias:
        maps = [_identity(len(shape)), _dims_map(len(shape), [1])]
        y = e.parallel([y, bias[0]], shape, t, lambda b, a: b.add(a[0], a[1]), maps=maps)
    return [e.reshape(y, out)]


def _pool_padding(attr: AttrFn, spatial: Shape) -> tuple[list[int], list[int], Pads, Pads]:
    """Strides, dilations, the explicit pads, and the pads that also make room
    for every ceil_mode window (extra high padding)."""
    kernel = attr("kernel_shape")
    strides, dilations, pads = _window_params(attr, spatial, kernel)
    ceil_mode = bool(attr("ceil_mode")) and attr("auto_pad") == "NOTSET"
    full: Pads = []
    for n, k, s, d, (low, high) in zip(spatial, kernel, strides, dilations, pads):
        extent = (k - 1) * d + 1
        span = n + low + high - extent
        count = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (count - 1) * s >= n + low:
            count -= 1  # the last window must start inside the input or its low padding
        full.append((low, max(high, (count - 1) * s + extent - n - low)))
    return strides, dilations, pads, full


def average_pool_counts(
    spatial: Shape, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
    pads: Pads, full: Pads, count_include_pad: bool,
) -> np.ndarray:  # fmt: skip
    """How many elements each output window averages: the input's, plus the
    explicit padding's when count_include_pad, never the ceil_mode overhang."""
    mask = np.pad(np.ones(spatial), pads, constant_values=float(count_include_pad))
    mask = np.pad(mask, [(0, f[1] - p[1]) for f, p in zip(full, pads)])
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    windows = sliding_window_view(mask, extents)
    steps = (*[slice(None, None, s) for s in strides], *[slice(None, None, d) for d in dilations])
    return windows[steps].sum(axis=tuple(range(len(spatial), 2 * len(spatial))))


def _pool_generic(
    e: Emitter, x: SSAValue, init: SSAValue, kind: str, kernel: Sequence[int],
    strides: Sequence[int], dilations: Sequence[int],
) -> SSAValue:  # fmt: skip
    """An N-D pooling of the padded `x` as one generic over (n, c, o..., k...),
    with a window-shaped `tensor.empty` giving the kernel dims their extent (as
    Pool2DOp.generalize)."""
    s = len(kernel)
    count = 2 + 2 * s
    outs = [_dim(2 + i) for i in range(s)]
    ks = [_dim(2 + s + i) for i in range(s)]
    reads = [o * st + k * d for o, k, st, d in zip(outs, ks, strides, dilations)]
    t = _elem(x)
    window = e.empty(kernel, t)
    maps = [_map(count, [_dim(0), _dim(1), *reads]), _map(count, ks),
            _map(count, [_dim(0), _dim(1), *outs])]  # fmt: skip
    iterators = [PARALLEL] * (2 + s) + [REDUCTION] * s
    body = tdialect.reduce_body(t, kind, 3)
    return e.value(tdialect.GenericOp([x, window], [init], maps, iterators, body))


def _lower_pool(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """pad (lowest value for max, 0 for average) + `tensor.pool2d`; averages are
    divided by the window size, or by a constant of per-position counts.
    1-D: reshaped to N x C x 1 x L and back; 3-D: one generic instead of the
    named op."""
    x = op.operands[0]
    t, out = _elem(x), _shape(op.results[0])
    x, shape = e.reshape(x, _unit_height(_shape(x))), _unit_height(out)
    attr = _window_attr(op)
    strides, dilations, pads, full = _pool_padding(attr, _shape(x)[2:])
    is_max = op.SPEC.onnx_type == "MaxPool"
    kind = "max" if is_max else "sum"
    low = _lowest(t) if is_max else 0
    kernel = attr("kernel_shape")
    padded, init = _pad_spatial(e, x, full, low), e.fill(low, shape, t)
    if len(shape) == 4:
        props = {"kind": StringAttr(kind), "kernel": _int_array(kernel),
                 "strides": _int_array(strides), "dilations": _int_array(dilations)}  # fmt: skip
        y = e.value(
            tdialect.Pool2DOp.build(
                operands=[padded, init], result_types=[TensorType(t, list(shape))],
                properties=props,
            )
        )  # fmt: skip
    else:
        y = _pool_generic(e, padded, init, kind, kernel, strides, dilations)
    if not is_max:
        y = _divide_by_counts(e, y, attr, _shape(x)[2:], kernel, strides, dilations, pads, full)
    return [e.reshape(y, out)]


def _divide_by_counts(
    e: Emitter, y: SSAValue, attr: AttrFn, spatial: Shape, kernel: Sequence[int],
    strides: Sequence[int], dilations: Sequence[int], pads: Pads, full: Pads,
) -> SSAValue:  # fmt: skip
    """Window sums divided by the window size, or by a constant of per-position
    counts when windows see different numbers of elements."""
    shape, t = _shape(y), _elem(y)
    counts = average_pool_counts(spatial, kernel, strides, dilations, pads, full,
                                 bool(attr("count_include_pad")))  # fmt: skip
    if np.all(counts == counts.flat[0]):
        size = float(counts.flat[0])
        return e.parallel([y], shape, t, lambda b, a: b.div(a[0], b.const(size, t)))
    count_tensor = e.constant(counts.astype(np.float32))
    maps = [_identity(len(shape)), _dims_map(len(shape), range(2, len(shape)))]

    def divide(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.div(a[0], b.convert(a[1], t))

    return e.parallel([y, count_tensor], shape, t, divide, maps=maps)


def _lower_global_pool(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A reduction over the spatial dims (then a division for the average)."""
    x = op.operands[0]
    shape, t = _shape(x), _elem(x)
    axes = range(2, len(shape))
    if op.SPEC.onnx_type == "GlobalMaxPool":
        y = e.reduction(x, axes, _lowest(t), t, lambda b, a: b.max(a[1], a[0]))
    else:
        total = e.reduction(x, axes, 0, t, lambda b, a: b.add(a[1], a[0]))
        size = math.prod(shape[2:])
        y = e.parallel([total], shape[:2], t, lambda b, a: b.div(a[0], b.const(size, t)))
    return [e.reshape(y, _shape(op.results[0]))]


class WindowPattern(FamilyPattern):
    """Convolution and pooling."""

    lowerings = {"Conv": _lower_conv, "MaxPool": _lower_pool, "AveragePool": _lower_pool,
                 "GlobalAveragePool": _lower_global_pool,
                 "GlobalMaxPool": _lower_global_pool}  # fmt: skip


# ----------------------------------------------------------- contractions


def _lower_gemm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Transposes as copy generics, `tensor.matmul`, then alpha * AB + beta * C."""
    a, b = op.operand_group("A")[0], op.operand_group("B")[0]
    c = op.operand_group("C")
    if op.attr("transA"):
        a = _transpose(e, a, (1, 0))
    if op.attr("transB"):
        b = _transpose(e, b, (1, 0))
    y = _matmul(e, a, b)
    alpha, beta = op.attr("alpha"), op.attr("beta")
    if alpha == 1.0 and not c:
        return [y]
    t = _elem(y)

    def epilogue(bd: Body, args: list[SSAValue]) -> SSAValue:
        value = args[0] if alpha == 1.0 else bd.mul(args[0], bd.const(alpha, t))
        if not c:
            return value
        addend = args[1] if beta == 1.0 else bd.mul(args[1], bd.const(beta, t))
        return bd.add(value, addend)

    return [e.parallel([y, *c], _shape(y), t, epilogue)]


def _check_gemm(op: GraphOp) -> str | None:
    scaled = op.attr("alpha") != 1.0 or (op.operand_group("C") and op.attr("beta") != 1.0)
    if scaled and not is_float(_elem(op.operands[0])):
        return "alpha or beta on integer matrices"
    return None


def _broadcast_to(e: Emitter, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    if _shape(x) == tuple(shape):
        return x
    return e.parallel([x], shape, _elem(x), _copy)


def _lower_matmul(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """NumPy matmul: 1-D operands become (1, K) / (K, 1); a 2-D B folds A's batch
    dims into its rows; otherwise both operands are broadcast to the common batch
    dims, reshaped to rank 3, multiplied and reshaped back."""
    a, b = op.operand_group("A")[0], op.operand_group("B")[0]
    out = _shape(op.results[0])
    if len(_shape(a)) == 1:
        a = e.reshape(a, (1, _shape(a)[0]))
    if len(_shape(b)) == 1:
        b = e.reshape(b, (_shape(b)[0], 1))
    sa, sb = _shape(a), _shape(b)
    if len(sb) == 2:
        rows = e.reshape(a, (math.prod(sa[:-1]), sa[-1]))
        return [e.reshape(_matmul(e, rows, b), out)]
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    a = _broadcast_to(e, a, (*batch, *sa[-2:]))
    b = _broadcast_to(e, b, (*batch, *sb[-2:]))
    count = math.prod(batch)
    a3, b3 = e.reshape(a, (count, *sa[-2:])), e.reshape(b, (count, *sb[-2:]))
    return [e.reshape(_matmul(e, a3, b3), out)]


class ContractionPattern(FamilyPattern):
    """Gemm and MatMul."""

    lowerings = {"Gemm": _lower_gemm, "MatMul": _lower_matmul}
    checks = {"Gemm": _check_gemm}


# ----------------------------------------------------------- normalisation


def _lower_batch_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """(x - mean) / sqrt(var + eps) * scale + B, per channel (dim 1)."""
    x = op.operands[0]
    shape, t = _shape(x), _elem(x)
    eps = op.attr("epsilon")

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        v, scale, bias, mean, var = a
        std = b.math(xmath.SqrtOp, b.add(var, b.const(eps, t)))
        return b.add(b.mul(b.div(b.sub(v, mean), std), scale), bias)

    channel = _dims_map(len(shape), [1])
    maps = [_identity(len(shape)), *[channel] * 4]
    return [e.parallel(list(op.operands), shape, t, body, maps=maps)]


def _moments(
    e: Emitter, x: SSAValue, axes: Sequence[int], ct: Attribute
) -> tuple[SSAValue, SSAValue]:
    """Mean and (biased) variance of `x` over `axes`, in type `ct`: a sum
    reduction, then a reduction of squared deviations from the mean."""
    shape = _shape(x)
    kept = [d for i, d in enumerate(shape) if i not in axes]
    count = math.prod(shape[i] for i in axes)

    def divide(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.div(a[0], b.const(count, ct))

    def deviation(b: Body, a: list[SSAValue]) -> SSAValue:
        d = b.sub(b.convert(a[0], ct), a[1])
        return b.add(a[2], b.mul(d, d))

    total = e.reduction(x, axes, 0, ct, lambda b, a: b.add(a[1], b.convert(a[0], ct)))
    mean = e.parallel([total], kept, ct, divide)
    variance = e.parallel([e.reduction(x, axes, 0, ct, deviation, [mean])], kept, ct, divide)
    return mean, variance


def _normalize(b: Body, v: SSAValue, mean: SSAValue, var: SSAValue, eps: float) -> SSAValue:
    std = b.math(xmath.SqrtOp, b.add(var, b.const(eps, var.type)))
    return b.div(b.sub(v, mean), std)


def _lower_instance_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Moments over the spatial dims per (N, C); then scale and B per channel."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    mean, var = _moments(e, x, list(range(2, rank)), t)
    eps = op.attr("epsilon")

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        v, m, s2, scale, bias = a
        return b.add(b.mul(_normalize(b, v, m, s2, eps), scale), bias)

    stats, channel = _dims_map(rank, [0, 1]), _dims_map(rank, [1])
    inputs = [x, mean, var, *op.operands[1:]]
    maps = [_identity(rank), stats, stats, channel, channel]
    return [e.parallel(inputs, shape, t, body, maps=maps)]


def _lower_layer_norm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Moments over dims [axis, rank), then * Scale (+ B), both broadcast. The
    statistics are computed in f32 for narrower inputs when stash_type is 1."""
    x = op.operand_group("X")[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    ct = f32 if op.attr("stash_type") == 1 and _bits(t) < 32 else t
    mean, var = _moments(e, x, list(range(axis, rank)), ct)
    eps = op.attr("epsilon")
    params = [*op.operand_group("Scale"), *op.operand_group("B")]

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        v, m, s2, *weights = a
        y = b.mul(_normalize(b, b.convert(v, ct), m, s2, eps), b.convert(weights[0], ct))
        if len(weights) > 1:
            y = b.add(y, b.convert(weights[1], ct))
        return b.convert(y, t)

    stats = _dims_map(rank, range(axis))
    maps = [_identity(rank), stats, stats, *[broadcast_map(_shape(p), shape) for p in params]]
    return [e.parallel([x, mean, var, *params], shape, t, body, maps=maps)]


def _lower_lrn(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Zero-pad the channels, sum squares over a window dim (a reduction dim d_n
    read as channel d1 + d_n; a `size`-element constant, whose values the body
    ignores, gives d_n its extent), then x / (bias + alpha/size * sum)^beta."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    size = op.attr("size")
    low = (size - 1) // 2
    padded = e.pad(x, [0, low] + [0] * (rank - 2), [0, size - 1 - low] + [0] * (rank - 2), 0)
    window = e.constant(np.ones(size, dtype=np.bool_))
    d = [_dim(i) for i in range(rank + 1)]
    maps = [_map(rank + 1, [d[0], d[1] + d[rank], *d[2:rank]]),
            _map(rank + 1, [d[rank]]), _dims_map(rank + 1, range(rank))]  # fmt: skip
    iterators = [PARALLEL] * rank + [REDUCTION]
    init = e.fill(0, shape, t)
    squares = e.generic([padded, window], [init], maps, iterators,
                        lambda b, a: [b.add(a[2], b.mul(a[0], a[0]))])[0]  # fmt: skip
    alpha, beta, bias = op.attr("alpha"), op.attr("beta"), op.attr("bias")

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        base = b.add(b.const(bias, t), b.mul(b.const(alpha / size, t), a[1]))
        return b.div(a[0], b.math(xmath.PowFOp, base, b.const(beta, t)))

    return [e.parallel([x, squares], shape, t, body)]


def _lower_softmax(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """m = max over the axis; s = sum of exp(x - m); exp(x - m) / s for Softmax,
    (x - m) - log(s) for LogSoftmax."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    peak = e.reduction(x, [axis], -math.inf, t, lambda b, a: b.max(a[1], a[0]))

    def accumulate(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.add(a[2], b.exp(b.sub(a[0], a[1])))

    total = e.reduction(x, [axis], 0, t, accumulate, [peak])
    log = op.SPEC.onnx_type == "LogSoftmax"

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        shifted = b.sub(a[0], a[1])
        if log:
            return b.sub(shifted, b.math(xmath.LogOp, a[2]))
        return b.div(b.exp(shifted), a[2])

    kept = _dims_map(rank, [i for i in range(rank) if i != axis])
    return [e.parallel([x, peak, total], shape, t, body, maps=[_identity(rank), kept, kept])]


class NormalizationPattern(FamilyPattern):
    """Batch, instance and layer normalisation, LRN, Softmax and LogSoftmax."""

    lowerings = {
        "BatchNormalization": _lower_batch_norm,
        "InstanceNormalization": _lower_instance_norm,
        "LayerNormalization": _lower_layer_norm,
        "LRN": _lower_lrn,
        "Softmax": _lower_softmax,
        "LogSoftmax": _lower_softmax,
    }


# -------------------------------------------------------------- reductions


def _itself(b: Body, value: SSAValue) -> SSAValue:
    return value


@dataclass(frozen=True)
class Reduction:
    """A ReduceX op: the neutral element, the value each element contributes,
    how it combines with the accumulator, and a final step (given the count)."""

    neutral: Callable[[Attribute], float]
    combine: Callable[[Body, SSAValue, SSAValue], SSAValue]
    contribution: Callable[[Body, SSAValue], SSAValue] = _itself
    finish: Callable[[Body, SSAValue, int], SSAValue] | None = None


def _square(b: Body, v: SSAValue) -> SSAValue:
    return b.mul(v, v)


def _divide_by_count(b: Body, v: SSAValue, count: int) -> SSAValue:
    return b.div(v, b.const(count, v.type))


def _square_root(b: Body, v: SSAValue, count: int) -> SSAValue:
    """sqrt; integers go through f64 and truncate back."""
    if is_float(v.type):
        return b.math(xmath.SqrtOp, v)
    return b.convert(b.math(xmath.SqrtOp, b.convert(v, f64)), v.type)


_NAMED_REDUCTIONS = {Body.add: "add", Body.mul: "mul", Body.max: "max", Body.min: "min"}
"""Combines that `tensor.reduce` names (when each element contributes itself)."""

REDUCTIONS: dict[str, Reduction] = {
    "ReduceSum": Reduction(lambda t: 0, Body.add),
    "ReduceMean": Reduction(lambda t: 0, Body.add, finish=_divide_by_count),
    "ReduceMax": Reduction(_lowest, Body.max),
    "ReduceMin": Reduction(_highest, Body.min),
    "ReduceProd": Reduction(lambda t: 1, Body.mul),
    "ReduceL1": Reduction(lambda t: 0, Body.add, Body.abs),
    "ReduceL2": Reduction(lambda t: 0, Body.add, _square, _square_root),
    "ReduceSumSquare": Reduction(lambda t: 0, Body.add, _square),
}


def _reduced_axes(op: GraphOp) -> list[int]:
    """The normalized axes (all of them when absent or empty, unless
    noop_with_empty_axes, which reduces none)."""
    rank = len(_shape(op.operands[0]))
    group = op.operand_group("axes")
    axes = _int_constant(group[0]) if group else []
    if not axes:
        return [] if op.attr("noop_with_empty_axes") else list(range(rank))
    return sorted({_normalize_axis(a, rank) for a in axes})


def _lower_reduce(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """fill(neutral) + one reduction generic (+ a generic for the final step)."""
    x = op.operand_group("data")[0]
    shape, t = _shape(x), _elem(x)
    axes = _reduced_axes(op)
    spec = REDUCTIONS[op.SPEC.onnx_type]

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        return spec.combine(b, a[1], spec.contribution(b, a[0]))

    kind = _NAMED_REDUCTIONS.get(spec.combine) if spec.contribution is _itself else None
    if kind is not None and axes:
        kept = [d for i, d in enumerate(shape) if i not in axes]
        reduce = tdialect.ReduceOp.build(
            operands=[x, e.fill(spec.neutral(t), kept, t)], result_types=[TensorType(t, kept)],
            properties={"dimensions": tdialect._int_array(axes), "kind": StringAttr(kind)},
        )  # fmt: skip
        y = e.value(reduce)
    else:
        y = e.reduction(x, axes, spec.neutral(t), t, body)
    if spec.finish is not None:
        count, finish = math.prod(shape[i] for i in axes), spec.finish
        y = e.parallel([y], _shape(y), t, lambda b, a: finish(b, a[0], count))
    return [e.reshape(y, _shape(op.results[0]))]


def _lower_reduce_log_sum_exp(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """m = max (0 where not finite); m + log(sum of exp(x - m))."""
    x = op.operand_group("data")[0]
    t = _elem(x)
    axes = _reduced_axes(op)
    peak = e.reduction(x, axes, -math.inf, t, lambda b, a: b.max(a[1], a[0]))

    def finite(b: Body, a: list[SSAValue]) -> SSAValue:
        is_finite = b.cmpf("olt", b.abs(a[0]), b.const(math.inf, t))
        return b.select(is_finite, a[0], b.const(0, t))

    shift = e.parallel([peak], _shape(peak), t, finite)

    def accumulate(b: Body, a: list[SSAValue]) -> SSAValue:
        return b.add(a[2], b.exp(b.sub(a[0], a[1])))

    total = e.reduction(x, axes, 0, t, accumulate, [shift])
    y = e.parallel([shift, total], _shape(peak), t,
                   lambda b, a: b.add(a[0], b.math(xmath.LogOp, a[1])))  # fmt: skip
    return [e.reshape(y, _shape(op.results[0]))]


def _lower_arg_reduce(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """A reduction with two outputs, the best value so far and its index; the
    index comes from an iota constant indexed by the reduced dim. NaN counts as
    the extreme (first NaN, or last with select_last_index), as NumPy does."""
    x = op.operands[0]
    shape, t, rank = _shape(x), _elem(x), len(_shape(x))
    axis = _normalize_axis(op.attr("axis"), rank)
    is_max, last = op.SPEC.onnx_type == "ArgMax", bool(op.attr("select_last_index"))
    relation = ("ge" if last else "gt") if is_max else ("le" if last else "lt")
    kept = [d for i, d in enumerate(shape) if i != axis]
    kept_map = _dims_map(rank, [i for i in range(rank) if i != axis])
    iota = e.constant(np.arange(shape[axis], dtype=np.int64))
    outputs = [e.fill(_lowest(t) if is_max else _highest(t), kept, t), e.fill(0, kept, i64)]

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        value, index, best, best_index = a
        take = b.cmp(relation, value, best)
        if is_float(t):
            nan = b.is_nan(value)
            take = b.or_(take, nan if last else b.and_(nan, b.not_(b.is_nan(best))))
        return [b.select(take, value, best), b.select(take, index, best_index)]

    maps = [_identity(rank), _dims_map(rank, [axis]), kept_map, kept_map]
    iterators = [REDUCTION if i == axis else PARALLEL for i in range(rank)]
    _, indices = e.generic([x, iota], outputs, maps, iterators, body)
    return [e.reshape(indices, _shape(op.results[0]))]


def _check_reduce(op: GraphOp) -> str | None:
    if not _constant_operands(op, "axes"):
        return "axes must be a constant"
    if op.SPEC.onnx_type == "ReduceLogSumExp" and not is_float(_elem(op.operands[0])):
        return "integer operands"
    return None


class ReductionPattern(FamilyPattern):
    """ReduceX (table REDUCTIONS), ReduceLogSumExp, ArgMax and ArgMin."""

    lowerings = {
        **{name: _lower_reduce for name in REDUCTIONS},
        "ReduceLogSumExp": _lower_reduce_log_sum_exp,
        "ArgMax": _lower_arg_reduce,
        "ArgMin": _lower_arg_reduce,
    }
    checks = {name: _check_reduce for name in (*REDUCTIONS, "ReduceLogSumExp")}


# -------------------------------------------------------------------- pass

FAMILIES: tuple[type[FamilyPattern], ...] = (
    ElementwisePattern,
    ShapeQueryPattern,
    DataMovementPattern,
    WindowPattern,
    ContractionPattern,
    NormalizationPattern,
    ReductionPattern,
)


def lowerable_op_types() -> set[str]:
    """The ONNX op types this pass lowers (some only under conditions)."""
    return {name for family in FAMILIES for name in family.lowerings}


def unsupported_reason(op: GraphOp) -> str | None:
    """Why `op` cannot be lowered, or None."""
    for family in FAMILIES:
        if op.SPEC.onnx_type in family.lowerings:
            return family.unsupported(op)
    return "no lowering yet"


def check_lowerable(module: Operation) -> None:
    """Raises a DiagnosticException naming the first op with a dynamic shape, or
    listing every op that cannot be lowered, with the reasons."""
    problems: dict[str, list[str]] = {}
    for op in module.walk():
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
            continue
        for value in (*op.operands, *op.results):
            if DYNAMIC in _shape(value):
                raise DiagnosticException(
                    f"{PASS_NAME}: {op.name} has dynamic shape {value.type}; the CPU pipeline "
                    "needs static shapes"
                )
        reason = unsupported_reason(op)
        if reason is not None and reason not in problems.get(op.name, []):
            problems.setdefault(op.name, []).append(reason)
    if problems:
        listing = "; ".join(f"{name} ({', '.join(reasons)})" for name, reasons in
                            sorted(problems.items()))  # fmt: skip
        count = len(problems)
        raise DiagnosticException(
            f"{PASS_NAME}: cannot lower {count} op{'s' if count > 1 else ''}: {listing}"
        )


@dataclass(frozen=True)
class ConvertGraphToTensorPass(ModulePass):
    """Lowers every `graph` op but `graph.constant` to `tensor`, `arith` and `math`
    ops (see the module docstring); unused constants are removed afterwards."""

    name = "convert-graph-to-tensor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_lowerable(op)
        patterns = GreedyRewritePatternApplier([family() for family in FAMILIES])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
        dce(op)
