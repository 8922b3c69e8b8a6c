"""Ember's own `graph` ops for data layouts (domain `ember`, never imported
from ONNX; `graph-layout` creates them):

- `graph.layout_transform` moves a tensor from one layout to another
  (`source`/`target` are layout strings, see `layouts`): activations between
  NCHW, NCHW8c and NHWC, weights from OIHW to OIHW8i8o or HWIO;
- laid-out convolution and pooling: `graph.conv_nchwc`, `graph.conv_nhwc`,
  `graph.max_pool_nchwc`, ... compute exactly what Conv, MaxPool and
  AveragePool compute on NCHW tensors, on operands and results in other
  layouts.

A laid-out op is defined by its ONNX op and one row of `LAID_OUT`: the layout
of each operand and result, read off the operand shapes (which hold the
block sizes). Its shape rule is the ONNX op's rule on the operands converted
to the ONNX layouts (`CANONICAL`), its attributes are the ONNX op's, and its
reference kernel converts, runs the ONNX kernel and converts back, so a
laid-out op cannot drift from the op it stands for.

Blocked convolutions take a weight pre-blocked by both channel blocks,
[F/k, C/c, KH, KW, c, k] (`OIHW{c}i{k}o`), so that the innermost loop of the
lowered convolution runs over k contiguous output channels; the bias is
[F/k, k]. They have no groups (`group` is 1); NHWC convolutions do, with
weights [KH, KW, C/group, F] (`HWIO`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType

from ember.dialects.graph import ops_nn
from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.layouts import LayoutError, convert_shape
from ember.dialects.graph.shapes import ShapeContext, ShapeError
from ember.dialects.graph.spec import EMBER_DOMAIN, AttrKind, AttrSpec, OpSpec, one
from ember.dialects.graph.types import DYNAMIC, Shape, shape_of, tensor_type

Signature = tuple[Sequence[str], Sequence[str]]
"""The layouts of an op's operands (in order, an absent optional operand
included) and of its results."""

CANONICAL: dict[str, Signature] = {
    "Conv": (("NCHW", "OIHW", "O"), ("NCHW",)),
    "MaxPool": (("NCHW",), ("NCHW",)),
    "AveragePool": (("NCHW",), ("NCHW",)),
}
"""The layouts ONNX's ops work in: 2-D activations NCHW, weights OIHW, bias O."""


def _block(shape: Shape, rank: int, axis: int, what: str) -> int:
    """The block size held by dim `axis` of an operand that must have `rank`."""
    if len(shape) != rank or shape[axis] == DYNAMIC:
        raise ShapeError(f"{what} must have rank {rank} and a static block dim")
    return shape[axis]


def _conv_nchwc(shapes: Sequence[Shape]) -> Signature:
    weight = shapes[1]
    c, k = (_block(weight, 6, axis, "W (F/k x C/c x KH x KW x c x k)") for axis in (4, 5))
    return (f"NCHW{c}c", f"OIHW{c}i{k}o", f"O{k}o"), (f"NCHW{k}c",)


def _pool_nchwc(shapes: Sequence[Shape]) -> Signature:
    c = _block(shapes[0], 5, 4, "X (N x C/c x H x W x c)")
    return (f"NCHW{c}c",), (f"NCHW{c}c",)


def _fixed(
    operands: Sequence[str], results: Sequence[str]
) -> Callable[[Sequence[Shape]], Signature]:
    return lambda shapes: (operands, results)


@dataclass(frozen=True)
class LaidOut:
    """An Ember op that computes `onnx_type` in the layouts `signature` gives."""

    onnx_type: str
    signature: Callable[[Sequence[Shape]], Signature]
    summary: str
    dropped_attributes: tuple[str, ...] = ()


LAID_OUT: dict[str, LaidOut] = {
    "ConvNCHWc": LaidOut("Conv", _conv_nchwc, "Conv (2-D, no groups) in NCHWc: X [N, C/c, H, W, "
                         "c], W [F/k, C/c, KH, KW, c, k], B [F/k, k] -> Y [N, F/k, OH, OW, k].",
                         dropped_attributes=("group",)),
    "ConvNHWC": LaidOut("Conv", _fixed(("NHWC", "HWIO", "O"), ("NHWC",)),
                        "Conv (2-D) in NHWC: X [N, H, W, C], W [KH, KW, C/group, F], B [F]."),
    "MaxPoolNCHWc": LaidOut("MaxPool", _pool_nchwc, "MaxPool (2-D) in NCHWc."),
    "MaxPoolNHWC": LaidOut("MaxPool", _fixed(("NHWC",), ("NHWC",)), "MaxPool (2-D) in NHWC."),
    "AveragePoolNCHWc": LaidOut("AveragePool", _pool_nchwc, "AveragePool (2-D) in NCHWc."),
    "AveragePoolNHWC": LaidOut("AveragePool", _fixed(("NHWC",), ("NHWC",)),
                               "AveragePool (2-D) in NHWC."),
}  # fmt: skip

_ONNX_SPECS = {spec.onnx_type: spec for spec in ops_nn.SPECS}


def onnx_spec(op_type: str) -> OpSpec:
    """The spec of the ONNX op that the laid-out op `op_type` computes."""
    return _ONNX_SPECS[LAID_OUT[op_type].onnx_type]


def signature(op_type: str, shapes: Sequence[Shape]) -> tuple[Signature, Signature]:
    """(layouts, ONNX layouts) of the operands and results of a laid-out op whose
    present operands have `shapes`."""
    laid_out = LAID_OUT[op_type]
    return laid_out.signature(shapes), CANONICAL[laid_out.onnx_type]


# --------------------------------------------------------------- shape rules


def _convert_type(value_type: TensorType, source: str, target: str, what: str = "") -> TensorType:
    """`value_type` in layout `target`; a ShapeError names the operand `what`."""
    try:
        shape = convert_shape(source, target, shape_of(value_type))
    except LayoutError as error:
        raise ShapeError(f"{what}: {error}" if what else str(error)) from None
    return tensor_type(value_type.element_type, shape)


def laid_out(ctx: ShapeContext) -> list[TensorType]:
    """The ONNX op's shape rule, on operands converted to its layouts."""
    op_type = ctx.spec.onnx_type
    present = [ctx.shape(o.name) for o in ctx.spec.operands if ctx.has(o.name)]
    (layouts, result_layouts), (canonical, canonical_results) = signature(op_type, present)
    types = {
        o.name: [_convert_type(t, layout, onnx_layout, o.name) for t in ctx.types(o.name)]
        for o, layout, onnx_layout in zip(ctx.spec.operands, layouts, canonical)
    }
    onnx_context = ShapeContext(onnx_spec(op_type), types, {}, ctx.attributes, ctx.num_results)
    results = onnx_spec(op_type).infer(onnx_context)
    return [_convert_type(t, onnx_layout, layout)
            for t, onnx_layout, layout in zip(results, canonical_results, result_layouts)]  # fmt: skip


def layout_transform(ctx: ShapeContext) -> list[TensorType]:
    return [_convert_type(ctx.type("input"), ctx.attr("source"), ctx.attr("target"))]


def _laid_out_spec(op_type: str, laid: LaidOut) -> OpSpec:
    """The ONNX op's operands and attributes (less `dropped_attributes`) and its
    first result: MaxPool's optional Indices, flat positions in the NCHW
    input, have no laid-out form."""
    onnx = _ONNX_SPECS[laid.onnx_type]
    attributes = [a for a in onnx.attributes if a.name not in laid.dropped_attributes]
    return OpSpec(op_type, onnx.operands, onnx.results[:1], laid_out, attributes=attributes,
                  summary=laid.summary, domain=EMBER_DOMAIN)  # fmt: skip


SPECS = [
    OpSpec("LayoutTransform", [one("input")], [one("output")], layout_transform,
           attributes=(AttrSpec("source", AttrKind.STRING, required=True),
                       AttrSpec("target", AttrKind.STRING, required=True)),
           summary="The same tensor in another layout (`source`, `target`: NCHW, NCHW8c, "
                   "NHWC, OIHW8i8o, ...).", domain=EMBER_DOMAIN),
    *(_laid_out_spec(op_type, laid) for op_type, laid in LAID_OUT.items()),
]  # fmt: skip


# ----------------------------------------------------------- the op classes
# One class per row of SPECS, in table order; `graph_op` builds each from its
# row (tests/dialects/test_graph_op_classes.py holds the two together).


@graph_op(SPECS)
class LayoutTransformOp(GraphOp): ...


@graph_op(SPECS)
class ConvNCHWcOp(GraphOp): ...


@graph_op(SPECS)
class ConvNHWCOp(GraphOp): ...


@graph_op(SPECS)
class MaxPoolNCHWcOp(GraphOp): ...


@graph_op(SPECS)
class MaxPoolNHWCOp(GraphOp): ...


@graph_op(SPECS)
class AveragePoolNCHWcOp(GraphOp): ...


@graph_op(SPECS)
class AveragePoolNHWCOp(GraphOp): ...
