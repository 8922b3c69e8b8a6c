"""The `tensor` dialect: structured ops on value tensors.

This is the level where an op says *what* is computed, as loops would see it,
but not yet *how* (tiles, order, vector width). Two kinds of ops:

- `tensor.generic`: the general structured op. It iterates over a space of
  dims (`iterator_types`: "parallel" or "reduction"); `indexing_maps` say
  which element of each input and output a point of that space touches; the
  body computes one output element from one element of each operand.
  Outputs are also inputs (their current value is the body's last block
  arguments), which is how reductions accumulate.
- Named ops with fixed semantics that `generalize()` into a generic:
  `tensor.matmul`, `tensor.conv2d`, `tensor.pool2d`, `tensor.transpose`,
  `tensor.broadcast`, `tensor.reduce`. They keep a handle for
  schedules that know their structure.

Data movement: `tensor.empty`, `tensor.fill`, `tensor.pad`,
`tensor.extract_slice`, `tensor.insert_slice`, `tensor.reshape`,
`tensor.concat`, and
`tensor.gather` (indices known only at run time).
Constants stay `graph.constant`. This dialect replaces xDSL's `tensor` in
Ember's context.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

PARALLEL = "parallel"
REDUCTION = "reduction"

FUSION_GROUP = "ember.fusion_group"
"""Discardable attribute (an integer) on the tensor ops, and then the loop nests,
that came from one `graph.fused` group: they become one kernel."""


def _ints(attr: DenseArrayBase) -> list[int]:
    return [int(v) for v in attr.get_values()]


def _int_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _shape(value: SSAValue | Attribute) -> tuple[int, ...]:
    value_type = value.type if isinstance(value, SSAValue) else value
    assert isinstance(value_type, TensorType)
    return tuple(value_type.get_shape())


# ------------------------------------------------------------------ generic


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a `tensor.generic` body with one scalar per output."""

    name = "tensor.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class GenericOp(IRDLOperation):
    """A structured computation over an iteration space (see the module doc)."""

    name = "tensor.generic"
    inputs = var_operand_def(TensorType)
    outputs = var_operand_def(TensorType)
    results_ = var_result_def(TensorType)
    indexing_maps = prop_def(ArrayAttr[AffineMapAttr])
    iterator_types = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
        indexing_maps: Sequence[AffineMap],
        iterator_types: Sequence[str],
        body: Region,
    ):
        super().__init__(
            operands=[list(inputs), list(outputs)],
            result_types=[[o.type for o in outputs]],
            properties={
                "indexing_maps": ArrayAttr([AffineMapAttr(m) for m in indexing_maps]),
                "iterator_types": ArrayAttr([StringAttr(t) for t in iterator_types]),
            },
            regions=[body],
        )

    @property
    def maps(self) -> list[AffineMap]:
        return [m.data for m in self.indexing_maps.data]

    @property
    def iterators(self) -> list[str]:
        return [t.data for t in self.iterator_types.data]

    def loop_bounds(self) -> list[int]:
        """The extent of each dim, read off an operand indexed by the bare dim."""
        bounds: list[int | None] = [None] * len(self.iterators)
        for operand, amap in zip([*self.inputs, *self.outputs], self.maps):
            for result, extent in zip(amap.results, _shape(operand)):
                if not isinstance(result, AffineDimExpr):
                    continue
                known = bounds[result.position]
                if known is not None and known != extent:
                    raise VerifyException(
                        f"tensor.generic: operands disagree on the extent of d{result.position} "
                        f"({known} vs {extent})"
                    )
                bounds[result.position] = extent
        if any(b is None for b in bounds):
            missing = [i for i, b in enumerate(bounds) if b is None]
            raise VerifyException(
                f"tensor.generic: dims {missing} are not the bare index of any operand dim"
            )
        return [b for b in bounds if b is not None]

    def verify_(self) -> None:
        operands = [*self.inputs, *self.outputs]
        if len(self.maps) != len(operands):
            raise VerifyException(
                f"tensor.generic: {len(self.maps)} indexing maps for {len(operands)} operands"
            )
        for iterator in self.iterators:
            if iterator not in (PARALLEL, REDUCTION):
                raise VerifyException(f"tensor.generic: unknown iterator type '{iterator}'")
        for index, (operand, amap) in enumerate(zip(operands, self.maps)):
            if amap.num_dims != len(self.iterators):
                raise VerifyException(
                    f"tensor.generic: map #{index} has {amap.num_dims} dims, the op iterates "
                    f"{len(self.iterators)}"
                )
            if len(amap.results) != len(_shape(operand)):
                raise VerifyException(
                    f"tensor.generic: map #{index} gives {len(amap.results)} indices for an "
                    f"operand of rank {len(_shape(operand))}"
                )
        for index, amap in enumerate(self.maps[len(self.inputs) :]):
            for result in amap.results:
                if not isinstance(result, AffineDimExpr):
                    raise VerifyException(f"tensor.generic: output map #{index} must be dims only")
                if self.iterators[result.position] != PARALLEL:
                    raise VerifyException(
                        f"tensor.generic: output map #{index} uses reduction dim d{result.position}"
                    )
        self._verify_extents(operands)
        block = self.body.block
        expected = [o.type.element_type for o in operands]  # type: ignore[attr-defined]
        if [a.type for a in block.args] != expected:
            raise VerifyException(
                "tensor.generic: body arguments must be the operands' element types "
                f"{[str(t) for t in expected]}"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or len(terminator.values) != len(self.outputs):
            raise VerifyException(
                "tensor.generic: body must end in tensor.yield of one value per output"
            )
        for value, output in zip(terminator.values, self.outputs):
            if value.type != output.type.element_type:  # type: ignore[attr-defined]
                raise VerifyException("tensor.generic: yielded types must match the outputs")

    def _verify_extents(self, operands: Sequence[SSAValue]) -> None:
        """Every index a map computes stays inside its operand's dim."""
        for index, amap in enumerate(self.maps):
            if amap.num_symbols:
                raise VerifyException(f"tensor.generic: map #{index} must not have symbols")
        bounds = self.loop_bounds()
        for index, (operand, amap) in enumerate(zip(operands, self.maps)):
            for axis, (expr, extent) in enumerate(zip(amap.results, _shape(operand))):
                low, high = index_range(expr, bounds)
                if low < 0 or high >= extent:
                    raise VerifyException(
                        f"tensor.generic: map #{index} indexes dim {axis} of operand #{index} "
                        f"(extent {extent}) from {low} to {high}"
                    )

    def print(self, printer: Printer) -> None:
        printer.print_string(" {indexing_maps = ")
        printer.print_attribute(self.indexing_maps)
        printer.print_string(", iterator_types = ")
        printer.print_attribute(self.iterator_types)
        printer.print_string("}")
        _print_ins_outs(printer, self.inputs, self.outputs)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)
        if self.results:
            printer.print_string(" -> ")
            printer.print_list(self.result_types, printer.print_attribute)
        _print_attributes(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> GenericOp:
        props = parser.parse_optional_attr_dict()
        inputs, outputs = _parse_ins_outs(parser)
        body = parser.parse_region()
        if parser.parse_optional_punctuation("->") is not None:
            declared = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if declared != [o.type for o in outputs]:
                parser.raise_error("tensor.generic: result types must be the outs types")
        op = cls.__new__(cls)
        IRDLOperation.__init__(
            op,
            operands=[inputs, outputs],
            result_types=[[o.type for o in outputs]],
            properties=props,
            attributes=_parse_attributes(parser),
            regions=[body],
        )
        return op


def _print_attributes(printer: Printer, op: IRDLOperation) -> None:
    """Discardable attributes (such as `ember.fusion_group`), after the op, in
    MLIR's `attributes {...}` form: the leading dict holds the properties."""
    if op.attributes:
        printer.print_string(" attributes ")
        printer.print_attr_dict(op.attributes)


def _parse_attributes(parser: Parser) -> dict[str, Attribute]:
    if parser.parse_optional_keyword("attributes") is None:
        return {}
    return parser.parse_optional_attr_dict()


def index_range(expr: AffineExpr, bounds: Sequence[int]) -> tuple[int, int]:
    """The smallest and largest value of `expr` over dims in [0, bound)."""
    if isinstance(expr, AffineDimExpr):
        return 0, bounds[expr.position] - 1
    if isinstance(expr, AffineConstantExpr):
        return expr.value, expr.value
    if not isinstance(expr, AffineBinaryOpExpr):
        raise VerifyException(f"tensor.generic: unsupported affine expression {expr}")
    (a, b), (c, d) = index_range(expr.lhs, bounds), index_range(expr.rhs, bounds)
    if expr.kind is AffineBinaryOpKind.Add:
        return a + c, b + d
    if expr.kind is AffineBinaryOpKind.Mul:
        products = [a * c, a * d, b * c, b * d]
        return min(products), max(products)
    if c != d or c <= 0:
        raise VerifyException(f"tensor.generic: {expr} must divide by a positive constant")
    if expr.kind is AffineBinaryOpKind.FloorDiv:
        return a // c, b // c
    return (a, b) if 0 <= a and b < c else (0, c - 1)  # Mod


def _print_ins_outs(
    printer: Printer, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]
) -> None:
    for keyword, values in (("ins", inputs), ("outs", outputs)):
        printer.print_string(f" {keyword}(")
        printer.print_list(values, printer.print_operand)
        if values:
            printer.print_string(" : ")
            printer.print_list([v.type for v in values], printer.print_attribute)
        printer.print_string(")")


def _parse_ins_outs(parser: Parser) -> tuple[list[SSAValue], list[SSAValue]]:
    groups: list[list[SSAValue]] = []
    for keyword in ("ins", "outs"):
        parser.parse_keyword(keyword)
        parser.parse_punctuation("(")
        unresolved: list[UnresolvedOperand] = []
        first = parser.parse_optional_unresolved_operand()
        if first is not None:
            unresolved.append(first)
            while parser.parse_optional_punctuation(","):
                unresolved.append(parser.parse_unresolved_operand())
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) != len(unresolved):
                parser.raise_error(f"{keyword}: {len(unresolved)} operands but {len(types)} types")
            groups.append([parser.resolve_operand(u, t) for u, t in zip(unresolved, types)])
        else:
            groups.append([])
        parser.parse_punctuation(")")
    return groups[0], groups[1]


def generic_body(arg_types: Sequence[Attribute]) -> tuple[Region, Block]:
    block = Block(arg_types=list(arg_types))
    return Region(block), block


# --------------------------------------------------------------- named ops


def _is_float(element_type: Attribute) -> bool:
    return not isinstance(element_type, IntegerType)


def multiply_accumulate_body(element_type: Attribute, operand_count: int) -> Region:
    """acc + a * b over the first two arguments (the rest are ignored)."""
    region, block = generic_body([element_type] * operand_count)
    a, b, acc = block.args[0], block.args[1], block.args[-1]
    mul = arith.MulfOp(a, b) if _is_float(element_type) else arith.MuliOp(a, b)
    add = arith.AddfOp(acc, mul) if _is_float(element_type) else arith.AddiOp(acc, mul)
    block.add_ops([mul, add, YieldOp(add.result)])
    return region


REDUCTION_KINDS: dict[str, tuple[type[IRDLOperation], ...]] = {
    # kind: (float op, signed integer op, unsigned integer op)
    "add": (arith.AddfOp, arith.AddiOp, arith.AddiOp),
    "mul": (arith.MulfOp, arith.MuliOp, arith.MuliOp),
    # Floats skip NaN (maxnum): a max is NaN only when all it saw is NaN
    # (docs/semantics.md); ONNX's elementwise Max propagates NaN, in generics.
    "max": (arith.MaxnumfOp, arith.MaxSIOp, arith.MaxUIOp),
    "min": (arith.MinnumfOp, arith.MinSIOp, arith.MinUIOp),
}


def reduce_body(element_type: Attribute, kind: str, operand_count: int) -> Region:
    """acc <kind> the first argument (the rest, e.g. a window shape, are ignored).
    `kind` is a key of REDUCTION_KINDS; "sum" is "add"."""
    region, block = generic_body([element_type] * operand_count)
    x, acc = block.args[0], block.args[-1]
    float_op, signed_op, unsigned_op = REDUCTION_KINDS["add" if kind == "sum" else kind]
    if _is_float(element_type):
        op_class = float_op
    else:
        # i1 (bool) orders as unsigned: true > false.
        width = element_type.width.data  # type: ignore[attr-defined]
        unsigned = width == 1 or element_type.signedness.data == Signedness.UNSIGNED  # type: ignore[attr-defined]
        op_class = unsigned_op if unsigned else signed_op
    op = op_class(acc, x)  # type: ignore[call-arg]
    block.add_ops([op, YieldOp(op.results[0])])
    return region


def _dims(*positions: int) -> list[AffineExpr]:
    return [AffineExpr.dimension(p) for p in positions]


class NamedStructuredOp(IRDLOperation):
    """A named op with ins/outs; `generalize()` gives the equivalent `tensor.generic`."""

    result = result_def(TensorType)
    traits = traits_def(Pure())

    def print(self, printer: Printer) -> None:
        properties = {k: v for k, v in self.properties.items() if k != "operandSegmentSizes"}
        if properties:
            printer.print_string(" ")
            printer.print_attr_dict(properties)
        ins = list(self.operands[: len(self.operands) - 1])
        _print_ins_outs(printer, ins, [self.operands[-1]])
        printer.print_string(" -> ")
        printer.print_attribute(self.result_types[0])
        _print_attributes(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> NamedStructuredOp:
        props = parser.parse_optional_attr_dict()
        inputs, outputs = _parse_ins_outs(parser)
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        return cls.build(operands=[*inputs, *outputs], result_types=[result_type],
                         properties=props, attributes=_parse_attributes(parser))  # fmt: skip


def _check_same_element_type(op: IRDLOperation, values: Sequence[SSAValue]) -> None:
    types = {v.type.element_type for v in values}  # type: ignore[attr-defined]
    if len(types) != 1:
        raise VerifyException(
            f"{op.name}: operands must have one element type, got {sorted(map(str, types))}"
        )


def _check_pairs(op: IRDLOperation, **arrays: DenseArrayBase) -> None:
    for name, array in arrays.items():
        values = _ints(array)
        if len(values) != 2 or any(v < 1 for v in values):
            raise VerifyException(f"{op.name}: {name} must be two positive values, got {values}")


@irdl_op_definition
class MatmulOp(NamedStructuredOp):
    """C[..., m, n] += A[..., m, k] * B[..., k, n] (batch dims equal)."""

    name = "tensor.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    init = operand_def(TensorType)

    def generalize(self) -> GenericOp:
        batch = len(_shape(self.lhs)) - 2
        m, n, k = batch, batch + 1, batch + 2
        rank = batch + 3
        maps = [
            AffineMap(rank, 0, tuple(_dims(*range(batch), m, k))),
            AffineMap(rank, 0, tuple(_dims(*range(batch), k, n))),
            AffineMap(rank, 0, tuple(_dims(*range(batch), m, n))),
        ]
        iterators = [PARALLEL] * (batch + 2) + [REDUCTION]
        element_type = self.init.type.element_type  # type: ignore[attr-defined]
        body = multiply_accumulate_body(element_type, 3)
        return GenericOp([self.lhs, self.rhs], [self.init], maps, iterators, body)

    def verify_(self) -> None:
        a, b, c = _shape(self.lhs), _shape(self.rhs), _shape(self.init)
        if not (len(a) == len(b) == len(c) >= 2):
            raise VerifyException("tensor.matmul: operands must have the same rank >= 2")
        if a[:-2] != b[:-2] or a[:-2] != c[:-2]:
            raise VerifyException("tensor.matmul: batch dims must be equal")
        _check_same_element_type(self, [self.lhs, self.rhs, self.init])
        if a[-1] != b[-2] or c[-2:] != (a[-2], b[-1]):
            raise VerifyException(f"tensor.matmul: {a} x {b} does not give {c}")


@irdl_op_definition
class Conv2DOp(NamedStructuredOp):
    """out[n, f, oh, ow] += in[n, g*C+c, oh*s+kh*d, ow*s+kw*d] * w[f, c, kh, kw],
    for f in group g. The input is already padded (NCHW / FCHW)."""

    name = "tensor.conv2d"
    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    init = operand_def(TensorType)
    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)
    groups = prop_def(IntegerAttr)

    def generalize(self) -> GenericOp:
        # dims: n, f, oh, ow (parallel), c, kh, kw (reduction; c within the group)
        n, f, oh, ow, c, kh, kw = _dims(*range(7))
        (sh, sw), (dh, dw) = _ints(self.strides), _ints(self.dilations)
        filters, group_channels = _shape(self.filter)[:2]
        groups = self.groups.value.data
        channel = c if groups == 1 else (f // (filters // groups)) * group_channels + c
        maps = [
            AffineMap(7, 0, (n, channel, oh * sh + kh * dh, ow * sw + kw * dw)),
            AffineMap(7, 0, (f, c, kh, kw)),
            AffineMap(7, 0, (n, f, oh, ow)),
        ]
        element_type = self.init.type.element_type  # type: ignore[attr-defined]
        body = multiply_accumulate_body(element_type, 3)
        iterators = [PARALLEL] * 4 + [REDUCTION] * 3
        return GenericOp([self.input, self.filter], [self.init], maps, iterators, body)

    def verify_(self) -> None:
        x, w, out = _shape(self.input), _shape(self.filter), _shape(self.init)
        groups = self.groups.value.data
        if not (len(x) == len(w) == len(out) == 4):
            raise VerifyException("tensor.conv2d: operands must have rank 4")
        _check_same_element_type(self, [self.input, self.filter, self.init])
        _check_pairs(self, strides=self.strides, dilations=self.dilations)
        if groups < 1:
            raise VerifyException(f"tensor.conv2d: groups must be positive, got {groups}")
        if x[1] != w[1] * groups or w[0] % groups or out[1] != w[0]:
            raise VerifyException(
                f"tensor.conv2d: channels of {x}, {w}, {out} disagree with groups={groups}"
            )
        (sh, sw), (dh, dw) = _ints(self.strides), _ints(self.dilations)
        for axis, s, d, k in ((2, sh, dh, w[2]), (3, sw, dw, w[3])):
            if (out[axis] - 1) * s + (k - 1) * d + 1 > x[axis]:
                raise VerifyException(f"tensor.conv2d: output dim {axis} reads past the input")


@irdl_op_definition
class Pool2DOp(NamedStructuredOp):
    """out[n, c, oh, ow] = max|sum over (kh, kw) of in[n, c, oh*s+kh*d, ow*s+kw*d]
    (input already padded; average pooling divides afterwards)."""

    name = "tensor.pool2d"
    input = operand_def(TensorType)
    init = operand_def(TensorType)
    kind = prop_def(StringAttr)
    kernel = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)

    def generalize(self) -> tuple[EmptyOp, GenericOp]:
        """The generic, plus the window-shaped `tensor.empty` that gives the
        kernel dims their extent (as linalg's pooling ops do)."""
        n, c, oh, ow, kh, kw = _dims(*range(6))
        (sh, sw), (dh, dw) = _ints(self.strides), _ints(self.dilations)
        element_type = self.init.type.element_type  # type: ignore[attr-defined]
        window = EmptyOp(TensorType(element_type, _ints(self.kernel)))
        maps = [
            AffineMap(6, 0, (n, c, oh * sh + kh * dh, ow * sw + kw * dw)),
            AffineMap(6, 0, (kh, kw)),
            AffineMap(6, 0, (n, c, oh, ow)),
        ]
        body = reduce_body(element_type, self.kind.data, 3)
        iterators = [PARALLEL] * 4 + [REDUCTION] * 2
        return window, GenericOp([self.input, window.result], [self.init], maps, iterators, body)

    def verify_(self) -> None:
        if self.kind.data not in ("max", "sum"):
            raise VerifyException(f"tensor.pool2d: kind must be max or sum, got '{self.kind.data}'")
        x, out = _shape(self.input), _shape(self.init)
        if len(x) != 4 or len(out) != 4 or x[:2] != out[:2]:
            raise VerifyException("tensor.pool2d: input and output must be NCHW with equal N, C")
        _check_same_element_type(self, [self.input, self.init])
        _check_pairs(self, kernel=self.kernel, strides=self.strides, dilations=self.dilations)
        kernel, strides, dilations = _ints(self.kernel), _ints(self.strides), _ints(self.dilations)
        for axis in (0, 1):
            last = (out[2 + axis] - 1) * strides[axis] + (kernel[axis] - 1) * dilations[axis]
            if last >= x[2 + axis]:
                raise VerifyException(f"tensor.pool2d: output dim {2 + axis} reads past the input")


def _copy_body(element_type: Attribute, operand_count: int) -> Region:
    region, block = generic_body([element_type] * operand_count)
    block.add_op(YieldOp(block.args[0]))
    return region


@irdl_op_definition
class TransposeOp(NamedStructuredOp):
    """init[i] = input[i permuted]: result dim k is input dim permutation[k]."""

    name = "tensor.transpose"
    input = operand_def(TensorType)
    init = operand_def(TensorType)
    permutation = prop_def(DenseArrayBase)

    def verify_(self) -> None:
        perm, x, out = _ints(self.permutation), _shape(self.input), _shape(self.init)
        if sorted(perm) != list(range(len(x))):
            raise VerifyException(f"tensor.transpose: {perm} is not a permutation of {len(x)} dims")
        if out != tuple(x[p] for p in perm):
            raise VerifyException(f"tensor.transpose: {x} permuted by {perm} is not {out}")
        _check_same_element_type(self, [self.input, self.init])

    def generalize(self) -> GenericOp:
        perm = _ints(self.permutation)
        rank = len(perm)
        inverse = [perm.index(axis) for axis in range(rank)]
        maps = [AffineMap(rank, 0, tuple(_dims(*inverse))), AffineMap.identity(rank)]
        body = _copy_body(self.init.type.element_type, 2)  # type: ignore[attr-defined]
        return GenericOp([self.input], [self.init], maps, [PARALLEL] * rank, body)


@irdl_op_definition
class BroadcastOp(NamedStructuredOp):
    """init = input repeated along the new result dims listed in `dimensions`
    (the other result dims are the input's, in order)."""

    name = "tensor.broadcast"
    input = operand_def(TensorType)
    init = operand_def(TensorType)
    dimensions = prop_def(DenseArrayBase)

    def verify_(self) -> None:
        added, x, out = _ints(self.dimensions), _shape(self.input), _shape(self.init)
        kept = [d for d in range(len(out)) if d not in added]
        if len(set(added)) != len(added) or any(not 0 <= d < len(out) for d in added):
            raise VerifyException(f"tensor.broadcast: bad dimensions {added} for rank {len(out)}")
        if tuple(out[d] for d in kept) != x:
            raise VerifyException(
                f"tensor.broadcast: {x} does not broadcast to {out} along {added}"
            )
        _check_same_element_type(self, [self.input, self.init])

    def generalize(self) -> GenericOp:
        added, rank = _ints(self.dimensions), len(_shape(self.init))
        kept = [d for d in range(rank) if d not in added]
        maps = [AffineMap(rank, 0, tuple(_dims(*kept))), AffineMap.identity(rank)]
        body = _copy_body(self.init.type.element_type, 2)  # type: ignore[attr-defined]
        return GenericOp([self.input], [self.init], maps, [PARALLEL] * rank, body)


@irdl_op_definition
class ReduceOp(NamedStructuredOp):
    """init[kept] = init[kept] <kind> every input element over `dimensions`
    (kind: add, mul, max, min); the result has the input's other dims."""

    name = "tensor.reduce"
    input = operand_def(TensorType)
    init = operand_def(TensorType)
    dimensions = prop_def(DenseArrayBase)
    kind = prop_def(StringAttr)

    def verify_(self) -> None:
        reduced, x, out = _ints(self.dimensions), _shape(self.input), _shape(self.init)
        if self.kind.data not in REDUCTION_KINDS:
            raise VerifyException(
                f"tensor.reduce: kind must be one of {sorted(REDUCTION_KINDS)}, got '{self.kind.data}'"
            )
        if len(set(reduced)) != len(reduced) or any(not 0 <= d < len(x) for d in reduced):
            raise VerifyException(f"tensor.reduce: bad dimensions {reduced} for rank {len(x)}")
        if out != tuple(d for i, d in enumerate(x) if i not in reduced):
            raise VerifyException(f"tensor.reduce: reducing {x} over {reduced} does not give {out}")
        _check_same_element_type(self, [self.input, self.init])

    def generalize(self) -> GenericOp:
        reduced, rank = _ints(self.dimensions), len(_shape(self.input))
        kept = [d for d in range(rank) if d not in reduced]
        maps = [AffineMap.identity(rank), AffineMap(rank, 0, tuple(_dims(*kept)))]
        iterators = [REDUCTION if d in reduced else PARALLEL for d in range(rank)]
        body = reduce_body(self.init.type.element_type, self.kind.data, 2)  # type: ignore[attr-defined]
        return GenericOp([self.input], [self.init], maps, iterators, body)


# ------------------------------------------------------------ data movement


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """The inputs joined along `dim` (all other dims equal)."""

    name = "tensor.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    dim = prop_def(IntegerAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` `(` type($inputs) `)` `->` type($result)"

    def verify_(self) -> None:
        shapes = [_shape(v) for v in self.inputs]
        out, dim = _shape(self.result), self.dim.value.data
        if not shapes or not 0 <= dim < len(out) or any(len(s) != len(out) for s in shapes):
            raise VerifyException(f"tensor.concat: inputs and result must have rank > {dim}")
        for axis in range(len(out)):
            extents = [s[axis] for s in shapes]
            expected = sum(extents) if axis == dim else extents[0]
            if out[axis] != expected or (axis != dim and len(set(extents)) != 1):
                raise VerifyException(
                    f"tensor.concat: {shapes} do not concatenate to {out} along {dim}"
                )
        _check_same_element_type(self, [*self.inputs, self.result])


@irdl_op_definition
class GatherOp(IRDLOperation):
    """result[p, i, q] = data[p, indices[i], q] along `axis`, with indices read at
    run time (an embedding lookup). A negative index counts from the end; an
    index still out of range is clamped to the axis, so generated code never
    reads outside `data`."""

    name = "tensor.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$data `[` $indices `]` attr-dict `:` type($data) `,` type($indices) `->` type($result)"
    )

    def verify_(self) -> None:
        data, indices, out = _shape(self.data), _shape(self.indices), _shape(self.result)
        axis = self.axis.value.data
        if not 0 <= axis < len(data):
            raise VerifyException(
                f"tensor.gather: axis {axis} is out of range for rank {len(data)}"
            )
        if not isinstance(self.indices.type.element_type, IntegerType):  # type: ignore[attr-defined]
            raise VerifyException("tensor.gather: indices must be integers")
        expected = (*data[:axis], *indices, *data[axis + 1 :])
        if out != expected:
            raise VerifyException(f"tensor.gather: result shape {out} should be {expected}")
        if self.result.type.element_type != self.data.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException("tensor.gather: result and data element types differ")


@irdl_op_definition
class EmptyOp(IRDLOperation):
    """A tensor whose contents are undefined (a destination to write into)."""

    name = "tensor.empty"
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])


@irdl_op_definition
class FillOp(IRDLOperation):
    """A tensor with every element equal to `value`."""

    name = "tensor.fill"
    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: FloatAttr | IntegerAttr, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"value": value})

    def verify_(self) -> None:
        if self.value.type != self.result.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException("tensor.fill: value type must be the element type")


@irdl_op_definition
class PadOp(IRDLOperation):
    """Pads with a constant: `low`/`high` elements before/after each dim."""

    name = "tensor.pad"
    source = operand_def(TensorType)
    result = result_def(TensorType)
    low = prop_def(DenseArrayBase)
    high = prop_def(DenseArrayBase)
    value = prop_def(FloatAttr | IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def verify_(self) -> None:
        src, out = _shape(self.source), _shape(self.result)
        low, high = _ints(self.low), _ints(self.high)
        if not len(src) == len(low) == len(high) == len(out):
            raise VerifyException("tensor.pad: low/high must have one entry per dim")
        if any(s + lo + hi != o for s, lo, hi, o in zip(src, low, high, out)):
            raise VerifyException(f"tensor.pad: {src} padded by {low}/{high} is not {out}")
        if any(p < 0 for p in [*low, *high]):
            raise VerifyException(f"tensor.pad: padding must be non-negative, got {low}/{high}")
        if self.value.type != self.result.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException("tensor.pad: the padding value must have the element type")


class _SliceOp(IRDLOperation):
    """Static offsets, sizes and strides, shared by extract_slice and insert_slice."""

    offsets = prop_def(DenseArrayBase)
    sizes = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def _check_slice(self, whole: tuple[int, ...], part: tuple[int, ...]) -> None:
        offsets, sizes, strides = _ints(self.offsets), _ints(self.sizes), _ints(self.strides)  # type: ignore[attr-defined]
        if not len(whole) == len(offsets) == len(sizes) == len(strides):
            raise VerifyException(f"{self.name}: offsets, sizes and strides need one entry per dim")
        if tuple(sizes) != part:
            raise VerifyException(f"{self.name}: sizes {sizes} differ from the slice shape {part}")
        for o, s, st, w in zip(offsets, sizes, strides, whole):
            if o < 0 or st < 1 or (s > 0 and o + (s - 1) * st >= w):
                raise VerifyException(
                    f"{self.name}: slice {offsets}/{sizes}/{strides} leaves {whole}"
                )


@irdl_op_definition
class ExtractSliceOp(_SliceOp):
    """result[i] = source[offsets + i * strides] (static, in bounds)."""

    name = "tensor.extract_slice"
    source = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def verify_(self) -> None:
        self._check_slice(_shape(self.source), _shape(self.result))


@irdl_op_definition
class InsertSliceOp(_SliceOp):
    """`dest` with dest[offsets + i * strides] = source[i]."""

    name = "tensor.insert_slice"
    source = operand_def(TensorType)
    dest = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = (
        "$source `into` $dest attr-dict `:` type($source) `into` type($dest) `->` type($result)"
    )

    def verify_(self) -> None:
        self._check_slice(_shape(self.dest), _shape(self.source))
        if self.result.type != self.dest.type:
            raise VerifyException("tensor.insert_slice: result type must be the dest type")


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """The same elements in row-major order under another static shape."""

    name = "tensor.reshape"
    source = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def verify_(self) -> None:
        if math.prod(_shape(self.source)) != math.prod(_shape(self.result)):
            raise VerifyException("tensor.reshape: element counts differ")
        if self.source.type.element_type != self.result.type.element_type:  # type: ignore[attr-defined]
            raise VerifyException("tensor.reshape: element types differ")


Tensor = Dialect(
    "tensor",
    [GenericOp, YieldOp, MatmulOp, Conv2DOp, Pool2DOp, TransposeOp, BroadcastOp, ReduceOp, ConcatOp,
     GatherOp, EmptyOp, FillOp, PadOp,
     ExtractSliceOp, InsertSliceOp, ReshapeOp],
    [],
)  # fmt: skip

__all__ = ["PARALLEL", "REDUCTION", "Tensor", "generic_body", "_int_array"]
