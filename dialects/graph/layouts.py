"""Layout strings: how the dims of a tensor order and block its logical axes.

A layout names each dim of a tensor by the logical axis it indexes,
outermost first, as TVM writes layouts:

- an upper-case letter is a whole axis, or its outer part when the axis is
  also blocked: `NCHW`, `NHWC`, `OIHW`, `HWIO`;
- digits then the lower-case letter are an inner block of that axis:
  `NCHW8c` is [N, C/8, H, W, 8], element (n, c, h, w) at
  [n, c // 8, h, w, c % 8]; `OIHW8i8o` is a convolution weight
  [O/8, I/8, H, W, 8 (i), 8 (o)].

Converting a tensor between two layouts of the same axes is a reshape that
splits every axis into parts, a transpose that puts the parts in the
target's order and a reshape that merges them. `transform_plan` computes the
three; the shape rule, the reference kernel and the lowering of
`graph.layout_transform` all follow it, so they cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from ember.dialects.graph.types import DYNAMIC, Shape


class LayoutError(ValueError):
    """A layout string is malformed, or a tensor does not fit a layout."""


_DIM = re.compile(r"([A-Z])|([1-9][0-9]*)([a-z])")


@dataclass(frozen=True)
class Layout:
    """A parsed layout: per dim, its axis (upper case) and block (0: the outer part)."""

    name: str
    dims: tuple[tuple[str, int], ...]

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def axes(self) -> tuple[str, ...]:
        """The logical axes, in the order of their outer dims."""
        return tuple(axis for axis, block in self.dims if not block)

    def block(self, axis: str) -> int:
        """The size of `axis`'s inner block, 1 when it is not blocked."""
        return next((block for a, block in self.dims if a == axis and block), 1)

    def extents(self, shape: Shape) -> dict[str, int]:
        """The logical extent of each axis of a tensor of `shape` in this layout."""
        if len(shape) != self.rank:
            raise LayoutError(f"a tensor of rank {len(shape)} does not have layout {self.name}")
        outer = {axis: dim for (axis, block), dim in zip(self.dims, shape) if not block}
        for (_, block), dim in zip(self.dims, shape):
            if block and dim != block:
                raise LayoutError(f"dim {dim} of layout {self.name} must be its block {block}")
        return {a: DYNAMIC if d == DYNAMIC else d * self.block(a) for a, d in outer.items()}

    def shape(self, extents: dict[str, int]) -> Shape:
        """The shape of a tensor with these logical extents in this layout."""
        shape = []
        for axis, block in self.dims:
            extent, inner = extents[axis], self.block(axis)
            if block:
                shape.append(block)
            elif extent == DYNAMIC:
                shape.append(DYNAMIC)
            elif extent % inner:
                raise LayoutError(
                    f"axis {axis} of extent {extent} is not divisible by the block {inner} of "
                    f"layout {self.name}"
                )
            else:
                shape.append(extent // inner)
        return tuple(shape)


@cache
def parse_layout(name: str) -> Layout:
    """`NCHW8c` -> Layout; raises LayoutError naming what is wrong."""
    dims: list[tuple[str, int]] = []
    position = 0
    while position < len(name):
        match = _DIM.match(name, position)
        if match is None:
            raise LayoutError(f"layout '{name}': unexpected '{name[position:]}'")
        whole, size, letter = match.groups()
        dims.append((whole, 0) if whole else (letter.upper(), int(size)))
        position = match.end()
    outer = [axis for axis, block in dims if not block]
    blocked = [axis for axis, block in dims if block]
    for what, axes in (("named twice", outer), ("blocked twice", blocked)):
        repeated = sorted({a for a in axes if axes.count(a) > 1})
        if repeated:
            raise LayoutError(f"layout '{name}': axis {repeated[0]} is {what}")
    for axis in blocked:
        if axis not in outer:
            raise LayoutError(f"layout '{name}': block {axis.lower()} of a missing axis {axis}")
    if not dims:
        raise LayoutError("a layout must name at least one axis")
    return Layout(name, tuple(dims))


@dataclass(frozen=True)
class TransformPlan:
    """reshape to `split`, transpose by `perm`, reshape to `result`."""

    split: Shape
    perm: tuple[int, ...]
    result: Shape


def _cuts(source: Layout, target: Layout, axis: str) -> list[int]:
    """Where an axis splits into parts, as the number of elements inside each
    part (outermost first, ending in 1): [16, 8, 1] splits C into C/16, 2, 8."""
    blocks = sorted({source.block(axis), target.block(axis), 1}, reverse=True)
    for outer, inner in zip(blocks, blocks[1:]):
        if outer % inner:
            raise LayoutError(
                f"cannot convert {source.name} to {target.name}: blocks {outer} and {inner} of "
                f"axis {axis} do not nest"
            )
    return blocks


def _parts(layout: Layout, cuts: dict[str, list[int]]) -> list[tuple[str, int]]:
    """The (axis, part index) pairs of each dim of `layout`, in its order."""
    parts: list[tuple[str, int]] = []
    for axis, block in layout.dims:
        inside = range(len(cuts[axis]))
        chosen = [i for i in inside if (cuts[axis][i] >= layout.block(axis)) == (not block)]
        parts.extend((axis, i) for i in chosen)
    return parts


def transform_plan(source_name: str, target_name: str, shape: Shape) -> TransformPlan:
    """How a tensor of `shape` in layout `source_name` becomes `target_name`."""
    source, target = parse_layout(source_name), parse_layout(target_name)
    if sorted(source.axes) != sorted(target.axes):
        raise LayoutError(f"layouts {source.name} and {target.name} have different axes")
    extents = source.extents(shape)
    result = target.shape(extents)
    cuts = {axis: _cuts(source, target, axis) for axis in source.axes}

    def size(axis: str, index: int) -> int:
        if index:
            return cuts[axis][index - 1] // cuts[axis][index]
        extent = extents[axis]
        return DYNAMIC if extent == DYNAMIC else extent // cuts[axis][0]

    source_parts, target_parts = _parts(source, cuts), _parts(target, cuts)
    split = tuple(size(axis, index) for axis, index in source_parts)
    perm = tuple(source_parts.index(part) for part in target_parts)
    return TransformPlan(split, perm, result)


def convert_shape(source: str, target: str, shape: Shape) -> Shape:
    return transform_plan(source, target, shape).result


def convert_array(array: np.ndarray, source: str, target: str) -> np.ndarray:
    """`array` (in layout `source`) in layout `target`, as a new contiguous array."""
    if source == target:
        return array
    plan = transform_plan(source, target, array.shape)
    moved = array.reshape(plan.split).transpose(plan.perm)
    return np.ascontiguousarray(moved).reshape(plan.result)
