"""Graph-to-tensor lowering of the contractions family: Gemm, MatMul, Einsum, Det."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import bf16, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineMap

from ember.dialects.graph import (
    DetOp,
    EinsumOp,
    GemmOp,
    GraphOp,
    MatMulOp,
    constant_value_of,
)
from ember.dialects.graph.ops_nn import einsum_terms
from ember.dialects.graph.shapes import broadcast_shapes
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.graph.types import is_float
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    _copy,
    _dim,
    _dims_map,
    _elem,
    _map,
    _matmul,
    _shape,
    _transpose,
)
from ember.passes.graph.widen_accumulators import keeps_half_weights

# ----------------------------------------------------------- contractions


def _lower_gemm(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Transposes as copy generics, `linalg.matmul`, then alpha * AB + beta * C."""
    a, b = op.operand_group("A")[0], op.operand_group("B")[0]
    c = op.operand_group("C")
    if op.attr("transA"):
        a = _transpose(e, a, (1, 0))
    if op.attr("transB"):
        b = _transpose(e, b, (1, 0))
    half = _elem(a) if keeps_half_weights(op) else None
    y = _half_weights_product(e, a, b) if half else _matmul(e, a, b)
    alpha, beta = op.attr("alpha"), op.attr("beta")
    if alpha == 1.0 and not c:
        return [_rounded(e, y, half) if half else y]
    t = _elem(y)
    if half:  # alpha * AB + beta * C in f32, rounded once
        c = [e.parallel(c, _shape(c[0]), t, lambda bd, x: bd.convert(x[0], t))] if c else []

    def epilogue(bd: Body, args: list[SSAValue]) -> SSAValue:
        value = args[0] if alpha == 1.0 else bd.mul(args[0], bd.const(alpha, t))
        if not c:
            return value
        addend = args[1] if beta == 1.0 else bd.mul(args[1], bd.const(beta, t))
        return bd.add(value, addend)

    result = e.parallel([y, *c], _shape(y), t, epilogue)
    return [_rounded(e, result, half) if half else result]


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
        if keeps_half_weights(op):
            product = _half_weights_product(e, rows, b)
            return [e.reshape(_rounded(e, product, _elem(a)), out)]
        return [e.reshape(_matmul(e, rows, b), out)]
    batch = broadcast_shapes([sa[:-2], sb[:-2]])
    a = _broadcast_to(e, a, (*batch, *sa[-2:]))
    b = _broadcast_to(e, b, (*batch, *sb[-2:]))
    count = math.prod(batch)
    a3, b3 = e.reshape(a, (count, *sa[-2:])), e.reshape(b, (count, *sb[-2:]))
    return [e.reshape(_matmul(e, a3, b3), out)]


def _half_weights_product(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """(M, K) x (K, N) in a half type into f32, B constant: on bfloat16 pairs
    (`_bf16_pairs_product`), or for float16 one generic over (m, n, k)
    summing `extf(A[m, k]) * extf(B[k, n])` in f32, which a micro-kernel
    runs on float16 vectors widened in registers."""
    if _elem(a) == bf16:
        return _bf16_pairs_product(e, a, b)
    m, n = _shape(a)[0], _shape(b)[1]
    init = e.fill(0, (m, n), f32)
    maps = [_dims_map(3, [0, 2]), _dims_map(3, [2, 1]), _dims_map(3, [0, 1])]
    return e.generic([a, b], [init], maps, [PARALLEL, PARALLEL, REDUCTION], _widened_product)[0]


def _widened_product(bd: Body, x: list[SSAValue]) -> list[SSAValue]:
    """`out + extf(a) * extf(b)` in f32."""
    wide = [bd.emit(arith.ExtFOp(v, f32)) for v in x[:2]]
    return [bd.add(x[2], bd.mul(*wide))]


def _bf16_pairs_product(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """(M, K) x (K, N) in bfloat16 into f32, K even, B constant: B laid out as
    pairs of rows, (K/2, N, 2), and one generic over (m, n, k2, p) summing
    `A[m, 2 k2 + p] * B[k2, n, p]` in f32 (the operands widened by
    `arith.extf`, exactly). A micro-kernel runs it as `loop.bf16_dot`
    (`vdpbf16ps`), a pair of k per instruction."""
    weights = constant_value_of(b)
    assert weights is not None
    k, n = weights.shape
    pairs = e.constant(np.ascontiguousarray(weights.reshape(k // 2, 2, n).transpose(0, 2, 1)))
    m = _shape(a)[0]
    init = e.fill(0, (m, n), f32)
    maps = [
        _map(4, [_dim(0), _dim(2) * 2 + _dim(3)]),
        _dims_map(4, [2, 1, 3]),
        _dims_map(4, [0, 1]),
    ]
    iterators = [PARALLEL, PARALLEL, REDUCTION, REDUCTION]
    return e.generic([a, pairs], [init], maps, iterators, _widened_product)[0]


def _rounded(e: Emitter, y: SSAValue, half: Attribute) -> SSAValue:
    """`y` (f32) rounded to the `half` type."""
    return e.parallel([y], _shape(y), half, lambda bd, x: bd.convert(x[0], half))


def _check_matmul(op: GraphOp) -> str | None:
    """Batch dims broadcast at run time are not lowered: a symbol against a
    different dim may or may not be 1."""
    sa, sb = (_shape(v)[:-2] for v in op.operands)
    for a, b in zip(reversed(sa), reversed(sb)):
        if (isinstance(a, SymExpr) or isinstance(b, SymExpr)) and a != b:
            return f"batch dim {a} broadcast against {b}"
    return None


def _lower_einsum(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """One generic over every subscript: each operand read through its
    subscripts (a repeated one reads a diagonal; a size-1 dim that broadcasts
    reads index 0), the product of the operands added into a zero-filled
    result indexed by the result's subscripts; the other subscripts are
    reductions."""
    operands, result = list(op.operands), op.results[0]
    shapes = [_shape(v) for v in operands]
    terms, output = einsum_terms(op.attr("equation"), [len(s) for s in shapes])
    letters = sorted(set("".join(terms)), key=lambda c: (c not in output, output.find(c), c))
    sizes = {c: d for term, shape in zip(terms, shapes) for c, d in zip(term, shape) if d != 1}
    position = {c: i for i, c in enumerate(letters)}

    def read(term: str, shape: Sequence[Dim]) -> AffineMap:
        return _map(len(letters), [0 if d == 1 and sizes.get(c, 1) != 1 else _dim(position[c])
                                   for c, d in zip(term, shape)])  # fmt: skip

    maps = [
        *(read(t, s) for t, s in zip(terms, shapes)),
        _dims_map(len(letters), range(len(output))),
    ]
    iterators = [PARALLEL if c in output else REDUCTION for c in letters]
    t = _elem(result)

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        product = a[0]
        for factor in a[1:-1]:
            product = b.mul(product, factor)
        return [b.add(a[-1], product)]

    return e.generic(operands, [e.fill(0, _shape(result), t)], maps, iterators, body)


MAX_DETERMINANT_SIZE = 5
"""Det expands its matrices' permutations (5! = 120 products at most)."""


def _lower_det(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """Leibniz's formula: one parallel generic over the batch dims reading each
    matrix element at constant indices, summing the signed products of every
    permutation."""
    x = op.operands[0]
    shape, t = _shape(x), _elem(x)
    size, batch = shape[-1], len(shape) - 2
    assert isinstance(size, int)
    dims = [_dim(d) for d in range(batch)]
    cells = [(i, j) for i in range(size) for j in range(size)]
    maps = [_map(batch, [*dims, i, j]) for i, j in cells]

    def body(b: Body, a: list[SSAValue]) -> SSAValue:
        total = b.const(0, t)
        for perm in itertools.permutations(range(size)):
            term = a[cells.index((0, perm[0]))]
            for i in range(1, size):
                term = b.mul(term, a[cells.index((i, perm[i]))])
            inversions = sum(perm[i] > perm[j] for i in range(size) for j in range(i + 1, size))
            total = b.sub(total, term) if inversions % 2 else b.add(total, term)
        return total

    return [e.parallel([x] * len(cells), shape[:-2], t, body, maps=maps)]


def _check_det(op: GraphOp) -> str | None:
    size = _shape(op.operands[0])[-1]
    if not isinstance(size, int) or size > MAX_DETERMINANT_SIZE:
        return f"matrices larger than {MAX_DETERMINANT_SIZE} x {MAX_DETERMINANT_SIZE}"
    return None


class ContractionPattern(FamilyPattern):
    """Gemm, MatMul, Einsum and Det."""

    lowerings = {GemmOp: _lower_gemm, MatMulOp: _lower_matmul, EinsumOp: _lower_einsum,
                 DetOp: _lower_det}  # fmt: skip
    checks = {GemmOp: _check_gemm, MatMulOp: _check_matmul, DetOp: _check_det}
    symbolic = frozenset({GemmOp, MatMulOp})
