"""`convert-conv-to-winograd`: 3x3 stride-1 NHWC convolutions as Winograd
F(4x4, 3x3), lowered to tensor-level ops ahead of `convert-graph-to-tensor`.

Winograd's minimal filtering (Lavin and Gray, 2015) computes a 4x4 output
tile from a 6x6 input tile with 36 multiplications per (input channel,
filter) instead of the direct convolution's 144: Y = A^T [(G g G^T) .
(B^T d B)] A. Summed over input channels, the 36 element-wise products
become 36 independent matrix multiplications, which is where the work goes.
A qualifying `graph.conv_nhwc` (see `rejection`) becomes:

1. the weight transform U = G g G^T, computed now with NumPy (the weights
   must be a `graph.constant`), stored as a constant [36, C, F]: four
   times the size of the 3x3 weights it replaces in the weights blob;
2. `tensor.pad` of the input by the convolution's pads plus what makes the
   output a whole number of 4x4 tiles, then the input transform V = B^T d B
   over the overlapping 6x6 tiles (stride 4), as two generics that each
   reduce over 6 taps with the constant B^T, giving [6, 6, N, TH, TW, C],
   reshaped to [36, T, C] (T = N * TH * TW tiles);
3. a batched matrix multiplication [36, T, C] x [36, C, F] -> [36, T, F]
   (the multiply-accumulate generic `_matmul` makes, as for a batched
   MatMul: whatever speeds up matrix multiplications speeds this up);
4. the output transform A^T m A as two generics reducing with the constant
   A^T, into [N, TH, 4, TW, 4, F], reshaped to [N, 4 TH, 4 TW, F] and sliced
   to the output's size when the last tiles stick out; then the bias, as
   the direct lowering adds it.

Inside a `graph.fused` region these ops take the convolution's place, so
the bias, activation and residual add fused with it stay in its kernel.

The transforms reduce with the dense 6x6 and 4x6 matrices, zeros included:
per output pixel about 27 C multiply-adds for the input transform and 15 F
for the output transform, next to 2.25 C F for the products (the direct
convolution: 9 C F). At 64 channels they add 30% to the products; at 16
(`MIN_CHANNELS`) as much again, and the total is still 1.8 times fewer
multiply-adds than the direct convolution's.

Accuracy: F(4x4, 3x3)'s transforms hold coefficients up to 8 (A^T) and 5
(B^T) and fractions down to 1/24 (G), so it rounds more than the direct
convolution: against a float64 convolution the largest error is about
5e-6 to 1.3e-5 of the output's largest magnitude at 64 to 512 channels,
5 to 7 times the direct convolution's (docs/cpu-pipeline.md has the
figures). A NaN or infinity in the input spoils every output of the tiles
whose windows hold it (an infinity becomes NaN: the transforms multiply
it by 0), not only its 3x3 neighbourhood.

Left alone (must not fire): kernels other than 3x3, strides or dilations
other than 1, grouped convolutions, element types other than f32, weights
that are not constants, fewer than `MIN_CHANNELS` input or output channels,
outputs smaller than `MIN_OUTPUT` in either spatial dim or of fewer than
`MIN_TILES` 4x4 tiles (the products would wait on their weights), NCHW and NCHWc
convolutions (the -O2 default layout is NHWC).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ember.dialects.graph import ConstantOp, ConvNHWCOp, GraphOp, constant_value_of
from ember.dialects.symbol_sizes import SymbolSizes
from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Emitter,
    _dim,
    _dims_map,
    _elem,
    _identity,
    _map,
    _matmul,
    _shape,
)
from ember.lowering.graph_to_tensor.windows import window_params

TILE = 4
"""Output tile size m of F(m x m, 3 x 3)."""
KERNEL = 3
ALPHA = TILE + KERNEL - 1
"""Input tile size: 6."""

# F(4, 3) at the points 0, 1, -1, 2, -2 and infinity (Lavin and Gray's
# choice, the smallest coefficients for this tile size).
INPUT_TRANSFORM = np.array(
    [[4, 0, -5, 0, 1, 0],
     [0, -4, -4, 1, 1, 0],
     [0, 4, -4, -1, 1, 0],
     [0, -2, -1, 2, 1, 0],
     [0, 2, -1, -2, 1, 0],
     [0, 4, 0, -5, 0, 1]], dtype=np.float64)  # fmt: skip
"""B^T (6 x 6)."""
FILTER_TRANSFORM = np.array(
    [[1 / 4, 0, 0],
     [-1 / 6, -1 / 6, -1 / 6],
     [-1 / 6, 1 / 6, -1 / 6],
     [1 / 24, 1 / 12, 1 / 6],
     [1 / 24, -1 / 12, 1 / 6],
     [0, 0, 1]], dtype=np.float64)  # fmt: skip
"""G (6 x 3)."""
OUTPUT_TRANSFORM = np.array(
    [[1, 1, 1, 1, 1, 0],
     [0, 1, -1, 2, -2, 0],
     [0, 1, 1, 4, 4, 0],
     [0, 1, -1, 8, -8, 1]], dtype=np.float64)  # fmt: skip
"""A^T (4 x 6)."""

MIN_CHANNELS = 16
"""Input and output channels below which the direct convolution stays: at
16 the transforms already cost as much as the products (module docstring)
and three 56x56 convolutions measured only 1.25 times faster (24
channels: 2 times), while the 36 matrix multiplications get thinner."""
MIN_OUTPUT = 4
"""Output height and width below which the direct convolution stays: a 4x4
tile computes up to 16 outputs, whatever part of it the output keeps."""

MIN_TILES = 9
"""Output tiles (N x tiles down x tiles across) below which the direct
convolution stays. Each of the 36 matrix products reads its [C, F] slice of
the transformed weights, four times the bytes of the 3x3 weights, once per
call and does 2 T flops per weight read: with few tiles the products wait
on memory. Measured on chains of 3x3 convolutions whose weights do not fit
in the caches (Zen 5, 2 cores): at 7x7 and 6x6 (4 tiles) the direct
convolution was faster on two threads (512 channels at 7x7: 0.97 against
1.19 ms a layer) and Winograd scaled 1.16 times from one thread to two; at
13x13 and 14x14 (16 tiles) Winograd was faster on both (256 channels at
14x14: 0.38 against 0.69 ms on two threads)."""


def transform_weights(weights: np.ndarray) -> np.ndarray:
    """G g G^T of HWIO weights [3, 3, C, F], as [36, C, F] (tile position
    (a, b) at a * 6 + b), computed in float64 and rounded once."""
    g = np.asarray(weights, dtype=np.float64)
    # G g over i as one matrix product, then over j: three times faster than
    # one three-operand einsum at ResNet-50's 512x512 weights.
    rows = (FILTER_TRANSFORM @ g.reshape(KERNEL, -1)).reshape(ALPHA, KERNEL, -1)
    u = np.einsum("bj,ajx->abx", FILTER_TRANSFORM, rows)
    return u.reshape(ALPHA * ALPHA, *g.shape[2:]).astype(weights.dtype)


# ------------------------------------------------------------------ heuristic


def _unit(op: GraphOp, name: str) -> bool:
    """Whether the attribute `name` (strides, dilations, group) is absent or
    all ones."""
    value = op.attribute_values().get(name)
    return value is None or all(v == 1 for v in np.atleast_1d(value))


def _tiles(op: GraphOp) -> int:
    """The 4x4 output tiles of the NHWC convolution `op`, over its batch (a
    symbolic batch counts as one image, the smallest it may be)."""
    n, oh, ow, _ = _shape(op.results[0])
    images = n if isinstance(n, int) else 1
    return images * math.ceil(oh / TILE) * math.ceil(ow / TILE)


Rule = tuple[str, Callable[[GraphOp], bool]]

RULES: tuple[Rule, ...] = (
    ("not f32", lambda op: _elem(op.operands[0]) != f32),
    ("not a 3x3 kernel", lambda op: _shape(op.operands[1])[:2] != (KERNEL, KERNEL)),
    ("strided", lambda op: not _unit(op, "strides")),
    ("dilated", lambda op: not _unit(op, "dilations")),
    ("grouped", lambda op: not _unit(op, "group")),
    ("weights not constant", lambda op: constant_value_of(op.operands[1]) is None),
    ("too few channels", lambda op: min(_shape(op.operands[1])[2:]) < MIN_CHANNELS),  # fmt: skip
    ("output too small", lambda op: min(_shape(op.results[0])[1:3]) < MIN_OUTPUT),
    ("too few tiles", lambda op: _tiles(op) < MIN_TILES),
)
"""Why a convolution stays direct: (reason, test), checked in order (the
first reason that holds is the one given)."""


def rejection(op: GraphOp) -> str | None:
    """Why the NHWC convolution `op` stays a direct convolution, or None when
    Winograd F(4x4, 3x3) computes it."""
    return next((reason for reason, holds in RULES if holds(op)), None)


# ------------------------------------------------------------------ lowering


def _transform(
    e: Emitter, x: SSAValue, matrix: SSAValue, shape: tuple[int, ...], order: str,
    read: str, write: str, row: str, reduced: str,
) -> SSAValue:  # fmt: skip
    """out[write] = sum over `reduced` of x[read] * matrix[row, reduced], into
    a zero-filled tensor of `shape`: one generic whose dims are the letters
    of `order` (loop order, outermost first); `read` and `write` spell each
    operand's indices in those letters. In `read`, `H` and `W` stand for the
    overlapping 6x6 tiles' rows and columns, 4 h + i and 4 w + j."""
    count = len(order)
    d: dict[str, AffineExpr] = {name: _dim(i) for i, name in enumerate(order)}
    if "H" in read:
        d["H"], d["W"] = d["h"] * TILE + d["i"], d["w"] * TILE + d["j"]
    maps = [_map(count, [d[name] for name in read]), _map(count, [d[row], d[reduced]]),
            _map(count, [d[name] for name in write])]  # fmt: skip
    iterators = [REDUCTION if name == reduced else PARALLEL for name in order]
    init = e.fill(0, shape, _elem(x))
    return e.generic([x, matrix], [init], maps, iterators,
                     lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))])[0]  # fmt: skip


def _named(value: SSAValue, name: str) -> SSAValue:
    value.name_hint = name
    return value


def lower_winograd(e: Emitter, op: GraphOp) -> list[SSAValue]:
    """The Winograd form of a qualifying `graph.conv_nhwc` (module docstring)."""
    x, w = op.operand_group("X")[0], op.operand_group("W")[0]
    n, height, width, _ = _shape(x)
    out = _shape(op.results[0])
    _, oh, ow, filters = out
    weights = constant_value_of(w)
    assert weights is not None
    _, _, pads = window_params(op.attr, (height, width), (KERNEL, KERNEL))
    th, tw = -(-oh // TILE), -(-ow // TILE)
    extra = (th * TILE - oh, tw * TILE - ow)
    padded = e.pad(x, [0, pads[0][0], pads[1][0], 0],
                   [0, pads[0][1] + extra[0], pads[1][1] + extra[1], 0], 0)  # fmt: skip
    c = _shape(x)[3]
    input_transform = _named(e.constant(INPUT_TRANSFORM.astype(np.float32)), "winograd_bt")
    output_transform = _named(e.constant(OUTPUT_TRANSFORM.astype(np.float32)), "winograd_at")
    # Input transform: rows (over j, the tile column), then columns (over i).
    rows = _transform(e, padded, input_transform, (n, th, tw, ALPHA, ALPHA, c),
                      "nhwibjc", "nHWc", "nhwibc", "b", "j")  # fmt: skip
    tiles = _transform(e, rows, input_transform, (ALPHA, ALPHA, n, th, tw, c),
                       "nhwabic", "nhwibc", "abnhwc", "a", "i")  # fmt: skip
    tiles = e.reshape(tiles, (ALPHA * ALPHA, n * th * tw, c))
    transformed = _named(e.constant(transform_weights(weights)), f"{w.name_hint or 'w'}_winograd")
    products = _matmul(e, tiles, transformed)
    products = e.reshape(products, (ALPHA, ALPHA, n, th, tw, filters))
    # Output transform: over b (columns -> j), then over a (rows -> i).
    half = _transform(e, products, output_transform, (n, th, tw, ALPHA, TILE, filters),
                      "nhwajbf", "abnhwf", "nhwajf", "j", "b")  # fmt: skip
    full = _transform(e, half, output_transform, (n, th, TILE, tw, TILE, filters),
                      "nhiwjaf", "nhwajf", "nhiwjf", "i", "a")  # fmt: skip
    y = e.reshape(full, (n, th * TILE, tw * TILE, filters))
    y = e.extract(y, [0, 0, 0, 0], out)
    bias = op.operand_group("B")
    if bias:
        maps = [_identity(4), _dims_map(4, [3])]
        y = e.parallel([y, bias[0]], out, _elem(y), lambda b, a: b.add(a[0], a[1]), maps=maps)
    return [y]


def winograd_multiplies(op: GraphOp) -> tuple[int, int]:
    """(direct, Winograd) multiply-accumulates of the matrix part of `op`: the
    direct convolution's 9 C F per output, and 36 C F per 4x4 tile."""
    n, oh, ow, filters = _shape(op.results[0])
    c = _shape(op.operands[1])[2]
    direct = n * oh * ow * filters * c * KERNEL * KERNEL
    return direct, _tiles(op) * ALPHA * ALPHA * c * filters


# ---------------------------------------------------------------------- pass


class WinogradPattern(RewritePattern):
    """A qualifying `graph.conv_nhwc` -> its Winograd form (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes_by_function: dict[FuncOp, SymbolSizes] = {}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvNHWCOp, rewriter: PatternRewriter) -> None:
        if rejection(op) is not None:
            return
        weights = op.operands[1].owner
        emitter = Emitter(rewriter, op, self.sizes_by_function)
        rewriter.replace(op, [], lower_winograd(emitter, op))
        if isinstance(weights, ConstantOp) and not weights.results[0].uses:
            rewriter.erase(weights)


@dataclass(frozen=True)
class ConvertConvToWinogradPass(ModulePass):
    """Lowers 3x3 stride-1 f32 NHWC convolutions with enough channels to
    Winograd F(4x4, 3x3) on tensors (see the module docstring); every other
    op is left to `convert-graph-to-tensor`."""

    name = "convert-conv-to-winograd"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(WinogradPattern(), apply_recursively=False).rewrite_module(op)
