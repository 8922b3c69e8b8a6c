"""Signal `graph` ops: ONNX DFT (opset 20), STFT, the window functions
(HannWindow, HammingWindow, BlackmanWindow) and MelWeightMatrix.

Complex tensors are real ones with a trailing dim of 2 (real, imaginary); a
trailing dim of 1 is a real signal. A DFT along one axis is linear in the
signal's real and imaginary parts: `dft_matrix` gives the real matrix
`M[k, c_out, t, c_in]` with `out[k, c_out] = sum_(t, c_in) M[k, c_out, t, c_in]
* x[t, c_in]` for every variant (forward, inverse, one-sided forward, and the
one-sided inverse, which is NumPy's `irfft`: Hermitian input, real output).
The lowering contracts with it as a constant; the reference kernels use
NumPy's FFT, so the two are independent.

The window functions and MelWeightMatrix take their sizes as operands: their
result shapes are known when those are (constants, or shape arithmetic from
them), and `graph-fold-constants` turns them into constants then.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from ember.dialects.graph.base import GraphOp, graph_op
from ember.dialects.graph.shapes import ShapeContext, ShapeError, result
from ember.dialects.graph.spec import OpSpec, int_attr, one, opt
from ember.dialects.graph.symbolic import Dim
from ember.dialects.graph.types import (
    DYNAMIC,
    UnsupportedTypeError,
    element_type_from_onnx,
    is_float,
)

# ---------------------------------------------------------------- the DFT


def dft_matrix(size: int, channels: int, length: int, inverse: bool,
               onesided: bool) -> np.ndarray:  # fmt: skip
    """The real matrix `M[k, c_out, t, c_in]` of a DFT of `length` points along
    an axis of `size` input positions with `channels` (1: real, 2: complex)
    components: the input is cut or zero-padded to `length` (so `t` runs over
    `min(size, length)`), and `k` over the output positions (`length // 2 +
    1` for a one-sided forward DFT). A one-sided inverse reads the first
    `length // 2 + 1` bins as half of a Hermitian spectrum and gives a real
    signal (`c_out` = 1), as NumPy's `irfft`."""
    irfft = inverse and onesided
    used = min(size, length // 2 + 1 if irfft else length)
    out = length // 2 + 1 if onesided and not inverse else length
    k, t = np.arange(out)[:, None], np.arange(used)[None, :]
    angle = 2 * np.pi * ((k * t) % length) / length
    cos, sin = np.cos(angle), np.sin(angle)
    if irfft:  # t is the output position, k the bin: here (out, used) is (t, bin)
        bins = np.arange(used)
        weight = np.where((bins == 0) | (2 * bins == length), 1.0, 2.0) / length
        real_in = weight * cos
        matrix = np.stack([real_in, -weight * sin], axis=-1)[:, None]
    elif inverse:
        cos, sin = cos / length, sin / length
        matrix = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], axis=1)
    else:
        matrix = np.stack([np.stack([cos, sin], -1), np.stack([-sin, cos], -1)], axis=1)
    return matrix[..., :channels]


def dft_output(
    size: Dim, length: Dim | None, inverse: bool, onesided: bool
) -> tuple[Dim, Dim, int]:
    """(points, output length along the axis, output channels) of a DFT of an
    axis of `size` with `dft_length` `length` (None: absent)."""
    if inverse and onesided:
        if length is None:
            length = DYNAMIC if size == DYNAMIC else 2 * (int(size) - 1)
        return length, length, 1
    if length is None:
        length = size
    if length == DYNAMIC:
        return length, DYNAMIC, 2
    return length, int(length) // 2 + 1 if onesided else length, 2


def _float_signal(ctx: ShapeContext, name: str) -> list[Dim]:
    shape = list(ctx.shape(name))
    if not is_float(ctx.element_type(name)):
        raise ShapeError(f"{name} must be a float tensor, got {ctx.type(name)}")
    if len(shape) < 2 or shape[-1] not in (1, 2, DYNAMIC):
        raise ShapeError(f"{name} must end in a dim of 1 (real) or 2 (complex), got {shape}")
    return shape


def _scalar_int(ctx: ShapeContext, name: str) -> int | None:
    """An optional integer scalar operand's value (None: absent or unknown)."""
    if not ctx.has(name):
        return None
    if ctx.shape(name) not in ((), (1,)):
        raise ShapeError(f"{name} must be a scalar, got {ctx.type(name)}")
    values = ctx.int_values(name)
    return None if values is None else int(values[0])


def dft_axis(ctx: ShapeContext, rank: int) -> int | None:
    """The transformed axis in [0, rank - 1), None when not known yet."""
    if not ctx.has("axis"):
        return rank - 2
    axis = _scalar_int(ctx, "axis")
    if axis is None:
        return None
    if not -rank <= axis < rank or axis % rank == rank - 1:
        raise ShapeError(f"axis {axis} must be a signal axis of a rank-{rank} input, not the last")
    return axis % rank


def dft(ctx: ShapeContext) -> list[TensorType]:
    shape = _float_signal(ctx, "input")
    element_type = ctx.element_type("input")
    axis = dft_axis(ctx, len(shape))
    length: Dim | None = _scalar_int(ctx, "dft_length")
    if ctx.has("dft_length") and length is None:
        length = DYNAMIC
    if length is not None and length != DYNAMIC and int(length) < 1:
        raise ShapeError(f"dft_length must be positive, got {length}")
    inverse, onesided = bool(ctx.attr("inverse")), bool(ctx.attr("onesided"))
    if axis is None:
        return result(element_type, [DYNAMIC] * (len(shape) - 1) + [2 - (inverse and onesided)])
    _, out, channels = dft_output(shape[axis], length, inverse, onesided)
    shape[axis] = out
    shape[-1] = channels
    return result(element_type, shape)


def stft_frames(ctx: ShapeContext) -> tuple[int, int, int] | None:
    """(frame step, frame length, frames) when known."""
    shape = ctx.shape("signal")
    step = _scalar_int(ctx, "frame_step")
    length = _scalar_int(ctx, "frame_length")
    if ctx.has("window"):
        window = ctx.shape("window")
        if len(window) != 1:
            raise ShapeError(f"window must be 1-D, got {ctx.type('window')}")
        if length is not None and window[0] not in (length, DYNAMIC):
            raise ShapeError(f"window has {window[0]} elements, frame_length is {length}")
        length = window[0] if length is None and window[0] != DYNAMIC else length
    elif length is None and not ctx.has("frame_length"):
        length = shape[1] if shape[1] != DYNAMIC else None
    if step is None or length is None or shape[1] == DYNAMIC:
        return None
    if step < 1 or length < 1 or length > shape[1]:
        raise ShapeError(f"frames of {length} by steps of {step} must fit the signal's "
                         f"{shape[1]} samples")  # fmt: skip
    return step, length, 1 + (int(shape[1]) - length) // step


def stft(ctx: ShapeContext) -> list[TensorType]:
    shape = _float_signal(ctx, "signal")
    if len(shape) != 3:
        raise ShapeError(f"signal must be [batch, length, 1 or 2], got {shape}")
    frames = stft_frames(ctx)
    if frames is None:
        return result(ctx.element_type("signal"), [shape[0], DYNAMIC, DYNAMIC, 2])
    _, length, count = frames
    bins = length // 2 + 1 if ctx.attr("onesided") else length
    return result(ctx.element_type("signal"), [shape[0], count, bins, 2])


# ------------------------------------------------ windows and mel filters


COSINE_SUMS = {
    "HannWindow": (0.5, 0.5, 0.0),
    "HammingWindow": (25 / 46, 21 / 46, 0.0),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}
"""`w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)`, N the size (periodic)
or the size - 1 (symmetric)."""


def output_type(ctx: ShapeContext) -> Attribute:
    try:
        element_type = element_type_from_onnx(int(ctx.attr("output_datatype")))
    except UnsupportedTypeError as error:
        raise ShapeError(f"output_datatype: {error}") from error
    return element_type


def window(ctx: ShapeContext) -> list[TensorType]:
    if ctx.shape("size") not in ((), (1,)) or is_float(ctx.element_type("size")):
        raise ShapeError(f"size must be an integer scalar, got {ctx.type('size')}")
    size = _scalar_int(ctx, "size")
    if size is not None and size < 0:
        raise ShapeError(f"size must not be negative, got {size}")
    return result(output_type(ctx), [DYNAMIC if size is None else size])


def mel_weight_matrix(ctx: ShapeContext) -> list[TensorType]:
    for name in ("num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                 "upper_edge_hertz"):  # fmt: skip
        if ctx.shape(name) not in ((), (1,)):
            raise ShapeError(f"{name} must be a scalar, got {ctx.type(name)}")
    bins, length = _scalar_int(ctx, "num_mel_bins"), _scalar_int(ctx, "dft_length")
    spectrum = DYNAMIC if length is None else length // 2 + 1
    return result(output_type(ctx), [spectrum, DYNAMIC if bins is None else bins])


_WINDOW_ATTRS = (int_attr("output_datatype", 1), int_attr("periodic", 1))

SPECS = [
    OpSpec("DFT", [one("input"), opt("dft_length"), opt("axis")], [one("output")], dft,
           attributes=(int_attr("inverse", 0), int_attr("onesided", 0)),
           summary="Discrete Fourier transform along one axis (complex as a trailing 2)."),
    OpSpec("STFT", [one("signal"), one("frame_step"), opt("window"), opt("frame_length")],
           [one("output")], stft, attributes=(int_attr("onesided", 1),),
           summary="Short-time Fourier transform: the DFT of windowed frames."),
    *(OpSpec(name, [one("size")], [one("output")], window, attributes=_WINDOW_ATTRS,
             summary=f"The {name[:-6]} window of `size` points.") for name in COSINE_SUMS),
    OpSpec("MelWeightMatrix", [one("num_mel_bins"), one("dft_length"), one("sample_rate"),
                               one("lower_edge_hertz"), one("upper_edge_hertz")],
           [one("output")], mel_weight_matrix, attributes=(int_attr("output_datatype", 1),),
           summary="Triangular mel filters over the bins of a one-sided spectrum."),
]  # fmt: skip


@graph_op(SPECS)
class DFTOp(GraphOp): ...


@graph_op(SPECS)
class STFTOp(GraphOp): ...


@graph_op(SPECS)
class HannWindowOp(GraphOp): ...


@graph_op(SPECS)
class HammingWindowOp(GraphOp): ...


@graph_op(SPECS)
class BlackmanWindowOp(GraphOp): ...


@graph_op(SPECS)
class MelWeightMatrixOp(GraphOp): ...
