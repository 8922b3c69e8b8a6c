"""`convert-graph-to-npu`: each `npu.segment` (see `partition`) to an NPU
program, its DRAM image and where its operands and results live.

`lower_segment` walks a segment's body: a MatMul or Gemm becomes one
product (`matmul.Matmul`: A's leading dims are its rows, so a
`[B, S, K] x [K, N]` MatMul is one `[B*S, K] x [K, N]` product), a bias
Add or a Relu after it part of that product, and the products run one
after the other, each with its default schedule (`matmul.default_schedule`,
printed by the report). Memory is laid out once, at compile time (DRAM is
byte-addressed, every tensor row-major and 64-byte aligned):

    [ones column][weights and biases][segment inputs][intermediates][outputs]

The weights are written into the segment's DRAM image now; a run copies
the image, writes the inputs at their addresses, runs the program and
reads the outputs back (`targets/npu/device.py`; the whole model: `targets/npu/compile.py`).

The pass form (`ember-opt -p graph-partition-npu,convert-graph-to-npu`)
puts each program next to the function as an `npu.program` and replaces
the segment by an `npu.launch` of it with the DRAM addresses of its
operands and results, so the program can be read and checked with lit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

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
from ember.dialects.graph.ops_tensor import constant_data
from ember.dialects.npu.machine import F32, INT8, Instruction, NpuParams, NpuProgramError
from ember.dialects.npu.ops import ProgramOp, instruction_op
from ember.dialects.npu.schedule import SCHEDULE_ATTR, TUNED_ATTR, NpuScheduleAttr
from ember.dialects.npu.segment import LaunchOp, SegmentOp, YieldOp
from ember.dialects.source_names import describe_names, source_names
from ember.lowering.graph_to_npu.matmul import (
    Matmul,
    MatmulSchedule,
    Planes,
    ProgramBuilder,
    RowMajor,
    default_schedule,
    dense,
    emit_matmul,
    emit_products,
)
from ember.lowering.graph_to_npu.partition import (
    channel_operands,
    is_concat_view,
    is_shift_epilogue,
    pool_pads,
)
from ember.lowering.graph_to_npu.quantised import (
    QUANTISED_PRODUCTS,
    QuantisedProduct,
    int8_product,
    int8_zero_point,
    is_int8,
)
from ember.lowering.graph_to_npu.vector import (
    PerRow,
    VectorOp,
    VectorSchedule,
    emit_vector,
    vector_schedule,
)
from ember.lowering.graph_to_tensor.windows import window_params

ALIGN = 64


@dataclass(frozen=True)
class Placement:
    """A tensor in DRAM: its first byte, shape and type (row-major, dense)."""

    address: int
    shape: tuple[int, ...]
    dtype: np.dtype
    halo: tuple[int, int] = (0, 0)
    """NCHW images: the rows and columns of padding stored around each plane."""
    fill: float = 0
    """The padding's value: 0, -inf (a max pool's), or an int8 image's zero
    point (the quantised 0.0)."""

    @property
    def stored_shape(self) -> tuple[int, ...]:
        if self.halo == (0, 0):
            return self.shape
        *outer, height, width = self.shape
        return (*outer, height + 2 * self.halo[0], width + 2 * self.halo[1])

    @property
    def nbytes(self) -> int:
        """The bytes it takes in DRAM (with its halo)."""
        return int(np.prod(self.stored_shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def pitch_bytes(self) -> int:
        return self.stored_shape[-1] * self.dtype.itemsize

    @property
    def plane_bytes(self) -> int:
        return self.stored_shape[-2] * self.pitch_bytes

    @property
    def image_bytes(self) -> int:
        return self.stored_shape[-3] * self.plane_bytes

    def store(self, array: np.ndarray) -> np.ndarray:
        """`array` as its DRAM bytes (padded with the halo)."""
        array = np.ascontiguousarray(array, dtype=self.dtype)
        if self.halo != (0, 0):
            (h, w), outer = self.halo, [(0, 0)] * (array.ndim - 2)
            array = np.pad(array, [*outer, (h, h), (w, w)], constant_values=self.fill)
        return array.reshape(-1).view(np.uint8)

    def load(self, data: np.ndarray) -> np.ndarray:
        """The tensor from its DRAM bytes (the halo cut off)."""
        stored = data.view(self.dtype).reshape(self.stored_shape)
        if self.halo != (0, 0):
            (h, w) = self.halo
            stored = stored[..., h : stored.shape[-2] - h, w : stored.shape[-1] - w]
        return stored.copy()


@dataclass(frozen=True)
class Layer:
    """One layer of a segment, for reports: the graph ops it runs (one
    product, or one per image of a convolution), its schedule and its
    instructions' indices in the program."""

    ops: str
    shape: str
    """m x k x n and the type (`batch x ...` for a convolution's images)."""
    macs: int
    schedule: MatmulSchedule | VectorSchedule
    instructions: range
    tuned: bool = False
    """Whether its schedule came from tuning records (`npu.tuned` on its op)."""


@dataclass
class NpuKernel:
    """A segment compiled: its program, DRAM image and the placement of its
    operands and results."""

    name: str
    params: NpuParams
    program: list[Instruction]
    image: np.ndarray
    inputs: list[Placement]
    outputs: list[Placement]
    layers: list[Layer] = field(default_factory=list)


class _Dram:
    """A bump allocator over the DRAM image, with the bytes known now."""

    def __init__(self) -> None:
        self.chunks: list[tuple[int, bytes]] = []
        self.top = 0

    def place(self, shape: tuple[int, ...], dtype: np.dtype, data: np.ndarray | None = None,
              halo: tuple[int, int] = (0, 0), fill: float = 0) -> Placement:  # fmt: skip
        placement = Placement(self.top, shape, np.dtype(dtype), halo, fill)
        if data is None and fill:  # the halo a producer's stores leave as it is
            data = np.full(placement.stored_shape, fill, dtype)
        if data is not None:
            self.chunks.append((self.top, np.ascontiguousarray(data, dtype=dtype).tobytes()))
        self.top += -(-max(placement.nbytes, 1) // ALIGN) * ALIGN
        return placement

    def image(self) -> np.ndarray:
        image = np.zeros(self.top, np.uint8)
        for address, data in self.chunks:
            image[address : address + len(data)] = np.frombuffer(data, np.uint8)
        return image


def op_label(op: Operation) -> str:
    """How reports name an op: by the model's nodes it came from
    (`conv1 + bn1 (graph.conv)`), else by its SSA name (`graph.conv %r63`)."""
    names = source_names(op)
    if names:
        return f"{describe_names(names)} ({op.name})"
    hint = op.results[0].name_hint if op.results else None
    return f"{op.name} %{hint}" if hint else op.name


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _dtype(value: SSAValue) -> np.dtype:
    """float32, or int8 (a quantised product's operand or result)."""
    return np.dtype(np.int8) if is_int8(value) else np.dtype(np.float32)


@dataclass(frozen=True)
class _Halo:
    size: tuple[int, int] = (0, 0)
    fill: float = 0


def _epilogue_of(op: Operation) -> SSAValue | None:
    """The value whose storage `op`'s result shares: a Relu's operand, a bias
    Add's or a per-channel shift's computed operand; None for any other op."""
    if isinstance(op, ReluOp):
        return op.operands[0]
    found = channel_operands(op) if isinstance(op, AddOp) else None
    if found is not None:  # a layer of its own, unless a per-channel Mul's shift
        return found[0] if is_shift_epilogue(op) else None
    if isinstance(op, AddOp) and any(isinstance(v.owner, ConstantOp) for v in op.operands):
        return next(v for v in op.operands if not isinstance(v.owner, ConstantOp))
    return None


def _window(op: Operation) -> tuple[SSAValue, list[tuple[int, int]], float] | None:
    """A windowed op's input, its (begin, end) padding and the padding's value."""
    if isinstance(op, ConvOp | QLinearConvOp):
        x, w = op.operands[0], op.operands[3 if isinstance(op, QLinearConvOp) else 1]
        _, _, pads = window_params(op.attr, _shape(x)[2:], _shape(w)[2:])
        return x, pads, int8_zero_point(op) if isinstance(op, QLinearConvOp) else 0
    if isinstance(op, MaxPoolOp | AveragePoolOp):
        x = op.operands[0]
        return x, pool_pads(op, _shape(x)[2:]), -np.inf if isinstance(op, MaxPoolOp) else 0
    return None


def _halos(ops: list[Operation]) -> dict[SSAValue, _Halo]:
    """The border each value's image is stored with: the widest padding a
    convolution reading it (or what aliases it: a Relu's result is its
    operand's storage) asks for, per side, of zeros or of the int8 zero
    point its quantised convolutions read."""
    root: dict[SSAValue, SSAValue] = {}
    halos: dict[SSAValue, _Halo] = {}
    for op in ops:
        tail, window = _epilogue_of(op), _window(op)
        if tail is not None:
            root[op.results[0]] = root.get(tail, tail)
        elif isinstance(op, ConcatOp):  # inputs computed into it are views of the result
            for value in op.operands:
                if is_concat_view(value):
                    root[root.get(value, value)] = root[value] = op.results[0]
        elif window is not None:
            x, pads, fill = window
            x = root.get(x, x)
            old = halos.get(x, _Halo())
            if not any(any(p) for p in pads):
                continue  # reads no halo
            if old.size != (0, 0) and fill != old.fill:
                raise NpuProgramError(f"{op_label(op)}: its input is also padded with {old.fill}, "
                                      f"not {fill}")  # fmt: skip
            halos[x] = _Halo((max(old.size[0], *pads[0]), max(old.size[1], *pads[1])), fill)
    return {value: halos.get(root.get(value, value), _Halo())
            for value in {*halos, *root}}  # fmt: skip


def _planes(place: Placement, image: int, width: int, offset: tuple[int, int] | None = None,
            **window: tuple[int, int]) -> Planes:  # fmt: skip
    """Image `image` of `place` read as a matrix (see `Planes`): by default its
    interior, [C, H*W]."""
    return Planes(place.address + image * place.image_bytes, place.plane_bytes, place.pitch_bytes,
                  width, place.dtype.itemsize, place.halo if offset is None else offset,
                  **window)  # fmt: skip


def _inside(outputs: int, stride: int, begin: int, size: int, extent: int) -> list[int]:
    """Along one axis, per output position, how many of a window's `size`
    taps fall inside the `extent` of the image (padding `begin` before it)."""
    return [sum(0 <= o * stride - begin + k < extent for k in range(size))
            for o in range(outputs)]  # fmt: skip


def _row_tiles(height: int, width: int, dim: int) -> tuple[tuple[int, int], ...]:
    """Column tiles of at most `dim` columns within each of `height` rows."""
    return tuple((y * width + x0, min(dim, width - x0))
                 for y in range(height) for x0 in range(0, width, dim))  # fmt: skip


class _Lowering:
    """One segment's products and memory, op by op."""

    def __init__(self, segment: SegmentOp, params: NpuParams):
        self.segment = segment
        self.params = params
        self.dram = _Dram()
        self.ones = self.dram.place((params.dim,), np.dtype(np.float32),
                                    np.ones(params.dim, np.float32))  # fmt: skip
        self.places: dict[SSAValue, Placement] = {}
        self.products: list[Matmul] = []
        self.layers: list[tuple[list[str], list[int]]] = []
        self.layer_ops: list[Operation] = []
        """Each layer's first op (a product's: where its `npu.schedule` is)."""
        self.producer: dict[SSAValue, int] = {}  # a result -> its layer
        self.ops = [op for op in segment.block.ops if not isinstance(op, ConstantOp | YieldOp)]
        self.halos = _halos(self.ops)
        self.int8: dict[Operation, tuple[RowMajor, RowMajor | None, dict[str, Any]]] = {}
        """Per quantised product: its weights, bias and int8 Matmul options."""

    def constant(self, value: SSAValue) -> Placement:
        if value not in self.places:
            array = constant_data(value)
            self.places[value] = self.dram.place(array.shape, array.dtype, array)
        return self.places[value]

    def place(self, value: SSAValue) -> Placement:
        if isinstance(value.owner, ConstantOp):
            return self.constant(value)
        if value not in self.places:
            halo = self.halos.get(value, _Halo())
            self.places[value] = self.dram.place(_shape(value), _dtype(value), halo=halo.size,
                                                 fill=halo.fill)  # fmt: skip
        return self.places[value]

    def layer(self, op: Operation, products: Sequence[Matmul | VectorOp]) -> None:
        self.layer_ops.append(op)
        self.layers.append(([op_label(op)], [*range(len(self.products), len(self.products)
                                                  + len(products))]))  # fmt: skip
        self.products += products
        self.producer[op.results[0]] = len(self.layers) - 1

    def matmul(self, op: MatMulOp | GemmOp) -> None:
        a, b = op.operands[0], op.operands[1]
        m, k = int(np.prod(_shape(a)[:-1])), _shape(a)[-1]
        n = _shape(b)[1]
        bias = None
        if isinstance(op, GemmOp) and op.operand_group("C"):
            bias = self.constant(op.operand_group("C")[0]).address
        out = self.place(op.results[0])
        self.layer(op, [dense(op_label(op), m, k, n, self.place(a).address, self.place(b).address,
                              out.address, bias)])  # fmt: skip

    def conv(self, op: ConvOp) -> None:
        """Per image, `Y[F, OH*OW] = W[F, C*KH*KW] X_col` with X_col read in
        place (`Planes` through the kernel window, strided) and the bias per
        row."""
        bias = op.operand_group("B")
        weights = self.place(op.operands[1])
        k = int(np.prod(_shape(op.operands[1])[1:]))
        self.convolution(op, RowMajor(weights.address, 4 * k, 4),
                         RowMajor(self.constant(bias[0]).address, 4, 4) if bias else None)  # fmt: skip

    def int8_weights(self, op: QuantisedProduct) -> None:
        """A quantised product's int8 weights (a convolution's as W[F, C*KH*KW],
        the products' as B[K, N]) and folded int32 bias into DRAM: a
        convolution's per row, each row's value repeated across a tile as the
        accumulator loads it; the products' a row read for every row (stride 0)."""
        product = int8_product(op)
        weights = product.weights.reshape(product.weights.shape[0], -1)
        place = self.dram.place(weights.shape, np.dtype(np.int8), weights)
        bias = None
        if product.bias is not None and isinstance(op, QLinearConvOp):
            rows = np.repeat(product.bias[:, None], self.params.dim, axis=1)
            bias = RowMajor(self.dram.place(rows.shape, np.dtype(np.int32), rows).address,
                            4 * self.params.dim, 4)  # fmt: skip
        elif product.bias is not None:
            bias = RowMajor(self.dram.place(product.bias.shape, np.dtype(np.int32),
                                            product.bias).address, 0, 4)  # fmt: skip
        self.int8[op] = (RowMajor(place.address, weights.shape[1], 1), bias, {
            "elem": INT8, "out": INT8, "scale": product.multiplier,
            "zero_point": product.y_zero_point})  # fmt: skip

    def qconv(self, op: QLinearConvOp) -> None:
        """As `conv`, int8 (see `quantised`), the store requantising."""
        weights, bias, options = self.int8[op]
        self.convolution(op, weights, bias, **options)

    def convolution(self, op: ConvOp | QLinearConvOp, weights: RowMajor, bias: RowMajor | None,
                    **options: Any) -> None:  # fmt: skip
        x, w = op.operands[0], op.operands[3 if isinstance(op, QLinearConvOp) else 1]
        (batch, channels, height, width), (filters, _, kh, kw) = _shape(x), _shape(w)
        strides, dilations, pads = window_params(op.attr, (height, width), (kh, kw))
        _, _, out_h, out_w = _shape(op.results[0])
        source, out = self.place(x), self.place(op.results[0])
        k = channels * kh * kw
        tiles = _row_tiles(out_h, out_w, self.params.dim)
        products = []
        for image in range(batch):
            b = _planes(source, image, out_w, (source.halo[0] - pads[0][0],
                                               source.halo[1] - pads[1][0]),
                        kernel=(kh, kw), dilation=(dilations[0], dilations[1]),
                        strides=(strides[0], strides[1]))  # fmt: skip
            products.append(Matmul(op_label(op), filters, k, out_h * out_w, weights, b,
                                   _planes(out, image, out_w), bias, bias_per_row=True,
                                   col_tiles=tiles, **options))  # fmt: skip
        self.layer(op, products)

    def addition(self, op: AddOp | SumOp) -> None:
        """Per image, the two addends' tiles added on the vector unit (tiles
        run across output rows where no operand has a halo: the planes are
        dense)."""
        (batch, channels, height, width) = _shape(op.results[0])
        a, b, out = (self.place(v) for v in (*op.operands, op.results[0]))
        tiles = _row_tiles(height, width, self.params.dim)
        if all(p.halo == (0, 0) for p in (a, b, out)):
            tiles = _row_tiles(1, height * width, self.params.dim)
        self.layer(op, [VectorOp(op_label(op), channels, height * width,
                                 (_planes(a, image, width), _planes(b, image, width)),
                                 _planes(out, image, width), "add", tiles)
                        for image in range(batch)])  # fmt: skip

    def per_channel(self, op: Operation) -> PerRow:
        """A per-channel constant of `op` as rows of `dim` copies of each
        channel's value (a tile of them loads like any operand's)."""
        found = channel_operands(op)
        assert found is not None
        values = constant_data(found[1])
        rows = np.repeat(values.reshape(-1, 1).astype(np.float32), self.params.dim, axis=1)
        return PerRow(RowMajor(self.dram.place(rows.shape, np.dtype(np.float32), rows).address,
                               4 * self.params.dim, 4))  # fmt: skip

    def channel_layer(self, op: MulOp | AddOp) -> None:
        """Per image, a Mul (or Add) by a value per channel on the vector unit
        (a per-channel Add after the Mul joins its layer: `epilogue`)."""
        image, _ = channel_operands(op)  # type: ignore[misc]
        (batch, channels, height, width) = _shape(op.results[0])
        source, out = self.place(image), self.place(op.results[0])
        tiles = _row_tiles(height, width, self.params.dim)
        if source.halo == out.halo == (0, 0):
            tiles = _row_tiles(1, height * width, self.params.dim)
        which = "channel_scale" if isinstance(op, MulOp) else "channel_shift"
        self.layer(op, [VectorOp(op_label(op), channels, height * width,
                                 (_planes(source, image_index, width),),
                                 _planes(out, image_index, width), "add", tiles,
                                 **{which: self.per_channel(op)})  # type: ignore[arg-type]
                        for image_index in range(batch)])  # fmt: skip

    def pool(self, op: MaxPoolOp | AveragePoolOp | GlobalAveragePoolOp) -> None:
        """Per image, the max (or the mean) of the window's taps, each tap the
        input read through one kernel offset with the pool's strides (a global
        pool's window: the whole image). A mean whose count leaves out the
        padding multiplies by each position's 1 / count, a row of them read
        for every channel (stride 0)."""
        x = op.operands[0]
        (batch, channels, height, width), (_, _, out_h, out_w) = _shape(x), _shape(op.results[0])
        if isinstance(op, GlobalAveragePoolOp):
            (kh, kw), strides, pads = (height, width), [1, 1], [(0, 0), (0, 0)]
        else:
            kh, kw = op.attr("kernel_shape")
            strides = op.attr("strides") or [1, 1]
            pads = pool_pads(op, (height, width))
        source, out = self.place(x), self.place(op.results[0])
        tiles = _row_tiles(out_h, out_w, self.params.dim)
        average = not isinstance(op, MaxPoolOp)
        scale, per_position = (1 / (kh * kw) if average else 1.0), None
        if isinstance(op, AveragePoolOp) and not op.attr("count_include_pad") and \
                any(any(p) for p in pads):  # fmt: skip
            counts = np.outer(_inside(out_h, strides[0], pads[0][0], kh, height),
                              _inside(out_w, strides[1], pads[1][0], kw, width))  # fmt: skip
            reciprocal = (1 / counts).astype(np.float32).reshape(-1)
            scale = 1.0
            per_position = RowMajor(self.dram.place(reciprocal.shape, np.dtype(np.float32),
                                                    reciprocal).address, 0, 4)  # fmt: skip
        layers = []
        for image in range(batch):
            taps = tuple(_planes(source, image, out_w, (source.halo[0] - pads[0][0] + i,
                                                        source.halo[1] - pads[1][0] + j),
                                 strides=(strides[0], strides[1]))
                         for i in range(kh) for j in range(kw))  # fmt: skip
            layers.append(VectorOp(op_label(op), channels, out_h * out_w, taps,
                                   _planes(out, image, out_w), "add" if average else "max",
                                   tiles, scale, position_scale=per_position))  # fmt: skip
        self.layer(op, layers)

    def _channels_of(self, op: ConcatOp) -> list[Placement]:
        """Each input's channels of the concatenation's result, as views."""
        out = self.place(op.results[0])
        views, channel = [], 0
        for value in op.operands:
            views.append(dataclasses.replace(out, address=out.address + channel * out.plane_bytes,
                                             shape=_shape(value)))  # fmt: skip
            channel += _shape(value)[1]
        return views

    def concatenation_views(self) -> None:
        """Each concatenated image computed for the concatenation alone
        (`is_concat_view`) is computed into its channels of the result: its
        storage (that of the value a Relu or bias Add after its layer
        shares) is a view of the result's."""
        for op in self.ops:
            if not isinstance(op, ConcatOp):
                continue
            for value, view in zip(op.operands, self._channels_of(op), strict=True):
                if not is_concat_view(value):
                    continue
                root = value
                while (tail := _epilogue_of(root.owner)) is not None:  # type: ignore[arg-type]
                    root = tail
                self.places[root] = view

    def concatenation_copies(self, op: ConcatOp) -> None:
        """The inputs not computed into the result (see
        `concatenation_views`) copied into their channels on the vector unit."""
        copies = []
        for value, view in zip(op.operands, self._channels_of(op), strict=True):
            if is_concat_view(value):
                continue
            source = self.place(value)
            _, channels, height, width = _shape(value)
            tiles = _row_tiles(height, width, self.params.dim)
            if source.halo == view.halo == (0, 0):
                tiles = _row_tiles(1, height * width, self.params.dim)
            copies.append(VectorOp(op_label(op), channels, height * width,
                                   (_planes(source, 0, width),), _planes(view, 0, width), "add",
                                   tiles))  # fmt: skip
        if copies:
            self.layer(op, copies)
            del self.producer[op.results[0]]  # nothing joins a copy

    def qmatmul(self, op: QLinearMatMulOp | QGemmOp) -> None:
        """An int8 product (see `quantised`): A's leading dims are its rows,
        B's (transposed at compile time under transB) columns its output
        channels, the store requantising."""
        weights, bias, options = self.int8[op]
        a = op.operands[0]
        m, k, n = int(np.prod(_shape(a)[:-1])), _shape(a)[-1], weights.row_bytes
        out = self.place(op.results[0])
        self.layer(op, [Matmul(op_label(op), m, k, n, RowMajor(self.place(a).address, k, 1),
                               weights, RowMajor(out.address, n, 1), bias, **options)])  # fmt: skip

    def epilogue(self, op: AddOp | ReluOp) -> None:
        """A bias Add or Relu of a layer's only use, applied by that layer."""
        tail = next(v for v in op.operands if v in self.producer)
        layer = self.producer.pop(tail)
        names, indices = self.layers[layer]
        for index in indices:
            product = self.products[index]
            if isinstance(op, AddOp) and isinstance(product, VectorOp):
                change = {"channel_shift": self.per_channel(op)}
            elif isinstance(op, AddOp):
                row = next(v for v in op.operands if v is not tail)
                change = {"bias": RowMajor(self.constant(row).address, 4 * product.n, 4)}
            else:
                change = {"relu": True}
            self.products[index] = dataclasses.replace(product, **change)  # type: ignore[arg-type]
        names.append(op_label(op))
        self.places[op.results[0]] = self.places[tail]
        self.producer[op.results[0]] = layer

    def build(self) -> None:
        """Places the segment's tensors and forms its layers (see `lower`)."""
        for op in self.ops:  # the weights first, then the activations
            if isinstance(op, QUANTISED_PRODUCTS):
                self.int8_weights(op)
                continue
            for operand in op.operands:
                if isinstance(operand.owner, ConstantOp):
                    self.constant(operand)
        self.concatenation_views()
        for arg in self.segment.block.args:
            self.place(arg)
        for op in self.ops:
            if _epilogue_of(op) is not None:
                self.epilogue(op)  # type: ignore[arg-type]
            elif isinstance(op, MulOp | AddOp) and channel_operands(op) is not None:
                self.channel_layer(op)
            elif isinstance(op, AddOp | SumOp):
                self.addition(op)
            elif isinstance(op, MaxPoolOp | AveragePoolOp | GlobalAveragePoolOp):
                self.pool(op)
            elif isinstance(op, ConcatOp):
                self.concatenation_copies(op)
            elif isinstance(op, MatMulOp | GemmOp):
                self.matmul(op)
            elif isinstance(op, ConvOp):
                self.conv(op)
            elif isinstance(op, QLinearConvOp):
                self.qconv(op)
            elif isinstance(op, QLinearMatMulOp | QGemmOp):
                self.qmatmul(op)
            else:
                raise NpuProgramError(f"npu.segment @{self.segment.sym_name.data}: {op.name} is "
                                      "not an op the NPU lowering takes")  # fmt: skip

    def default_schedules(self) -> dict[Operation, MatmulSchedule]:
        """Per product's op, the schedule `default_schedule` picks for it (for
        its first product: a convolution's images share it)."""
        return {op: default_schedule(self.products[indices[0]], self.params)
                for op, (_, indices) in zip(self.layer_ops, self.layers, strict=True)
                if isinstance(self.products[indices[0]], Matmul)}  # fmt: skip

    def schedules(self) -> list[MatmulSchedule | VectorSchedule]:
        """Every layer's schedule: a product's from its op's `npu.schedule`
        when it has one, else the default."""
        chosen: list[MatmulSchedule | VectorSchedule] = []  # layers hold consecutive products
        for op, (_, indices) in zip(self.layer_ops, self.layers, strict=True):
            given = op.attributes.get(SCHEDULE_ATTR)
            for index in indices:
                product = self.products[index]
                if isinstance(product, VectorOp):
                    chosen.append(vector_schedule(product, self.params))
                elif isinstance(given, NpuScheduleAttr):
                    chosen.append(MatmulSchedule(*given.values))
                else:
                    chosen.append(default_schedule(product, self.params))
        return chosen

    def lower(self) -> NpuKernel:
        self.build()
        schedules = self.schedules()
        builder = ProgramBuilder(self.params, {F32.code: self.ones.address})
        ranges = emit_products(builder, self.products, schedules, _emit_layer)
        layers = []
        for op, (names, indices) in zip(self.layer_ops, self.layers, strict=True):
            first = self.products[indices[0]]
            macs = sum(self.products[i].macs for i in indices)
            shape = first.summary() if isinstance(first, VectorOp) else \
                f"{first.m}x{first.k}x{first.n} {first.elem.name}"  # fmt: skip
            layers.append(Layer(", ".join(names), f"{len(indices)} x {shape}" if len(indices) > 1
                                else shape, macs, schedules[indices[0]],
                                range(ranges[indices[0]].start, ranges[indices[-1]].stop),
                                TUNED_ATTR in op.attributes))  # fmt: skip
        terminator = self.segment.block.last_op
        assert isinstance(terminator, YieldOp)
        return NpuKernel(self.segment.sym_name.data, self.params, builder.finish(),
                         self.dram.image(), [self.places[a] for a in self.segment.block.args],
                         [self.places[v] for v in terminator.values], layers)  # fmt: skip


def _emit_layer(builder: ProgramBuilder, layer: Matmul | VectorOp,
                schedule: MatmulSchedule | VectorSchedule, more_follow: bool) -> range:  # fmt: skip
    if isinstance(layer, VectorOp):
        assert isinstance(schedule, VectorSchedule)
        return emit_vector(builder, layer, schedule, more_follow)
    assert isinstance(schedule, MatmulSchedule)
    return emit_matmul(builder, layer, schedule, more_follow)


def segment_lowering(segment: SegmentOp, params: NpuParams) -> _Lowering:
    """The lowering of one segment, before it runs (`build`, `schedules`, `lower`)."""
    return _Lowering(segment, params)


def lower_segment(segment: SegmentOp, params: NpuParams | None = None) -> NpuKernel:
    """The segment's program and memory (see the module docstring)."""
    return _Lowering(segment, params or NpuParams()).lower()


@dataclass(frozen=True)
class ConvertGraphToNpuPass(ModulePass):
    """Each `npu.segment` to an `npu.program` of its name (next to the
    function) and an `npu.launch` of it."""

    name = "convert-graph-to-npu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for segment in [s for s in op.walk() if isinstance(s, SegmentOp)]:
            try:
                kernel = lower_segment(segment)
            except NpuProgramError as error:
                raise DiagnosticException(f"convert-graph-to-npu: {error}") from None
            op.body.block.add_op(ProgramOp(kernel.name, [instruction_op(i) for i in kernel.program],
                                           kernel.params))  # fmt: skip
            launch = LaunchOp(kernel.name, list(segment.inputs), list(segment.result_types),
                              [p.address for p in kernel.inputs],
                              [p.address for p in kernel.outputs])  # fmt: skip
            assert segment.parent is not None
            segment.parent.insert_op_before(launch, segment)
            for old, new in zip(segment.results, launch.results, strict=True):
                old.replace_all_uses_with(new)
            segment.parent.erase_op(segment)


__all__ = ["ConvertGraphToNpuPass", "Layer", "NpuKernel", "Placement", "lower_segment",
           "segment_lowering"]  # fmt: skip
