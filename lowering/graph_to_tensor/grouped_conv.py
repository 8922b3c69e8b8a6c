"""Graph-to-tensor lowering of grouped convolutions (group > 1, depthwise
included) with the group as a dim of its own, as MLIR's
`linalg.conv_2d_ngchw_gfchw` and `linalg.conv_2d_nhwgc_gfhwc` have it.

The input's C channels, the weight's F filters and the output's F channels
are viewed split into (G, C/G) and (G, F/G) by `tensor.reshape` (a
`memref.reinterpret_cast` after bufferization: no copy), so every indexing
map is a projected permutation plus the window sums (o*s + k*d), with no
`floordiv`:

    NCHW: out[n, g, fg, o...] += x[n, g, c, o*s+k*d...] * w[g, fg, c, k...]
    NHWC: out[n, oh, ow, g, fg] += x[n, oh*s+kh*d, ow*s+kw*d, g, c] * w[kh, kw, c, g, fg]

A division in the body would keep LLVM from vectorising it once
`loop-parallelize` linearises the loops around it; without one, the NHWC
form's output and weights step by 1 along fg, so `tensor-default-schedule`
gives it a micro-kernel (n = fg, m = ow), as it does an ungrouped NHWC
convolution, and the NCHW form one along ow (m = fg) at stride 1.

Dims of extent 1 (c of a depthwise convolution, fg of one with multiplier
1, the taps of a 1x1 kernel) are left out of the views and of the loop nest:
a depthwise NHWC convolution is out[n, oh, ow, g] += x[n, ., ., g] *
w[kh, kw, g], g innermost and contiguous in every operand, so its default
schedule is a vector register block along g. A pointwise convolution (1x1,
stride 1, no padding: `is_pointwise`) has its spatial dims flattened into
one, so its innermost loop (NCHW) or its micro-kernel's rows (NHWC) span
all positions of the image, not one row. The bias is added in the split
view, next to the convolution on the same buffer, and the sum is viewed
back in the layout's shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from ember.lowering.graph_to_tensor.common import (
    PARALLEL,
    REDUCTION,
    Emitter,
    _dim,
    _elem,
    _identity,
    _map,
)

SPATIAL = {"O": "o", "K": "k", "X": "x"}
"""Placeholders in a `GroupedIndexing` that stand for one name per spatial
dim: output positions (o0, o1...), kernel taps (k0...), input rows read
(x0...: o*s + k*d)."""


@dataclass(frozen=True)
class GroupedIndexing:
    """A layout's grouped convolution by dim names: the loop order and the
    names indexing the input, weight and output views (`SPATIAL` expands the
    placeholders). The group g and the output positions are parallel, c and
    the taps reductions."""

    order: tuple[str, ...]
    input: tuple[str, ...]
    weight: tuple[str, ...]
    output: tuple[str, ...]


GROUPED_INDEXING = {
    # The order keeps the ungrouped forms': NCHW's (n, f, o..., c, k...) with f
    # split, NHWC's (n, oh, ow, kh, kw, c, f) with g outside the taps.
    "NCHW": GroupedIndexing(("n", "g", "fg", "O", "c", "K"), ("n", "g", "c", "X"),
                            ("g", "fg", "c", "K"), ("n", "g", "fg", "O")),
    "NHWC": GroupedIndexing(("n", "O", "g", "K", "c", "fg"), ("n", "X", "g", "c"),
                            ("K", "c", "g", "fg"), ("n", "O", "g", "fg")),
}  # fmt: skip

REDUCTIONS = ("c", "k")
"""Name prefixes of the reduction dims."""


@dataclass(frozen=True)
class GroupedGeometry:
    """A grouped convolution's extents: batch, groups, channels and filters
    per group, the padded input's spatial dims, the kernel's, the output's,
    strides and dilations."""

    batch: int
    groups: int
    group_channels: int
    group_filters: int
    padded: Sequence[int]
    kernel: Sequence[int]
    output: Sequence[int]
    strides: Sequence[int]
    dilations: Sequence[int]

    def flattened(self) -> GroupedGeometry:
        """A pointwise convolution's geometry with its positions as one dim."""
        positions = math.prod(self.output)
        return GroupedGeometry(self.batch, self.groups, self.group_channels, self.group_filters,
                               [positions], [1], [positions], [1], [1])  # fmt: skip

    def extents(self) -> dict[str, int]:
        """Every dim name's extent (input rows x... as padded)."""
        extents = {"n": self.batch, "g": self.groups, "c": self.group_channels,
                   "fg": self.group_filters}  # fmt: skip
        for i, (padded, tap, out) in enumerate(zip(self.padded, self.kernel, self.output)):
            extents |= {f"x{i}": padded, f"k{i}": tap, f"o{i}": out}
        return extents


def is_pointwise(
    kernel: Sequence[int], strides: Sequence[int], pads: Sequence[tuple[int, int]]
) -> bool:
    """Whether a convolution reads one input position per output position
    (1x1 kernel, stride 1, no padding): its spatial dims then act as one."""
    return (
        all(k == 1 for k in kernel)
        and all(s == 1 for s in strides)
        and not any(low or high for low, high in pads)
    )


def _expand(names: Sequence[str], rank: int) -> list[str]:
    """`names` with each `SPATIAL` placeholder replaced by its `rank` names."""
    return [f"{SPATIAL[name]}{i}" if name in SPATIAL else name
            for name in names for i in (range(rank) if name in SPATIAL else [None])]  # fmt: skip


def grouped_conv(
    e: Emitter, layout: str, x: SSAValue, w: SSAValue, bias: SSAValue | None,
    geometry: GroupedGeometry, shape: Sequence[int],
) -> SSAValue:  # fmt: skip
    """The grouped convolution of the padded input `x` (in `layout`, "NCHW"
    of any spatial rank or "NHWC") by `w` (OIHW... or HWIO) plus `bias`,
    as one generic on split views (see the module docstring), viewed back as
    `shape`. `geometry` may be `flattened`: the views are reshapes of the
    operands whatever their spatial shape."""
    indexing, extents = GROUPED_INDEXING[layout], geometry.extents()
    rank = len(geometry.kernel)

    def kept(names: Sequence[str]) -> list[str]:
        """The names of dims that iterate (x rows always index the input)."""
        return [name for name in _expand(names, rank)
                if name.startswith(("x", "n", "g", "o")) or extents[name] > 1]  # fmt: skip

    order = kept(indexing.order)
    d: dict[str, AffineExpr] = {name: _dim(i) for i, name in enumerate(order)}
    for i, (stride, dilation) in enumerate(zip(geometry.strides, geometry.dilations)):
        row = d[f"o{i}"] * stride
        d[f"x{i}"] = row + d[f"k{i}"] * dilation if f"k{i}" in d else row
    views = [kept(names) for names in (indexing.input, indexing.weight, indexing.output)]
    x_view, w_view, out_view = ([extents[name] for name in names] for names in views)
    x, w = e.reshape(x, x_view), e.reshape(w, w_view)
    t, count = _elem(x), len(order)
    init = e.fill(0, out_view, t)
    maps = [_map(count, [d[name] for name in names]) for names in views]
    iterators = [REDUCTION if name.startswith(REDUCTIONS) else PARALLEL for name in order]
    y = e.generic([x, w], [init], maps, iterators,
                  lambda b, a: [b.add(a[2], b.mul(a[0], a[1]))])[0]  # fmt: skip
    if bias is not None:
        channels = [name for name in views[2] if name in ("g", "fg")]
        bias = e.reshape(bias, [extents[name] for name in channels])
        bias_map = _map(len(out_view), [_dim(views[2].index(name)) for name in channels])
        y = e.parallel([y, bias], out_view, t, lambda b, a: b.add(a[0], a[1]),
                       maps=[_identity(len(out_view)), bias_map])  # fmt: skip
    return e.reshape(y, shape)
