"""`convert-graph-to-tensor`: lowers `graph` ops to the tensor level: upstream
`linalg` (compute) and `tensor` (data movement) ops with scalar bodies, plus
`ember_linalg.gather`.

Every `graph` op except `graph.constant` (which is the tensor-level constant
too) becomes tensor-level ops; the scalar work inside `linalg.generic` bodies
is `arith`/`math` code. A named `linalg` op is used only where its semantics
are exactly Ember's (`linalg.matmul`, `linalg.conv_2d_nchw_fchw`,
`linalg.fill`); everything else is a `linalg.generic`. There is one rewrite
pattern per op family, each driven by a table from ONNX op type to the
function that lowers it:

- quantisation (QuantizeLinear, DequantizeLinear): one all-parallel generic
  each, a per-axis scale and zero point reshaped to broadcast along the axis.
- elementwise (unary, binary, variadic Sum/Max/Min/Mean, Where, Cast, Clip,
  PRelu, Pow, Mod, comparisons, logic, IsNaN, Identity/Dropout): ONE
  all-parallel generic writing into a `tensor.empty`. Broadcasting lives in
  the indexing maps: a size-1 operand dim that broadcasts reads index 0, and
  missing leading dims are dropped. The table gives the scalar body.
  Dropout with a training_mode input is one generic writing output and
  mask, its body drawing each element's SplitMix64 number from the seed
  and the element's flat position (`linalg.index`).
- windows: Conv (2-D, one group) is `tensor.pad` (explicit or resolved
  auto_pad) + `linalg.fill` 0 + `linalg.conv_2d_nchw_fchw`, then a bias
  generic; grouped and 3-D convolutions are one generic in place of the
  named op. ConvTranspose with constant weights, strides and neither groups
  nor dilations runs by phases: per output phase (position mod stride) a
  stride-1 convolution by that phase's taps, inserted with the stride into
  the whole output, then cropped. Otherwise it is a stride-1 convolution of
  its input spread out by the strides (a strided `tensor.insert_slice` into
  a fill of 0) by the flipped kernel. MaxPool, AveragePool and LpPool (a sum of
  |x|^p, then its p-th root) pad (NaN, which the max skips, or 0;
  ceil_mode is extra high padding) and run one pooling generic (the window
  dims get their extent from a window-shaped `tensor.empty`), averages
  divided by the window size or, when windows see different numbers of
  elements, by a count computed with NumPy at compile time and passed as a
  `graph.constant`. 1-D windows are reshaped to N x C x 1 x L (filters
  F x C x 1 x K) and lowered as 2-D. Global pools are reductions.
- contractions: Einsum is one multiply-accumulate generic over all its
  subscripts (those the result lacks are reductions); Det (matrices up to
  5 x 5) sums the signed products of every permutation (Leibniz). Gemm and MatMul
  become `linalg.matmul` (rank 2), or a
  multiply-accumulate generic with a leading batch dim (rank 3, after
  broadcast copies and `tensor.reshape`), with copy generics for transposes
  and a generic epilogue for alpha and beta * C.
- normalisation: BatchNormalization, InstanceNormalization,
  GroupNormalization (over a reshape to N x groups x rest),
  MeanVarianceNormalization and LayerNormalization (mean and variance
  reductions; its Mean and InvStdDev from them), LpNormalization (a norm
  reduction), LRN (window sum over zero-padded channels), Softmax/LogSoftmax
  (max, sum of exp, divide or log).
- transformer (`attention.py`): Attention as two contraction generics
  around scale, mask and softmax generics (docs/attention.md),
  RMSNormalization (a sum of squares), RotaryEmbedding (strided slices of
  the pairs, `ember_linalg.gather` of the angles at `position_ids`, one
  generic for both rotated halves, concatenations), SwiGLU (one generic),
  TensorScatter (`ember_linalg.scatter` at computed indices),
  CausalConvWithState (a window reduction over the concatenated state and
  input), LinearAttention (an `scf.for` over the steps carrying the state).
- reductions: ReduceX is a `linalg.fill` of the neutral element and one
  reduction generic, then a generic for Mean, L2 and LogSumExp; ArgMax and
  ArgMin carry (value, index) and read indices from an iota constant.
- data movement: Reshape/Flatten/Squeeze/Unsqueeze are `tensor.reshape`
  (the static shape an `arith.constant`); Transpose, Expand, Tile,
  DepthToSpace and negative-step Slice are copy generics with permuted,
  broadcast or reversed maps; Concat is `tensor.concat`; Split, Slice, Pad
  and Gather (constant indices, at most 64) are `tensor.insert_slice`,
  `tensor.extract_slice` and `tensor.pad` (Pad in edge, reflect or wrap mode:
  slices of the input, some copied with reversed or broadcast maps, inserted
  around it axis by axis); other Gathers are `ember_linalg.gather` (indices
  read at run time); Trilu is a select generic on the positions
  (`linalg.index`) of its last two dims.
- indexed: GatherElements and GatherND are `ember_linalg.gather`,
  ScatterElements and ScatterND `ember_linalg.scatter` (its combine region
  the reduction), each with the affine maps of its addressing.
- resize: one step per resized axis with its sampling tables as constants:
  a gather by the index vector (nearest), or a gather by the `[out, taps]`
  index table and a reduction generic weighting the taps (linear, cubic);
  a select generic puts crop-and-resize's extrapolation value outside.
- recurrent: RNN, GRU and LSTM are one `scf.for` over the time steps per
  direction, carrying the states and Y as tensors: the input projection of
  every step is one matmul before it; each step multiplies the state by
  R^T and computes the cell in one generic (`sequence_lens` as a mask; a
  backwards direction reverses each batch entry's steps by a gather).
- signal: DFT and STFT are one contraction generic each with the constant
  matrix of the transform (STFT reads its frames through an affine map);
  the window functions and MelWeightMatrix (constant sizes) are constants.
- vision: GridSample computes each axis's tap indices and weights from the
  grid in one generic, gathers X at every combination of taps
  (`ember_linalg.gather`) and sums them weighted; RoiAlign and DeformConv
  sample the same way (DeformConv then contracts the samples with W);
  AffineGrid contracts a constant base grid with theta; Col2Im gathers by a
  constant table of the block covering each image position and sums over
  the block offsets.
- losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss): a gather of
  each element's target score (and class weight), one generic of weighted
  losses, reductions for "sum" and "mean"; the cross entropy's scores go
  through LogSoftmax first.
- positions (CumSum, CumProd, TopK, Hardmax, OneHot): generics whose
  bodies compare positions along an axis (`linalg.index`): running sums
  and products over an extra reduction loop, ranks in the order along the
  axis (TopK gathers the first K, Hardmax marks rank 0), one-hot by index.
- shape queries: Shape, Size, ConstantOfShape and Range (constant operands)
  become `graph.constant`s.
- text (`text.py`): TfIdfVectorizer is one generic per n-gram length and
  skip distance (the pool a constant table, each window token read from a
  slice of X) counting matches in i32, then one generic per length adding
  the counts times their scores (1, or the weight for TFIDF) into Y; IDF
  then gives the column's weight where the count is positive.
- random (`random.py`): RandomUniform, RandomNormal, their Like forms and
  Bernoulli are one all-parallel generic each, whose body draws the
  element's SplitMix64 numbers from its flat position (the generator
  Dropout's masks use), so the bits are the reference interpreter's;
  Multinomial reduces its logits, then one generic chooses each sample's
  class from the same numbers.
- ai.onnx.ml (`ml.py`): Binarizer is one all-parallel generic;
  ArrayFeatureExtractor is `ember_linalg.gather` along the last axis.
- ai.onnx.preview.training (`training.py`): Adagrad, Adam and Momentum are
  one all-parallel generic per result, computing in f64.
- layout (Ember's own ops): LayoutTransform is reshape + transpose + reshape;
  laid-out convolutions (NCHWc, NHWC) are pad + fill + one generic indexing
  the layouts, whose innermost loop runs over contiguous output channels;
  laid-out pools are pad + fill + one reduction generic.
- `graph.fused`: its body is lowered like any other ops and becomes the
  region of one `loop.kernel` with the group's kind, in place of the fused
  op: the kernel uses the fused op's operands where the body used its block
  arguments, and yields (`loop.yield`) what the body yielded. Its
  `graph.constant`s move out in front of the kernel, which captures them
  like any other value: weights are buffers the kernel reads, not part of
  its computation, so kernels that differ only in their weights stay one
  computation (`loop-outline-kernels` shares one function between them).
  Bufferization keeps the kernel (on buffers), `loop-fuse` merges the loop
  nests inside it and `loop-outline-kernels` makes it one function.

Scalars (fill values, reshape shapes) are `arith.constant`s at the top of
the function; pad values are yielded by `tensor.pad`'s region.

Sizes are constants or symbols (`#graph.dims`): each symbol is read once at
the top of the function (`tensor.dim` of an input, marked `ember.symbol`;
`ember.dialects.symbol_sizes`), and the op families that take symbolic sizes
(`FamilyPattern.symbolic`) make dynamic `tensor.empty`s and reshapes from
those values. Before rewriting anything the pass checks every op: an unknown
dim (`?` with no symbol) is an error naming the op, and every op that cannot
be lowered (symbolic sizes on an op whose family takes none among them) is
listed, with the reason, in one diagnostic. Expected input: IR
after `graph-infer-shapes` and `graph-fold-constants`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import dce
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects import loop
from ember.dialects.graph import ConstantOp, FusedOp, GraphOp, YieldOp
from ember.dialects.graph.dims import SYMBOLS_ATTR, symbol_ranges
from ember.dialects.graph.symbolic import range_text
from ember.dialects.graph.types import DYNAMIC
from ember.dialects.symbol_sizes import SymbolSizes
from ember.errors import InputDependentDiagnostic
from ember.lowering.graph_to_tensor.attention import TransformerPattern
from ember.lowering.graph_to_tensor.common import PASS_NAME, FamilyPattern, NeedsConstants, _shape
from ember.lowering.graph_to_tensor.contractions import ContractionPattern
from ember.lowering.graph_to_tensor.data_movement import DataMovementPattern
from ember.lowering.graph_to_tensor.elementwise import ElementwisePattern
from ember.lowering.graph_to_tensor.indexed import IndexedPattern
from ember.lowering.graph_to_tensor.layout import LayoutPattern
from ember.lowering.graph_to_tensor.losses import LossPattern
from ember.lowering.graph_to_tensor.ml import MLPattern
from ember.lowering.graph_to_tensor.normalization import NormalizationPattern
from ember.lowering.graph_to_tensor.positions import PositionPattern
from ember.lowering.graph_to_tensor.quantize import QuantizePattern
from ember.lowering.graph_to_tensor.random import RandomPattern
from ember.lowering.graph_to_tensor.recurrent import RecurrentPattern
from ember.lowering.graph_to_tensor.reductions import ReductionPattern
from ember.lowering.graph_to_tensor.resize import ResizePattern
from ember.lowering.graph_to_tensor.shape_queries import ShapeQueryPattern
from ember.lowering.graph_to_tensor.signal import SignalPattern
from ember.lowering.graph_to_tensor.text import TextPattern
from ember.lowering.graph_to_tensor.training import TrainingPattern
from ember.lowering.graph_to_tensor.vision import VisionPattern
from ember.lowering.graph_to_tensor.windows import WindowPattern
from ember.passes.graph.unroll_control_flow import remaining_control_flow

# -------------------------------------------------------------------- pass

FAMILIES: tuple[type[FamilyPattern], ...] = (
    ElementwisePattern,
    ShapeQueryPattern,
    DataMovementPattern,
    IndexedPattern,
    ResizePattern,
    WindowPattern,
    ContractionPattern,
    NormalizationPattern,
    ReductionPattern,
    LossPattern,
    PositionPattern,
    LayoutPattern,
    RecurrentPattern,
    TransformerPattern,
    QuantizePattern,
    SignalPattern,
    VisionPattern,
    TextPattern,
    RandomPattern,
    MLPattern,
    TrainingPattern,
)


def lowerable_op_types() -> set[str]:
    """The ONNX op types this pass lowers (some only under conditions)."""
    return {op.SPEC.onnx_type for family in FAMILIES for op in family.lowerings}


def unsupported_reason(op: GraphOp) -> str | None:
    """Why `op` cannot be lowered, or None."""
    for family in FAMILIES:
        if type(op) in family.lowerings:
            return family.unsupported(op)
    return "no lowering yet"


def _unread_operands(op: Operation) -> set[int]:
    """The indices of `op`'s operands that its lowering does not read."""
    for family in FAMILIES:
        if isinstance(op, GraphOp) and type(op) in family.unread:
            groups = family.unread[type(op)](op)
            return {i for i, v in enumerate(op.operands)
                    if any(v in op.operand_group(g) for g in groups)}  # fmt: skip
    return set()


def values_never_read(module: Operation) -> frozenset[Operation]:
    """The graph ops whose results only feed operands that no lowering
    reads (and ops like them): the shape arithmetic behind a Slice's ends,
    say. They are not lowered; they are dead once their users are."""
    unused: set[Operation] = set()
    for op in reversed(list(module.walk())):
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp) or not op.results:
            continue
        uses = [use for result in op.results for use in result.uses]
        if uses and all(use.operation in unused or use.index in _unread_operands(use.operation)
                        for use in uses):  # fmt: skip
            unused.add(op)
    return frozenset(unused)


def _undecided_hint(op: Operation) -> str:
    """In a function with symbols, an unknown size is one shape inference
    could not decide from their ranges (a Slice to `S` of an axis of 512 has
    min(S, 512) elements): say that a narrower range may decide it."""
    func = op.parent_op()
    while func is not None and not isinstance(func, FuncOp):
        func = func.parent_op()
    ranges = symbol_ranges(func.attributes.get(SYMBOLS_ATTR)) if func is not None else {}
    if not ranges:
        return ""
    listing = ", ".join(f"{name}={range_text(bounds)}" for name, bounds in sorted(ranges.items()))
    return (f" (shape inference could not decide this size from the symbols' ranges, "
            f"{listing}: a narrower range, e.g. --dim NAME=1..512 or dims={{NAME: (1, 512)}}, "
            "may decide it)")  # fmt: skip


def _check_no_control_flow(module: Operation) -> None:
    """Control flow left after `graph-unroll-control-flow` is refused, naming
    the first such op and its source node."""
    problem = remaining_control_flow(module)
    if problem is not None:
        raise DiagnosticException(
            f"{PASS_NAME}: {problem}: the CPU pipeline does not run control flow yet"
        )


def check_lowerable(module: Operation, unused: frozenset[Operation] = frozenset()) -> None:
    """Raises a DiagnosticException naming the first op with a dynamic shape, or
    listing every op that cannot be lowered, with the reasons (`unused` ops
    are not lowered). When the inputs alone are to blame (a dynamic shape,
    operands that must be constants) it is an `InputDependentDiagnostic`."""
    _check_no_control_flow(module)
    problems: dict[str, list[str]] = {}
    for op in module.walk():
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp) or op in unused:
            continue
        for value in (*op.operands, *op.results):
            if DYNAMIC in _shape(value):
                raise InputDependentDiagnostic(
                    f"{PASS_NAME}: {op.name} has dynamic shape {value.type}; the CPU pipeline "
                    f"needs static shapes{_undecided_hint(op)}"
                )
        reason = unsupported_reason(op)
        if reason is not None and reason not in problems.get(op.name, []):
            problems.setdefault(op.name, []).append(reason)
    if problems:
        listing = "; ".join(f"{name} ({', '.join(reasons)})" for name, reasons in
                            sorted(problems.items()))  # fmt: skip
        count = len(problems)
        input_dependent = all(
            isinstance(reason, NeedsConstants)
            for reasons in problems.values()
            for reason in reasons
        )
        raise (InputDependentDiagnostic if input_dependent else DiagnosticException)(
            f"{PASS_NAME}: cannot lower {count} op{'s' if count > 1 else ''}: {listing}"
        )


def form_kernels(module: ModuleOp) -> None:
    """Replaces each `graph.fused` (its body lowered) by a `loop.kernel` holding
    that body, with its `graph.constant`s moved out in front of it."""
    for fused in [op for op in module.walk() if isinstance(op, FusedOp)]:
        body = fused.block
        for arg, value in zip(body.args, fused.inputs):
            arg.replace_all_uses_with(value)
        terminator = body.last_op
        assert isinstance(terminator, YieldOp)
        block = Block()
        for inner in list(body.ops):
            if inner is terminator:
                continue
            inner.detach()
            if isinstance(inner, ConstantOp):
                Rewriter.insert_op(inner, InsertPoint.before(fused))
            else:
                block.add_op(inner)
        block.add_op(loop.YieldOp(*terminator.values))
        kernel = loop.KernelOp(block, fused.result_types, fused.kind)
        kernel.location = fused.location
        Rewriter.replace_op(fused, kernel)


@dataclass(frozen=True)
class ConvertGraphToTensorPass(ModulePass):
    """Lowers every `graph` op but `graph.constant` to `linalg`, `tensor`,
    `ember_linalg`, `arith` and `math` ops (see the module docstring); unused
    constants are removed afterwards."""

    name = "convert-graph-to-tensor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        unused = values_never_read(op)
        check_lowerable(op, unused)
        sizes: dict[FuncOp, SymbolSizes] = {}
        patterns = GreedyRewritePatternApplier([family(sizes, unused) for family in FAMILIES])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
        form_kernels(op)
        dce(op)
