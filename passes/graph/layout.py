"""`graph-layout`: convolution networks in a blocked (NCHWc) or channels-last
(NHWC) layout.

`graph-layout{layout=NCHWc block=8}` keeps activations as [N, C/8, H, W, 8]
(8 = one AVX2 vector of f32) between convolutions; `graph-layout{layout=NHWC}`
keeps them channels-last. Rewrites, in program order:

| op | becomes | when |
|---|---|---|
| Conv | `graph.conv_nchwc` / `graph.conv_nhwc`; W and B go through a `graph.layout_transform` (OIHW -> OIHW8i8o or HWIO, O -> O8o) | 2-D, static shapes, floats; NCHWc: group 1 and C, F divisible by the block |
| MaxPool, AveragePool | `graph.max_pool_nchwc`, ... | 2-D, static, input already laid out |
| element-wise ops (every op of `ops_elementwise`) | the same op on laid-out operands | see below |
| Concat along C | Concat along the layout's channel axis (NCHWc: along C/c; every input is whole blocks, so blocks concatenate) | every input's channels fit the layout |
| channel shuffle: Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4), Reshape back | NHWC: Reshape [N, H, W, C] -> [N, H, W, g, C/g], Transpose (0, 1, 2, 4, 3), Reshape back (the rule of the last Reshape) | NHWC, the input laid out, the first Reshape and the Transpose used only by the next op |
| LRN | NHWC: Reshape [N, H, W, C] -> [N*H*W, C, 1, 1], LRN (its window along axis 1, the channels), Reshape back | NHWC, the input laid out, static shape |

An element-wise op or a Concat moves to the layout when at least one operand
is laid out already and no more operands would need a run-time conversion
than are laid out; scalars (all dims 1) stay as they are and constants that
broadcast (per-channel biases and scales) are converted by a
`graph.layout_transform` of the constant. Activations are converted only at
these boundaries: each value at most once per layout (conversions are
cached), and a value converted back to NCHW and forward again is the laid-out
value itself (`layout_transform` pairs that undo each other also cancel in
input IR). Run `graph-fold-constants` afterwards: it folds the conversions of
weights and constants at compile time.

Left alone (must not fire): 1-D and 3-D convolutions, dynamic shapes,
integer convolutions, grouped convolutions and channel counts not divisible
by the block in NCHWc, LRN in NCHWc, and every other op (BatchNormalization, Gemm,
GlobalAveragePool, a Reshape or Transpose that is not part of a channel
shuffle, ...), which reads the NCHW value converted back;
ops inside `graph.fused` regions (run `graph-layout` before `graph-fuse`).
Run `graph-fold-batchnorm` first: a BatchNormalization between convolutions
has no laid-out form and would cost two conversions. A bad option value is a
diagnostic naming the pass and the option.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph import (
    AveragePoolNCHWcOp,
    AveragePoolNHWCOp,
    AveragePoolOp,
    ConcatOp,
    ConstantOp,
    ConvNCHWcOp,
    ConvNHWCOp,
    ConvOp,
    GraphOp,
    LayoutTransformOp,
    LRNOp,
    MaxPoolNCHWcOp,
    MaxPoolNHWCOp,
    MaxPoolOp,
    ReshapeOp,
    TransposeOp,
    constant_value_of,
    op_classes,
    ops_elementwise,
)
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.layouts import LayoutError, convert_shape
from ember.dialects.graph.spec import Arity, AttrKind
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.graph.types import (
    DYNAMIC,
    attribute_from_value,
    dense_from_array,
    is_float,
    shape_of,
    tensor_type,
)
from ember.passes.graph.builders import constant_op

PASS_NAME = "graph-layout"
NCHW = "NCHW"


@dataclass(frozen=True)
class Target:
    """What one layout makes of activations and of convolution operands."""

    data: str
    """Layout of 2-D activations (NCHW8c, NHWC)."""
    weight: str
    """Layout of convolution weights (OIHW8i8o, HWIO), converted from OIHW."""
    bias: str
    """Layout of convolution biases (O8o, O), converted from O."""
    laid_out: dict[type[GraphOp], type[GraphOp]]
    """The laid-out op class of each op class that has one (Conv -> ConvNCHWc)."""
    channel_axis: int
    """The axis Concat joins channels along."""
    groups: bool
    """Whether grouped convolutions have a laid-out form."""


NCHWC_OPS: dict[type[GraphOp], type[GraphOp]] = {
    ConvOp: ConvNCHWcOp, MaxPoolOp: MaxPoolNCHWcOp, AveragePoolOp: AveragePoolNCHWcOp,
}  # fmt: skip
NHWC_OPS: dict[type[GraphOp], type[GraphOp]] = {
    ConvOp: ConvNHWCOp, MaxPoolOp: MaxPoolNHWCOp, AveragePoolOp: AveragePoolNHWCOp,
}  # fmt: skip

TARGETS: dict[str, Callable[[int], Target]] = {
    "NCHWc": lambda b: Target(f"NCHW{b}c", f"OIHW{b}i{b}o", f"O{b}o", NCHWC_OPS, 1, groups=False),
    "NHWC": lambda b: Target("NHWC", "HWIO", "O", NHWC_OPS, 3, groups=True),
}


def _tensor(value_type: Attribute) -> TensorType:
    assert isinstance(value_type, TensorType)
    return value_type


def _static_shape(value_type: Attribute) -> tuple[int, ...] | None:
    if not isinstance(value_type, TensorType):
        return None
    shape = shape_of(value_type)
    return None if DYNAMIC in shape else shape


def _batch_shape(value_type: Attribute) -> tuple[Dim, ...] | None:
    """The dims of a tensor type whose dims past the first are constants: a
    symbolic batch (`N`) is laid out as a static one is (it stays the
    outermost dim in every layout)."""
    if not isinstance(value_type, TensorType):
        return None
    shape = symbolic_shape(value_type)
    if DYNAMIC in shape or any(isinstance(d, SymExpr) for d in shape[1:]):
        return None
    return shape


# ------------------------------------------------------------------ rewriter

Action = Callable[[], SSAValue]
"""Produces an operand of the laid-out op (run only once the op fires)."""


@dataclass
class Relayout:
    """Moves the ops of one block to `target`, in program order."""

    target: Target
    converted: dict[tuple[SSAValue, str], SSAValue] = field(default_factory=dict)
    laid_out: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """An NCHW value -> the same tensor in the target layout."""
    back: list[Operation] = field(default_factory=list)
    """The conversions back to NCHW this pass made (removed when unused)."""
    bypassed: list[Operation] = field(default_factory=list)
    """Ops before a replaced one that its rule took in as well (a channel
    shuffle's first Reshape and Transpose), latest first: removed when unused."""

    def run(self, block: Block) -> None:
        for op in list(block.ops):
            if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
                continue
            rule = RULES.get(type(op))
            results = rule(self, op) if rule is not None else None
            if results is not None:
                self._replace(op, results)
        for op in self.bypassed:
            if not any(result.uses for result in op.results):
                Rewriter.erase_op(op)
        for conversion in reversed(self.back):
            if not conversion.results[0].uses:
                Rewriter.erase_op(conversion)

    # ------------------------------------------------------------ conversions
    def layout_type(self, value_type: Attribute) -> TensorType | None:
        """`value_type` (NCHW) in the target layout, or None if it has no form there."""
        shape = _batch_shape(value_type)
        if shape is None or len(shape) != 4:
            return None
        try:
            shape = convert_shape(NCHW, self.target.data, shape)
        except LayoutError:
            return None
        return tensor_type(_tensor(value_type).element_type, shape)

    def convert(self, value: SSAValue, source: str, target: str, anchor: Operation) -> SSAValue:
        """`value` in layout `target`, converted before `anchor` the first time."""
        if source == target:
            return value
        owner = value.owner
        if (isinstance(owner, LayoutTransformOp)
                and (owner.attr("source"), owner.attr("target")) == (target, source)):  # fmt: skip
            return owner.operands[0]
        key = (value, target)
        if key not in self.converted:
            self.converted[key] = _insert_transform(value, source, target, anchor)
        return self.converted[key]

    def twin(self, value: SSAValue) -> SSAValue | None:
        """The laid-out form of an NCHW value that already has one."""
        if value in self.laid_out:
            return self.laid_out[value]
        return self.converted.get((value, self.target.data))

    def to_layout(self, value: SSAValue, anchor: Operation) -> SSAValue:
        return self.twin(value) or self.convert(value, NCHW, self.target.data, anchor)

    def operand_action(self, value: SSAValue, anchor: Operation) -> tuple[Action, int] | None:
        """How an operand of an element-wise op or Concat enters the layout, and
        what it costs: 0 (laid out already, a scalar, a constant), 1 (a run-time
        conversion); None when it cannot."""
        twin = self.twin(value)
        if twin is not None:
            return (lambda: twin), 0
        shape = _batch_shape(value.type)
        if shape is None or len(shape) > 4:
            return None
        if all(d == 1 for d in shape):
            return (lambda: value), 0  # broadcasts the same way in any layout
        padded = (1,) * (4 - len(shape)) + shape
        if self.layout_type(tensor_type(_tensor(value.type).element_type, padded)) is None:
            return None
        constant = constant_value_of(value)
        if constant is not None:
            return (lambda: self._relaid_constant(value, constant.reshape(padded), anchor)), 0
        if len(shape) != 4:
            return None
        return (lambda: self.to_layout(value, anchor)), 1

    def _relaid_constant(self, value: SSAValue, array: np.ndarray, anchor: Operation) -> SSAValue:
        """A constant broadcast operand in the layout: a 4-D copy of it (when it
        has fewer dims), converted; graph-fold-constants folds the conversion."""
        key = (value, self.target.data)
        if key not in self.converted:
            source = value
            if shape_of(value.type) != array.shape:
                constant = constant_op(dense_from_array(array))
                Rewriter.insert_op(constant, InsertPoint.before(anchor))
                source = constant.results[0]
                source.name_hint = value.name_hint
            self.converted[key] = _insert_transform(source, NCHW, self.target.data, anchor)
        return self.converted[key]

    # --------------------------------------------------------------- building
    def results_fit(self, op: GraphOp) -> bool:
        """Whether every result of `op` has a form in the target layout."""
        return all(self.layout_type(t) is not None for t in op.result_types)

    def build(self, op: GraphOp, op_class: type[GraphOp], operands: list,
              properties: dict) -> list[SSAValue]:  # fmt: skip
        """An `op_class` op in place of `op`, with `op`'s result types laid out."""
        result_types = op_class.group_result_types([self.layout_type(t) for t in op.result_types])
        new = op_class.build(operands=operands, result_types=result_types, properties=properties)
        new.location = op.location
        Rewriter.insert_op(new, InsertPoint.before(op))
        return list(new.results)

    def _replace(self, op: GraphOp, results: list[SSAValue]) -> None:
        for old, new in zip(op.results, results):
            new.name_hint = old.name_hint
            back = _insert_transform(new, self.target.data, NCHW, op)
            self.back.append(back.owner)  # type: ignore[arg-type]
            old.replace_all_uses_with(back)
            self.laid_out[back] = new
        Rewriter.erase_op(op)


def _insert_transform(value: SSAValue, source: str, target: str, anchor: Operation) -> SSAValue:
    """A `graph.layout_transform` of `value`, inserted before `anchor`."""
    value_type = _tensor(value.type)
    result_type = tensor_type(
        value_type.element_type, convert_shape(source, target, symbolic_shape(value_type))
    )
    properties = {"source": attribute_from_value(AttrKind.STRING, source),
                  "target": attribute_from_value(AttrKind.STRING, target)}  # fmt: skip
    new = LayoutTransformOp.build(
        operands=[value], result_types=[result_type], properties=properties
    )
    new.location = anchor.location  # converts for `anchor`: named after it
    Rewriter.insert_op(new, InsertPoint.before(anchor))
    if value.name_hint:
        new.results[0].name_hint = f"{value.name_hint}_{target.lower()}"
    return new.results[0]


# --------------------------------------------------------------------- rules

Rule = Callable[[Relayout, GraphOp], "list[SSAValue] | None"]


def _properties(op: GraphOp, op_class: type[GraphOp]) -> dict[str, Attribute]:
    """`op`'s attributes that `op_class` has."""
    names = {a.name for a in op_class.SPEC.attributes}
    return {k: v for k, v in op.properties.items() if k in names}


def conv(r: Relayout, op: GraphOp) -> list[SSAValue] | None:
    x, w = op.operand_group("X")[0], op.operand_group("W")[0]
    w_shape = _static_shape(w.type)
    if (w_shape is None or r.layout_type(x.type) is None or not r.results_fit(op)
            or not is_float(_tensor(x.type).element_type)
            or (op.attr("group") != 1 and not r.target.groups)):  # fmt: skip
        return None
    try:
        convert_shape("OIHW", r.target.weight, w_shape)
    except LayoutError:
        return None
    op_class = r.target.laid_out[ConvOp]
    operands = [r.to_layout(x, op), r.convert(w, "OIHW", r.target.weight, op),
                [r.convert(b, "O", r.target.bias, op) for b in op.operand_group("B")]]  # fmt: skip
    return r.build(op, op_class, operands, _properties(op, op_class))


def pool(r: Relayout, op: GraphOp) -> list[SSAValue] | None:
    """A pool whose input is laid out already; MaxPool's Indices (flat
    positions in the NCHW input) have no laid-out form, so such a MaxPool
    stays."""
    x = op.operands[0]
    twin = r.twin(x)
    if twin is None or len(op.results) > 1 or not r.results_fit(op):
        return None
    op_class = r.target.laid_out[type(op)]
    return r.build(op, op_class, [twin], _properties(op, op_class))


def _entering(r: Relayout, op: GraphOp, operands: list[SSAValue]) -> list[Action] | None:
    """How each operand enters the layout when `op` moves: at least one is
    laid out already and no more need a run-time conversion than are laid
    out (else converting the laid-out ones back costs less); None if not."""
    actions = [r.operand_action(v, op) for v in operands]
    if not r.results_fit(op) or any(a is None for a in actions):
        return None
    laid = sum(1 for v in operands if r.twin(v) is not None)
    conversions = sum(a[1] for a in actions if a is not None)
    if not laid or conversions > laid:
        return None
    return [a[0] for a in actions if a is not None]


def elementwise(r: Relayout, op: GraphOp) -> list[SSAValue] | None:
    actions = _entering(r, op, list(op.operands))
    if actions is None:
        return None
    values = iter([action() for action in actions])
    groups = [[next(values) for _ in op.operand_group(o.name)] for o in op.SPEC.operands]
    operands = [g[0] if o.arity is Arity.SINGLE else g for o, g in zip(op.SPEC.operands, groups)]
    properties = {k: v for k, v in op.properties.items() if k != "operandSegmentSizes"}
    return r.build(op, type(op), operands, properties)


def concat(r: Relayout, op: GraphOp) -> list[SSAValue] | None:
    """Concat along C: every input must be whole blocks, so that blocks concatenate."""
    inputs = list(op.operands)
    if len(shape_of(op.result_types[0])) != 4 or op.attr("axis") % 4 != 1:
        return None
    if any(r.layout_type(v.type) is None for v in inputs):
        return None
    actions = _entering(r, op, inputs)
    if actions is None:
        return None
    axis = attribute_from_value(AttrKind.INT, r.target.channel_axis)
    return r.build(op, ConcatOp, [[action() for action in actions]], {"axis": axis})


def _shuffle_split(r: Relayout, op: GraphOp) -> tuple[Operation, Operation, SSAValue, int] | None:
    """The first Reshape and the Transpose, the laid-out input and the group
    count of the channel shuffle that the Reshape `op` ends, or None:
    Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4),
    Reshape back to [N, C, H, W], the first two used only by the next, the
    input laid out channels-last already."""
    transpose = op.operands[0].owner
    if not isinstance(transpose, TransposeOp) or list(transpose.attr("perm")) != [0, 2, 1, 3, 4]:
        return None
    split = transpose.operands[0].owner
    if not isinstance(split, ReshapeOp) or transpose.results[0].uses.get_length() != 1:
        return None
    x = split.operands[0]
    twin = r.twin(x)
    shape, groups = _static_shape(x.type), _static_shape(split.results[0].type)
    if twin is None or shape is None or len(shape) != 4 or split.results[0].uses.get_length() != 1:
        return None
    if _static_shape(op.results[0].type) != shape or groups is None or len(groups) != 5:
        return None
    n, channels, height, width = shape
    if groups[0] != n or groups[3:] != (height, width) or groups[1] * groups[2] != channels:
        return None
    return split, transpose, twin, groups[1]


def channel_shuffle(r: Relayout, op: GraphOp) -> list[SSAValue] | None:
    """A channel shuffle (`_shuffle_split`) of an NHWC value, in NHWC: the
    channels, the last axis, split into [g, C/g], swapped and merged, so
    that a ShuffleNet stays channels-last through its shuffles."""
    if r.target.channel_axis != 3:
        return None
    found = _shuffle_split(r, op)
    if found is None:
        return None
    split, transpose, twin, groups = found
    r.bypassed += [transpose, split]
    n, height, width, channels = _static_shape(twin.type) or ()
    grouped = _reshaped(twin, (n, height, width, groups, channels // groups), op)
    perm = attribute_from_value(AttrKind.INTS, [0, 1, 2, 4, 3])
    swapped = _insert(TransposeOp, [grouped], (n, height, width, channels // groups, groups),
                      {"perm": perm}, op)  # fmt: skip
    return [_reshaped(swapped, (n, height, width, channels), op)]


def lrn(r: Relayout, op: GraphOp) -> list[SSAValue] | None:
    """An LRN of an NHWC value, in NHWC: its pixels viewed as a batch of
    [N*H*W, C, 1, 1] (a reshape, no copy), whose axis 1 is the channels, so
    the window sums along them, contiguous; the result viewed back. In NCHW
    each LRN cost two transposes of its activation (Inception-v1: 1.1 of 21
    ms) and summed across channel planes."""
    twin = r.twin(op.operands[0])
    if r.target.channel_axis != 3 or twin is None:
        return None
    shape = _static_shape(twin.type)
    if shape is None or len(shape) != 4:
        return None
    n, height, width, channels = shape
    pixels = _reshaped(twin, (n * height * width, channels, 1, 1), op)
    normalised = _insert(LRNOp, [pixels], (n * height * width, channels, 1, 1),
                         _properties(op, LRNOp), op)  # fmt: skip
    return [_reshaped(normalised, shape, op)]


def _insert(op_class: type[GraphOp], operands: list, shape: tuple[int, ...],
            properties: dict[str, Attribute], before: Operation) -> SSAValue:  # fmt: skip
    """A new `op_class` op in front of `before`, its result of `shape` with
    the element type of the first operand."""
    first = operands[0][0] if isinstance(operands[0], list) else operands[0]
    element = _tensor(first.type).element_type
    result_types = op_class.group_result_types([tensor_type(element, shape)])
    new = op_class.build(operands=operands, result_types=result_types, properties=properties)
    Rewriter.insert_op(new, InsertPoint.before(before))
    return new.results[0]


def _reshaped(value: SSAValue, shape: tuple[int, ...], before: Operation) -> SSAValue:
    """`value` reshaped to `shape`, in front of `before`."""
    constant = constant_op(dense_from_array(np.asarray(shape, dtype=np.int64)))
    Rewriter.insert_op(constant, InsertPoint.before(before))
    return _insert(ReshapeOp, [value, constant.results[0]], shape, {}, before)


RULES: dict[type[GraphOp], Rule] = {
    ReshapeOp: channel_shuffle,
    ConvOp: conv,
    MaxPoolOp: pool,
    AveragePoolOp: pool,
    ConcatOp: concat,
    LRNOp: lrn,
    **{op_class: elementwise for op_class in op_classes(ops_elementwise.SPECS)},
}


# ------------------------------------------------------------ cancellation


class CancelInverseTransforms(RewritePattern):
    """layout_transform(layout_transform(x, A -> B), B -> A) -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LayoutTransformOp, rewriter: PatternRewriter) -> None:
        inner = op.operands[0].owner
        if (isinstance(inner, LayoutTransformOp)
                and (inner.attr("source"), inner.attr("target")) == (op.attr("target"), op.attr("source"))):  # fmt: skip
            rewriter.replace_op(op, [], [inner.operands[0]])
            if not inner.results[0].uses:
                rewriter.erase_op(inner)


# --------------------------------------------------------------------- cost


def conversion_ratio(func: FuncOp) -> float:
    """Elements that run-time layout conversions move, per multiply-accumulate
    of the laid-out convolutions (conversions of constants are folded at
    compile time and cost nothing)."""
    moved, work = 0, 0
    for op in func.walk():
        if isinstance(op, LayoutTransformOp) and not isinstance(op.operands[0].owner, ConstantOp):
            moved += math.prod(shape_of(op.results[0].type))
        elif isinstance(op, ConvNCHWcOp | ConvNHWCOp):
            weights = shape_of(op.operands[1].type)
            # One output element sums over the kernel window and input channels:
            # weights are HWIO (NHWC) or [F/k, C/c, KH, KW, c, k] (NCHWc).
            outputs = weights[-1] * (weights[0] if isinstance(op, ConvNCHWcOp) else 1)
            work += math.prod(shape_of(op.results[0].type)) * math.prod(weights) // outputs
    if not work:
        return math.inf if moved else 0.0
    return moved / work


# --------------------------------------------------------------------- pass


@dataclass(frozen=True)
class LayoutPass(ModulePass):
    """Moves convolutions and the ops around them to `layout` (NCHWc with
    `block` channels per block, or NHWC); see the module docstring."""

    name = "graph-layout"

    layout: str = "NCHWc"
    """NCHWc (blocked channels) or NHWC (channels last)."""
    block: int = 8
    """Channels per block in NCHWc."""
    max_conversion_ratio: float = math.inf
    """A function stays in NCHW when its run-time conversions would move more
    elements than this per multiply-accumulate of its laid-out convolutions
    (`conversion_ratio`). No limit by default; `graph-optimize` sets one."""

    def target(self) -> Target:
        if self.layout not in TARGETS:
            raise DiagnosticException(
                f"{PASS_NAME}: option layout must be one of {', '.join(TARGETS)}, "
                f"got '{self.layout}'"
            )
        if self.block < 1:
            raise DiagnosticException(
                f"{PASS_NAME}: option block must be positive, got {self.block}"
            )
        return TARGETS[self.layout](self.block)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = self.target()
        PatternRewriteWalker(CancelInverseTransforms()).rewrite_module(op)
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and func.body.blocks:
                if self.max_conversion_ratio == math.inf:
                    Relayout(target).run(func.body.block)
                    continue
                # Laid out on a copy, which replaces the function only if it pays.
                trial = func.clone()
                Relayout(target).run(trial.body.block)
                if conversion_ratio(trial) <= self.max_conversion_ratio:
                    Rewriter.replace_op(func, trial)
