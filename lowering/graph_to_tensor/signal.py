"""Graph-to-tensor lowering of the signal ops.

- DFT: one contraction generic with the constant matrix of the transform
  (`ops_signal.dft_matrix`, `[k, c_out, t, c_in]`), reducing over the input
  positions `t` and components `c_in`, in f64 (a sum whose terms cancel, an
  imaginary part that is zero, comes out zero to f32's precision, as the
  reference gives it), rounded to the input's type once at the end; an input longer than `dft_length` is
  cut first (`tensor.extract_slice`), a shorter one is padded implicitly (the
  matrix has no columns for the missing positions).
- STFT: the same contraction over frames: output `[b, f, k, c_out]` reads the
  signal at `f * frame_step + t` (an affine map, so frames are never copied
  out), times the window when there is one.
- HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix: constants
  computed by their reference kernels (their sizes must be constants; with
  constant operands `graph-fold-constants` has usually folded them already).

DFT's `axis` and `dft_length` and STFT's `frame_step` and `frame_length`
must be constants; the transform sizes are static."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f64
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from ember.dialects.graph import (
    BlackmanWindowOp,
    DFTOp,
    GraphOp,
    HammingWindowOp,
    HannWindowOp,
    MelWeightMatrixOp,
    STFTOp,
    constant_value_of,
)
from ember.dialects.graph.ops_signal import dft_matrix, dft_output
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    FamilyPattern,
    NeedsConstants,
    _constant_operands,
    _dim,
    _dims_map,
    _elem,
    _int_constant,
    _map,
    _shape,
)


def _contract(e: Emitter, signal: SSAValue, signal_read: list[AffineExpr], matrix: np.ndarray,
              matrix_read: list[int], out_shape: list[int],
              window: SSAValue | None = None) -> SSAValue:  # fmt: skip
    """out[...] = sum_(t, c_in) signal[signal_read] * (window[t]) * matrix[matrix_read, t, c_in],
    over the output dims then t and c_in (the last two loop dims)."""
    rank = len(out_shape)
    t, channel = rank, rank + 1
    loops = rank + 2
    elem = _elem(signal)
    m = e.constant(matrix.astype(np.float64))
    inputs = [signal, m]
    maps = [_map(loops, signal_read), _dims_map(loops, [*matrix_read, t, channel])]
    if window is not None:
        inputs.append(window)
        maps.append(_dims_map(loops, [t]))
    maps.append(_dims_map(loops, range(rank)))

    def body(b: Body, a: list[SSAValue]) -> list[SSAValue]:
        term = b.mul(b.convert(a[0], f64), a[1])
        if window is not None:
            term = b.mul(term, b.convert(a[2], f64))
        return [b.add(a[-1], term)]

    wide = e.generic(inputs, [e.fill(0.0, out_shape, f64)], maps,
                     [PARALLEL] * rank + [REDUCTION] * 2, body)[0]  # fmt: skip
    return wide if elem == f64 else e.parallel([wide], out_shape, elem,
                                               lambda b, a: b.convert(a[0], elem))  # fmt: skip


def _scalar(op: GraphOp, name: str) -> int | None:
    group = op.operand_group(name)
    return _int_constant(group[0])[0] if group else None


def _lower_dft(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operand_group("input")[0]
    shape = [int(d) for d in _shape(x)]
    rank = len(shape)
    axis = _scalar(op, "axis")
    axis = rank - 2 if axis is None else axis % rank
    inverse, onesided = bool(op.attr("inverse")), bool(op.attr("onesided"))
    points, _, _ = dft_output(shape[axis], _scalar(op, "dft_length"), inverse, onesided)
    matrix = dft_matrix(shape[axis], shape[-1], int(points), inverse, onesided)
    used = matrix.shape[2]
    if used < shape[axis]:
        x = e.extract(x, [0] * rank, [used if i == axis else d for i, d in enumerate(shape)])
    read = [_dim(rank if i == axis else rank + 1 if i == rank - 1 else i) for i in range(rank)]
    out_shape = [int(d) for d in _shape(op.results[0])]
    return [_contract(e, x, read, matrix, [axis, rank - 1], out_shape)]


def _lower_stft(e: Emitter, op: GraphOp) -> list[SSAValue]:
    x = op.operand_group("signal")[0]
    out_shape = [int(d) for d in _shape(op.results[0])]
    window = op.operand_group("window")
    length = _scalar(op, "frame_length")
    if length is None:
        length = int(_shape(window[0])[0]) if window else int(_shape(x)[1])
    step = _scalar(op, "frame_step")
    assert step is not None
    matrix = dft_matrix(length, int(_shape(x)[-1]), length, False, bool(op.attr("onesided")))
    read = [_dim(0), _dim(1) * step + _dim(4), _dim(5)]
    return [_contract(e, x, read, matrix, [2, 3], out_shape, window[0] if window else None)]


def _check_dft(op: GraphOp) -> str | None:
    if _constant_operands(op, "axis", "dft_length"):
        return None
    return NeedsConstants("axis and dft_length must be constants")


def _check_stft(op: GraphOp) -> str | None:
    if _constant_operands(op, "frame_step", "frame_length"):
        return None
    return NeedsConstants("frame_step and frame_length must be constants")


def _lower_to_constant(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """The result computed now by the reference kernel."""
    from ember.reference.evaluate import evaluate

    arrays = [constant_value_of(v) for v in op.operands]
    return [e.constant(evaluate(op, arrays)[0])]


def _check_constant_operands(op: GraphOp) -> str | None:
    if all(constant_value_of(v) is not None for v in op.operands):
        return None
    return NeedsConstants("its operands must be constants")


def _dft_unread(op: GraphOp) -> frozenset[str]:
    return frozenset({"axis", "dft_length"})


def _stft_unread(op: GraphOp) -> frozenset[str]:
    return frozenset({"frame_step", "frame_length"})


_CONSTANT_OPS = (BlackmanWindowOp, HammingWindowOp, HannWindowOp, MelWeightMatrixOp)


class SignalPattern(FamilyPattern):
    """DFT, STFT, the window functions and MelWeightMatrix."""

    lowerings = {DFTOp: _lower_dft, STFTOp: _lower_stft,
                 **dict.fromkeys(_CONSTANT_OPS, _lower_to_constant)}  # fmt: skip
    checks = {DFTOp: _check_dft, STFTOp: _check_stft,
              **dict.fromkeys(_CONSTANT_OPS, _check_constant_operands)}  # fmt: skip
    unread = {DFTOp: _dft_unread, STFTOp: _stft_unread}
