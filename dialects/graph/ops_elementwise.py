"""Element-wise `graph` ops: unary, binary (broadcasting), variadic, select.

Each family is a table of (ONNX type, attributes) rows and one shape rule.
"""

from __future__ import annotations

import onnx
from xdsl.dialects.builtin import IntegerType, TensorType, i1

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.shapes import (
    ShapeContext,
    ShapeError,
    broadcast_shapes,
    result,
    same_element_type,
)
from ember.dialects.graph.spec import (
    AttrSpec,
    OpSpec,
    float_attr,
    int_attr,
    many,
    one,
    opt,
    string_attr,
    type_attr,
)
from ember.dialects.graph.types import is_float, numpy_dtype


def same_as_input(ctx: ShapeContext) -> list[TensorType]:
    """Result has the first operand's type."""
    return [ctx.type(ctx.spec.operands[0].name)]


def dropout(ctx: ShapeContext) -> list[TensorType]:
    """output: data's type; mask: i1 of data's shape. ratio is a float
    scalar, training_mode a bool scalar (or either of one element)."""
    for name, wanted in (("ratio", "a floating-point"), ("training_mode", "an i1")):
        given = ctx.optional_type(name)
        if given is None:
            continue
        element = given.element_type
        if given.get_shape() not in ((), (1,)) or not (
            is_float(element) if name == "ratio" else element == i1
        ):
            raise ShapeError(f"{name} must be {wanted} scalar, got {given}")
    data = ctx.type("data")
    mask = result(i1, symbolic_shape(data)) if ctx.num_results > 1 else []
    return [data, *mask]


def float_only(ctx: ShapeContext) -> list[TensorType]:
    input_type = ctx.type(ctx.spec.operands[0].name)
    if not is_float(input_type.element_type):
        raise ShapeError(f"expects a floating-point tensor, got {input_type}")
    return [input_type]


def integer_only(ctx: ShapeContext) -> list[TensorType]:
    input_type = ctx.type(ctx.spec.operands[0].name)
    if not isinstance(input_type.element_type, IntegerType) or input_type.element_type == i1:
        raise ShapeError(f"expects an integer tensor, got {input_type}")
    return [input_type]


def bool_like_input(ctx: ShapeContext) -> list[TensorType]:
    return result(i1, ctx.shape(ctx.spec.operands[0].name))


def float_to_bool(ctx: ShapeContext) -> list[TensorType]:
    float_only(ctx)
    return bool_like_input(ctx)


# name -> attributes; all keep the input type.
UNARY: dict[str, tuple[AttrSpec, ...]] = {
    "Abs": (),
    "Neg": (),
    "Relu": (),
    "Sign": (),
    "Identity": (),
    "Sigmoid": (),
    "Tanh": (),
    "Exp": (),
    "Log": (),
    "Sqrt": (),
    "Reciprocal": (),
    "Floor": (),
    "Ceil": (),
    "Round": (),
    "Erf": (),
    "Sin": (),
    "Cos": (),
    "Tan": (),
    "Asin": (),
    "Acos": (),
    "Atan": (),
    "Sinh": (),
    "Cosh": (),
    "Softplus": (),
    "Softsign": (),
    "HardSwish": (),
    "Mish": (),
    "LeakyRelu": (float_attr("alpha", 0.01),),
    "Elu": (float_attr("alpha", 1.0),),
    "Celu": (float_attr("alpha", 1.0),),
    "ThresholdedRelu": (float_attr("alpha", 1.0),),
    "Selu": (
        float_attr("alpha", 1.67326319217681884765625),
        float_attr("gamma", 1.05070102214813232421875),
    ),
    "HardSigmoid": (float_attr("alpha", 0.2), float_attr("beta", 0.5)),
    "Gelu": (string_attr("approximate", "none"),),
    "Acosh": (),
    "Asinh": (),
    "Atanh": (),
    "Swish": (float_attr("alpha", 1.0),),
    "Shrink": (float_attr("bias", 0.0), float_attr("lambd", 0.5)),
    "BitwiseNot": (),
}

_FLOAT_ONLY = {
    "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Sin", "Cos", "Tan",
    "Asin", "Acos", "Atan", "Sinh", "Cosh", "Softplus", "Softsign", "HardSwish", "Mish",
    "LeakyRelu", "Elu", "Celu", "ThresholdedRelu", "Selu", "HardSigmoid", "Gelu", "Floor",
    "Ceil", "Round", "Acosh", "Asinh", "Atanh", "Swish",
}  # fmt: skip

_INTEGER_ONLY = {"BitwiseNot"}


def broadcast_same_type(ctx: ShapeContext) -> list[TensorType]:
    types = [ctx.type("A"), ctx.type("B")]
    element_type = same_element_type(ctx, types)
    return result(element_type, broadcast_shapes([symbolic_shape(t) for t in types]))


def broadcast_integers(ctx: ShapeContext) -> list[TensorType]:
    (result_type,) = broadcast_same_type(ctx)
    if not isinstance(result_type.element_type, IntegerType) or result_type.element_type == i1:
        raise ShapeError(f"operands must be integer tensors, got {result_type.element_type}")
    return [result_type]


def bit_shift(ctx: ShapeContext) -> list[TensorType]:
    if ctx.attr("direction") not in ("LEFT", "RIGHT"):
        raise ShapeError(f'direction must be "LEFT" or "RIGHT", got {ctx.attr("direction")!r}')
    types = [ctx.type("X"), ctx.type("Y")]
    element_type = same_element_type(ctx, types)
    if not isinstance(element_type, IntegerType) or element_type == i1:
        raise ShapeError(f"operands must be integer tensors, got {element_type}")
    return result(element_type, broadcast_shapes([symbolic_shape(t) for t in types]))


def broadcast_to_bool(ctx: ShapeContext) -> list[TensorType]:
    types = [ctx.type("A"), ctx.type("B")]
    same_element_type(ctx, types)
    return result(i1, broadcast_shapes([symbolic_shape(t) for t in types]))


def power(ctx: ShapeContext) -> list[TensorType]:
    """Pow: the exponent may have another type; the result has the base's."""
    shapes = [ctx.shape("X"), ctx.shape("Y")]
    return result(ctx.element_type("X"), broadcast_shapes(shapes))


def prelu(ctx: ShapeContext) -> list[TensorType]:
    types = [ctx.type("X"), ctx.type("slope")]
    element_type = same_element_type(ctx, types)
    shape = broadcast_shapes([symbolic_shape(t) for t in types])
    if shape != ctx.shape("X"):
        raise ShapeError("slope must broadcast to the shape of X")
    return result(element_type, shape)


def variadic_broadcast(ctx: ShapeContext) -> list[TensorType]:
    types = list(ctx.types("data_0"))
    if not types:
        raise ShapeError("expects at least one operand")
    element_type = same_element_type(ctx, types)
    return result(element_type, broadcast_shapes([symbolic_shape(t) for t in types]))


def where(ctx: ShapeContext) -> list[TensorType]:
    if ctx.element_type("condition") != i1:
        raise ShapeError(f"condition must be a tensor of i1, got {ctx.type('condition')}")
    element_type = same_element_type(ctx, [ctx.type("X"), ctx.type("Y")])
    shapes = [ctx.shape("condition"), ctx.shape("X"), ctx.shape("Y")]
    return result(element_type, broadcast_shapes(shapes))


def cast(ctx: ShapeContext) -> list[TensorType]:
    return result(ctx.attr("to"), ctx.shape("input"))


def bit_cast(ctx: ShapeContext) -> list[TensorType]:
    source, target = ctx.element_type("input"), ctx.attr("to")
    source_bits, target_bits = (numpy_dtype(t).itemsize for t in (source, target))
    if source_bits != target_bits:
        raise ShapeError(f"cannot reinterpret {source} as {target}: their sizes differ")
    return result(target, ctx.shape("input"))


def clip(ctx: ShapeContext) -> list[TensorType]:
    input_type = ctx.type("input")
    for bound in ("min", "max"):
        bound_type = ctx.optional_type(bound)
        if bound_type is None:
            continue
        if symbolic_shape(bound_type) not in ((), (1,)):
            raise ShapeError(f"{bound} must be a scalar, got {bound_type}")
        same_element_type(ctx, [input_type, bound_type])
    return [input_type]


def logical(ctx: ShapeContext) -> list[TensorType]:
    types = [ctx.type("A"), ctx.type("B")]
    if any(t.element_type != i1 for t in types):
        raise ShapeError("operands must be tensors of i1")
    return result(i1, broadcast_shapes([symbolic_shape(t) for t in types]))


def logical_not(ctx: ShapeContext) -> list[TensorType]:
    if ctx.element_type("X") != i1:
        raise ShapeError("operand must be a tensor of i1")
    return [ctx.type("X")]


def _unary_spec(name: str, attrs: tuple[AttrSpec, ...]) -> OpSpec:
    # ONNX names the operand `X` or `input` depending on the op; keep its name.
    schema = onnx.defs.get_schema(name)  # the latest: Swish is newer than opset 21
    rule = (
        float_only
        if name in _FLOAT_ONLY
        else integer_only
        if name in _INTEGER_ONLY
        else same_as_input
    )
    return OpSpec(name, [one(schema.inputs[0].name)], [one(schema.outputs[0].name)], rule,
                  attributes=attrs, summary=f"ONNX {name}, element-wise.")  # fmt: skip


UNARY_SPECS = [_unary_spec(name, attrs) for name, attrs in UNARY.items()]

BINARY_SPECS = [
    OpSpec(name, [one("A"), one("B")], [one("C")], broadcast_same_type,
           summary=f"ONNX {name}, element-wise with broadcasting.")
    for name in ("Add", "Sub", "Mul", "Div")
] + [
    OpSpec(name, [one("A"), one("B")], [one("C")], broadcast_to_bool,
           summary=f"ONNX {name}: element-wise comparison to i1, with broadcasting.")
    for name in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")
] + [
    OpSpec(name, [one("A"), one("B")], [one("C")], logical,
           summary=f"ONNX {name} on i1 tensors, with broadcasting.")
    for name in ("And", "Or", "Xor")
] + [
    OpSpec(name, [one("A"), one("B")], [one("C")], broadcast_integers,
           summary=f"ONNX {name} of integer tensors, with broadcasting.")
    for name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor")
]  # fmt: skip

VARIADIC_SPECS = [
    OpSpec(name, [many("data_0")], [one(name.lower())], variadic_broadcast,
           summary=f"ONNX {name} of any number of broadcast operands.")
    for name in ("Sum", "Max", "Min", "Mean")
]  # fmt: skip

OTHER_SPECS = [
    OpSpec("Pow", [one("X"), one("Y")], [one("Z")], power, summary="X ** Y, broadcast."),
    OpSpec("Mod", [one("A"), one("B")], [one("C")], broadcast_same_type,
           attributes=(int_attr("fmod", 0),), summary="Remainder (fmod=1: C fmod)."),
    OpSpec("PRelu", [one("X"), one("slope")], [one("Y")], prelu,
           summary="x if x >= 0 else slope * x; slope broadcasts to X."),
    OpSpec("Where", [one("condition"), one("X"), one("Y")], [one("output")], where,
           summary="Element-wise select, with broadcasting."),
    OpSpec("Not", [one("X")], [one("Y")], logical_not, summary="Logical not of an i1 tensor."),
    OpSpec("IsNaN", [one("X")], [one("Y")], bool_like_input, summary="x != x, as i1."),
    OpSpec("IsInf", [one("X")], [one("Y")], float_to_bool,
           attributes=(int_attr("detect_negative", 1), int_attr("detect_positive", 1)),
           summary="Whether x is an infinity (of the signs asked for), as i1."),
    OpSpec("BitShift", [one("X"), one("Y")], [one("Z")], bit_shift,
           attributes=(string_attr("direction"),),
           summary="X shifted LEFT or RIGHT by Y bits (a shift outside [0, width) fills)."),
    OpSpec("Cast", [one("input")], [one("output")], cast,
           attributes=(type_attr("to"), int_attr("saturate", 1), string_attr("round_mode", "up")),
           summary="Converts the element type to `to` (saturate: float8 targets clamp "
                   "out-of-range values to their largest finite value; round_mode: "
                   "float8e8m0's rounding, up, down or nearest)."),
    OpSpec("BitCast", [one("input")], [one("output")], bit_cast, attributes=(type_attr("to"),),
           summary="Reinterprets the bits of each element as the type `to` (of the same size)."),
    OpSpec("Clip", [one("input"), opt("min"), opt("max")], [one("output")], clip,
           summary="Clamps to [min, max]; a missing bound is unbounded."),
    OpSpec("Dropout", [one("data"), opt("ratio"), opt("training_mode")],
           [one("output"), opt("mask")], dropout, attributes=(int_attr("seed", 0),),
           summary="Without a true training_mode, the identity (mask all true); with one, "
                   "each element kept where a SplitMix64 number from seed at its flat "
                   "position, as a uniform in [0, 1), is >= ratio (default 0.5), and "
                   "scaled by 1 / (1 - ratio); the others 0."),
]  # fmt: skip

SPECS = UNARY_SPECS + BINARY_SPECS + VARIADIC_SPECS + OTHER_SPECS


# ----------------------------------------------------------- the op classes
# One class per row of SPECS, in table order; `graph_op` builds each from its
# row (tests/dialects/test_graph_op_classes.py holds the two together).


@graph_op(SPECS)
class AbsOp(GraphOp): ...


@graph_op(SPECS)
class NegOp(GraphOp): ...


@graph_op(SPECS)
class ReluOp(GraphOp): ...


@graph_op(SPECS)
class SignOp(GraphOp): ...


@graph_op(SPECS)
class IdentityOp(GraphOp): ...


@graph_op(SPECS)
class SigmoidOp(GraphOp): ...


@graph_op(SPECS)
class TanhOp(GraphOp): ...


@graph_op(SPECS)
class ExpOp(GraphOp): ...


@graph_op(SPECS)
class LogOp(GraphOp): ...


@graph_op(SPECS)
class SqrtOp(GraphOp): ...


@graph_op(SPECS)
class ReciprocalOp(GraphOp): ...


@graph_op(SPECS)
class FloorOp(GraphOp): ...


@graph_op(SPECS)
class CeilOp(GraphOp): ...


@graph_op(SPECS)
class RoundOp(GraphOp): ...


@graph_op(SPECS)
class ErfOp(GraphOp): ...


@graph_op(SPECS)
class SinOp(GraphOp): ...


@graph_op(SPECS)
class CosOp(GraphOp): ...


@graph_op(SPECS)
class TanOp(GraphOp): ...


@graph_op(SPECS)
class AsinOp(GraphOp): ...


@graph_op(SPECS)
class AcosOp(GraphOp): ...


@graph_op(SPECS)
class AtanOp(GraphOp): ...


@graph_op(SPECS)
class SinhOp(GraphOp): ...


@graph_op(SPECS)
class CoshOp(GraphOp): ...


@graph_op(SPECS)
class SoftplusOp(GraphOp): ...


@graph_op(SPECS)
class SoftsignOp(GraphOp): ...


@graph_op(SPECS)
class HardSwishOp(GraphOp): ...


@graph_op(SPECS)
class MishOp(GraphOp): ...


@graph_op(SPECS)
class LeakyReluOp(GraphOp): ...


@graph_op(SPECS)
class EluOp(GraphOp): ...


@graph_op(SPECS)
class CeluOp(GraphOp): ...


@graph_op(SPECS)
class ThresholdedReluOp(GraphOp): ...


@graph_op(SPECS)
class SeluOp(GraphOp): ...


@graph_op(SPECS)
class HardSigmoidOp(GraphOp): ...


@graph_op(SPECS)
class GeluOp(GraphOp): ...


@graph_op(SPECS)
class AcoshOp(GraphOp): ...


@graph_op(SPECS)
class AsinhOp(GraphOp): ...


@graph_op(SPECS)
class AtanhOp(GraphOp): ...


@graph_op(SPECS)
class SwishOp(GraphOp): ...


@graph_op(SPECS)
class ShrinkOp(GraphOp): ...


@graph_op(SPECS)
class BitwiseNotOp(GraphOp): ...


@graph_op(SPECS)
class AddOp(GraphOp): ...


@graph_op(SPECS)
class SubOp(GraphOp): ...


@graph_op(SPECS)
class MulOp(GraphOp): ...


@graph_op(SPECS)
class DivOp(GraphOp): ...


@graph_op(SPECS)
class EqualOp(GraphOp): ...


@graph_op(SPECS)
class LessOp(GraphOp): ...


@graph_op(SPECS)
class LessOrEqualOp(GraphOp): ...


@graph_op(SPECS)
class GreaterOp(GraphOp): ...


@graph_op(SPECS)
class GreaterOrEqualOp(GraphOp): ...


@graph_op(SPECS)
class AndOp(GraphOp): ...


@graph_op(SPECS)
class OrOp(GraphOp): ...


@graph_op(SPECS)
class XorOp(GraphOp): ...


@graph_op(SPECS)
class BitwiseAndOp(GraphOp): ...


@graph_op(SPECS)
class BitwiseOrOp(GraphOp): ...


@graph_op(SPECS)
class BitwiseXorOp(GraphOp): ...


@graph_op(SPECS)
class SumOp(GraphOp): ...


@graph_op(SPECS)
class MaxOp(GraphOp): ...


@graph_op(SPECS)
class MinOp(GraphOp): ...


@graph_op(SPECS)
class MeanOp(GraphOp): ...


@graph_op(SPECS)
class PowOp(GraphOp): ...


@graph_op(SPECS)
class ModOp(GraphOp): ...


@graph_op(SPECS)
class PReluOp(GraphOp): ...


@graph_op(SPECS)
class WhereOp(GraphOp): ...


@graph_op(SPECS)
class NotOp(GraphOp): ...


@graph_op(SPECS)
class IsNaNOp(GraphOp): ...


@graph_op(SPECS)
class IsInfOp(GraphOp): ...


@graph_op(SPECS)
class BitShiftOp(GraphOp): ...


@graph_op(SPECS)
class CastOp(GraphOp): ...


@graph_op(SPECS)
class BitCastOp(GraphOp): ...


@graph_op(SPECS)
class ClipOp(GraphOp): ...


@graph_op(SPECS)
class DropoutOp(GraphOp): ...
