"""`graph-partition-npu`: which graph ops run on the NPU (host/device
partitioning), as `npu.segment` regions in the IR.

A segment is a run of consecutive ops of the entry function that the NPU
lowering takes, each with the weights it reads cloned in; every other op
stays where it is and runs on the host (the CPU pipeline), so a model the
NPU runs only partly still runs whole. The NPU takes (float32, static
shapes; every row it moves at most 65,535 bytes, the DMA's stride):

| op | when |
|---|---|
| MatMul | A of rank >= 2 (its leading dims are rows), B of rank 2 |
| Gemm | not transposed (a constant B under transB is transposed when the graph is simplified), alpha = beta = 1, C absent or a constant row of N values |
| Conv | 2-D, one group (any kernel, stride, padding, dilation), constant weights and bias; each image one product `W[F, C*KH*KW] X_col`, X_col read in place (strided loads for a column stride) |
| Add | of a row of N constant values to the only use of a MatMul or Gemm in the segment that has no bias yet: its bias |
| Relu | of the only use of a product, convolution, sum or pool in the segment: applied in the accumulator |
| Add, Sum | of two computed NCHW images of one shape (a residual connection): on the vector unit |
| Mul, Add | of a computed NCHW image and a constant per channel (an unfolded BatchNormalization: a scale, then a shift that joins it): on the vector unit |
| MaxPool, AveragePool, GlobalAveragePool | 2-D NCHW, undilated, at most `max_taps` (511) window taps; an average counting its padding without ceil mode; a padded max pool's input padded with zeros by no other reader: on the vector unit |
| Concat | of NCHW images along the channels, batch 1: an input computed in the segment for the concatenation alone is stored into its channels of the result by its producer, any other is copied in by the vector unit |
| QLinearConv, QLinearMatMul, QGemm | int8 throughout, constant scales (per tensor, or a convolution's per output channel), weights with zero point 0 (see `quantised`), and the Conv's or MatMul's conditions above: int8 matrix-unit work, requantised by the store |

A run ends at the first op the NPU does not take (constants do not end
one). The segments are named `npu0`, `npu1`, ... in order; what the
partition chose is listed by `ember compile --target npu` and
`NpuModel.report`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from ember.dialects.graph import (
    AddOp,
    AveragePoolOp,
    ConcatOp,
    ConstantOp,
    ConvOp,
    GemmOp,
    GlobalAveragePoolOp,
    MatMulOp,
    MaxPoolOp,
    MulOp,
    QGemmOp,
    QLinearConvOp,
    QLinearMatMulOp,
    ReluOp,
    SumOp,
)
from ember.dialects.npu.machine import MAX_STRIDE, NpuParams
from ember.dialects.npu.segment import SegmentOp, YieldOp
from ember.lowering.graph_to_npu.quantised import QUANTISED_PRODUCTS, is_int8, why_not
from ember.lowering.graph_to_npu.vector import max_taps
from ember.lowering.graph_to_tensor.windows import window_params
from ember.reference import entry_function

MAX_STEP = 255
"""`load_strided`'s step field: the widest column stride a convolution may have."""


def _shape(value: SSAValue, int8: bool = False) -> list[int] | None:
    """The static shape of a float32 (or with `int8`, an int8) tensor, else None."""
    t = value.type
    if not isinstance(t, TensorType):
        return None
    if not (is_int8(value) if int8 else isinstance(t.element_type, Float32Type)):
        return None
    shape = list(t.get_shape())
    return None if any(d < 0 for d in shape) else shape


def _rows_fit(*sizes: int) -> bool:
    return all(size * 4 <= MAX_STRIDE for size in sizes)


def _matmul_ok(op: MatMulOp) -> bool:
    a, b, y = (_shape(v) for v in (op.operands[0], op.operands[1], op.results[0]))
    return (a is not None and b is not None and y is not None and len(a) >= 2 and len(b) == 2
            and a[-1] == b[0] and _rows_fit(b[0], b[1]))  # fmt: skip


def _conv_ok(op: ConvOp | QLinearConvOp) -> bool:
    """2-D, one group, constant weights (and bias), a column stride the
    strided load takes."""
    int8 = isinstance(op, QLinearConvOp)
    weights = op.operands[3 if int8 else 1]
    x, w, y = (_shape(v, int8) for v in (op.operands[0], weights, op.results[0]))
    if x is None or w is None or y is None or len(x) != 4 or len(w) != 4:
        return False
    strides = op.attr("strides") or [1, 1]
    if op.attr("group") != 1 or not 1 <= strides[-1] <= MAX_STEP:
        return False
    bias = op.operand_group("B")
    if not all(isinstance(v.owner, ConstantOp) for v in (weights, *bias)):
        return False
    return _rows_fit(w[1] * w[2] * w[3])


def _quantised_ok(op: QLinearConvOp | QLinearMatMulOp | QGemmOp) -> bool:
    if why_not(op) is not None:
        return False
    if isinstance(op, QLinearConvOp):
        return _conv_ok(op)
    a, b = _shape(op.operands[0], int8=True), _shape(op.operands[3], int8=True)
    if a is None or b is None or len(b) != 2 or len(a) < 2 or _shape(op.results[0], True) is None:
        return False
    k, n = (b[1], b[0]) if isinstance(op, QGemmOp) and op.attr("transB") else (b[0], b[1])
    return a[-1] == k and _rows_fit(k, n)


def bias_row(value: SSAValue, n: int) -> bool:
    """Whether `value` is a constant row of `n` float32 values ([n] or [1, n])."""
    return _shape(value) in ([n], [1, n]) and isinstance(value.owner, ConstantOp)


def _gemm_ok(op: GemmOp) -> bool:
    a, b = _shape(op.operand_group("A")[0]), _shape(op.operand_group("B")[0])
    if a is None or b is None or len(a) != 2 or len(b) != 2 or _shape(op.results[0]) is None:
        return False
    if op.attr("transA") or op.attr("transB") or op.attr("alpha") != 1.0:
        return False
    c = op.operand_group("C")
    if c and (op.attr("beta") != 1.0 or not bias_row(c[0], b[1])):
        return False
    return a[1] == b[0] and _rows_fit(b[0], b[1])


@dataclass
class _Tail:
    """A product's last value so far in the run, and what it has absorbed."""

    bias: bool
    relu: bool = False
    shift: bool = False
    """A per-channel scale's layer: a per-channel Add may join it."""


@dataclass
class _Run:
    ops: list[Operation] = field(default_factory=list)
    tails: dict[SSAValue, _Tail] = field(default_factory=dict)


def _single_use(value: SSAValue) -> bool:
    return value.has_one_use()


def _image(value: SSAValue) -> list[int] | None:
    """The static NCHW shape of a float32 image, else None."""
    shape = _shape(value)
    return shape if shape is not None and len(shape) == 4 else None


def channel_operands(op: Operation) -> tuple[SSAValue, SSAValue] | None:
    """(the image, the constant) of a Mul or Add of a computed NCHW image and
    a constant of one value per channel ([C, 1, 1] or [1, C, 1, 1]: an
    unfolded BatchNormalization's scale or shift), else None."""
    if len(op.operands) != 2 or not op.results:
        return None
    for image, constant in (op.operands, op.operands[::-1]):
        shape = _image(image)
        if (shape is not None and not isinstance(image.owner, ConstantOp)
                and isinstance(constant.owner, ConstantOp) and _image(op.results[0]) == shape
                and _shape(constant) in ([shape[1], 1, 1], [1, shape[1], 1, 1])):  # fmt: skip
            return image, constant
    return None


def is_shift_epilogue(op: Operation) -> bool:
    """Whether `op` is a per-channel Add of the only use of a per-channel Mul:
    the Mul's layer adds it (scale, then shift)."""
    found = channel_operands(op) if isinstance(op, AddOp) else None
    if found is None:
        return False
    image = found[0]
    return (isinstance(image.owner, MulOp) and channel_operands(image.owner) is not None
            and _single_use(image))  # fmt: skip


def _addends_ok(op: AddOp | SumOp) -> bool:
    """Two computed images of one shape (no broadcasting)."""
    shapes = [_image(v) for v in (*op.operands, op.results[0])]
    return (len(op.operands) == 2 and shapes[0] is not None and shapes.count(shapes[0]) == 3
            and not any(isinstance(v.owner, ConstantOp) for v in op.operands))  # fmt: skip


def pool_pads(op: MaxPoolOp | AveragePoolOp, spatial: Sequence[int]) -> list[tuple[int, int]]:
    """The window's (begin, end) padding per spatial axis, an end grown to
    hold the last window of `ceil_mode`."""
    kernel = op.attr("kernel_shape")
    strides, _, pads = window_params(op.attr, spatial, kernel)
    out = _shape(op.results[0])
    assert out is not None
    return [(lo, max(hi, (o - 1) * st + k - n - lo))
            for (lo, hi), o, st, k, n in zip(pads, out[2:], strides, kernel, spatial)]  # fmt: skip


def _pool_ok(op: MaxPoolOp | AveragePoolOp) -> bool:
    """2-D, undilated, at most `max_taps` taps, a column stride the strided
    load takes; an average that counts its padding only without ceil mode
    (whose windows past the padding count that too); a padded max pool's
    input read padded by no window that pads with zeros (its halo holds
    -inf)."""
    x = _image(op.operands[0])
    if x is None or _image(op.results[0]) is None or len(op.results) > 1:  # MaxPool's Indices
        return False
    kernel, strides = op.attr("kernel_shape"), op.attr("strides") or [1, 1]
    if len(kernel) != 2 or any(d != 1 for d in op.attr("dilations") or [1, 1]):
        return False
    if math.prod(kernel) > max_taps(NpuParams()) or not 1 <= strides[-1] <= MAX_STEP:
        return False
    padded = any(any(p) for p in pool_pads(op, x[2:]))
    if isinstance(op, AveragePoolOp):  # counts with the padding, or each its own
        return not padded or not op.attr("count_include_pad") or not op.attr("ceil_mode")
    if op.attr("storage_order") != 0:
        return False
    return not padded or not any(_pads_with_zeros(use.operation) for use in op.operands[0].uses)


def _pads_with_zeros(op: Operation) -> bool:
    """Whether `op` reads its input through a window padded with zeros."""
    if isinstance(op, ConvOp | AveragePoolOp):
        x = _image(op.operands[0])
        if x is None:
            return True  # not the NPU's: whatever it is, keep the halo apart
        if isinstance(op, AveragePoolOp):
            return any(any(p) for p in pool_pads(op, x[2:]))
        w = _shape(op.operands[1])
        return w is None or any(any(p) for p in window_params(op.attr, x[2:], w[2:])[2])
    return False


def is_concat_view(value: SSAValue) -> bool:
    """Whether a concatenated image is computed into its channels of the
    result: computed by a layer for the concatenation alone (in a segment,
    any op's result that only the Concat reads). Any other input (a
    segment's input, an image read elsewhere too) is copied in."""
    owner = value.owner
    return (isinstance(owner, Operation) and not isinstance(owner, ConcatOp | ConstantOp)
            and _single_use(value))  # fmt: skip


def _concat_ok(op: ConcatOp, run: _Run) -> bool:
    """Distinct computed images of batch 1 along the channels; those a layer
    of the run computes for it alone become views of the result, the others
    are copied in by the vector unit."""
    shapes = [_image(v) for v in (*op.operands, op.results[0])]
    if any(s is None or s[0] != 1 for s in shapes) or op.attr("axis") % 4 != 1:
        return False
    views = [v for v in op.operands if is_concat_view(v)]
    return (len(set(op.operands)) == len(op.operands) and all(v in run.tails for v in views)
            and not any(isinstance(v.owner, ConstantOp) for v in op.operands))  # fmt: skip


def _takes(op: Operation, run: _Run) -> bool:
    """Whether `op` joins the run (updating its tails)."""
    if isinstance(op, QUANTISED_PRODUCTS):
        if not _quantised_ok(op):
            return False
        run.tails[op.results[0]] = _Tail(bias=True, relu=True)  # requantised: takes no epilogue
        return True
    if isinstance(op, ConvOp):
        if not _conv_ok(op):
            return False
        run.tails[op.results[0]] = _Tail(bias=True)  # a bias Add would be per channel
        return True
    if isinstance(op, MatMulOp | GemmOp):
        if not (_matmul_ok(op) if isinstance(op, MatMulOp) else _gemm_ok(op)):
            return False
        run.tails[op.results[0]] = _Tail(
            bias=bool(isinstance(op, GemmOp) and op.operand_group("C"))
        )
        return True
    if isinstance(op, AddOp):
        for mine, other in ((0, 1), (1, 0)):
            tail = run.tails.get(op.operands[mine])
            shape = _shape(op.operands[mine])
            if (tail is not None and not tail.bias and not tail.relu and shape is not None
                    and _single_use(op.operands[mine]) and _shape(op.results[0]) == shape
                    and bias_row(op.operands[other], shape[-1])):  # fmt: skip
                del run.tails[op.operands[mine]]
                run.tails[op.results[0]] = _Tail(bias=True)
                return True
    if isinstance(op, AddOp) and is_shift_epilogue(op):
        x = next(v for v in op.operands if not isinstance(v.owner, ConstantOp))
        if run.tails.get(x, _Tail(bias=True)).shift:
            del run.tails[x]
            run.tails[op.results[0]] = _Tail(bias=True)
            return True
    if isinstance(op, MulOp | AddOp) and channel_operands(op) is not None:
        run.tails[op.results[0]] = _Tail(bias=True, shift=isinstance(op, MulOp))
        return True
    if isinstance(op, GlobalAveragePoolOp):
        x = _image(op.operands[0])
        if x is None or x[2] * x[3] > max_taps(NpuParams()):
            return False
        run.tails[op.results[0]] = _Tail(bias=True)
        return True
    if isinstance(op, AddOp | SumOp | MaxPoolOp | AveragePoolOp):
        if not (_pool_ok(op) if isinstance(op, MaxPoolOp | AveragePoolOp) else _addends_ok(op)):
            return False
        run.tails[op.results[0]] = _Tail(bias=True)  # a Relu may follow
        return True
    if isinstance(op, ConcatOp):
        if not _concat_ok(op, run):
            return False
        for value in op.operands:
            if is_concat_view(value):
                del run.tails[value]
        return True
    if isinstance(op, ReluOp):
        tail = run.tails.get(op.operands[0])
        if tail is None or tail.relu or not _single_use(op.operands[0]):
            return False
        del run.tails[op.operands[0]]
        run.tails[op.results[0]] = _Tail(tail.bias, relu=True)
        return True
    return False


def outline(ops: Sequence[Operation]) -> tuple[Block, list[SSAValue], dict[SSAValue, SSAValue],
                                               list[Operation]]:  # fmt: skip
    """A block holding clones of `ops` and of the constants they read (for a
    region isolated from above, or a function): its arguments are the other
    values they read from outside, in order of first use. Returns the block
    (no terminator yet), those values, the map from originals to clones and
    the constants."""
    inside = set(ops)
    inputs: list[SSAValue] = []
    constants: list[Operation] = []
    for op in ops:
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, ConstantOp):
                if owner not in constants:
                    constants.append(owner)
            elif owner not in inside and operand not in inputs:
                inputs.append(operand)
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
    for op in [*constants, *ops]:
        clone = op.clone(value_mapper=mapping)
        block.add_op(clone)
        mapping.update(zip(op.results, clone.results, strict=True))
    return block, inputs, mapping, constants


def _segment(run: Sequence[Operation], name: str) -> None:
    """Replaces the run by an `npu.segment` holding it (and its constants)."""
    inside = set(run)
    block, inputs, mapping, constants = outline(run)
    outputs = [r for op in run for r in op.results
               if any(use.operation not in inside for use in r.uses)]  # fmt: skip
    block.add_op(YieldOp(*[mapping[v] for v in outputs]))
    segment = SegmentOp(name, inputs, [v.type for v in outputs], Region(block))
    last, block = run[-1], run[-1].parent
    assert block is not None
    block.insert_op_after(segment, last)
    for old, new in zip(outputs, segment.results, strict=True):
        old.replace_all_uses_with(new)
    for op in reversed(run):
        block.erase_op(op)
    for constant in constants:
        if constant.parent is block and not constant.results[0].uses:
            block.erase_op(constant)


def partition(func: FuncOp) -> list[SegmentOp]:
    """Forms the segments of `func` (see the module docstring)."""
    runs: list[list[Operation]] = []
    run = _Run()
    for op in list(func.body.block.ops):
        if isinstance(op, ConstantOp):
            continue
        if not isinstance(op, ReturnOp) and _takes(op, run):
            run.ops.append(op)
            continue
        if run.ops:
            runs.append(run.ops)
        run = _Run()
    for index, ops in enumerate(runs):
        _segment(ops, f"npu{index}")
    return [op for op in func.body.block.ops if isinstance(op, SegmentOp)]


@dataclass(frozen=True)
class PartitionNpuPass(ModulePass):
    """Wraps the runs of graph ops the NPU takes into `npu.segment`s; the rest
    stays on the host."""

    name = "graph-partition-npu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        partition(entry_function(op))


__all__ = ["PartitionNpuPass", "bias_row", "channel_operands", "is_concat_view",
           "is_shift_epilogue", "outline", "partition", "pool_pads"]  # fmt: skip
