"""Where labels go on a chart: next to their points, over nothing else.

Each label takes the first of a few places around its point (right, left,
above, below, then the four diagonals, ring by ring further out) where it
overlaps no point and no label placed before it, inside the plot; a label
with no free place is left out (the chart says so some other way: a hover
title, a table), and one placed beyond the first ring gets a leader line.
The explorer's SVG roofline and the `--plot` PNG one both place their
labels so, in their own pixels (y down).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box) -> bool:
        return not (self.right <= other.left or other.right <= self.left
                    or self.bottom <= other.top or other.bottom <= self.top)  # fmt: skip


LABEL_HEIGHT = 13.0
"""A label's line height, in pixels, where a chart does not say."""

RINGS = (0.0, 16.0, 32.0, 48.0)
"""How much further out each ring of places around a point lies; a label
placed beyond the first gets a leader line to its point."""


def place_labels(points: list[tuple[float, float, float]], texts: list[str], area: Box,
                 width_of: Callable[[str], float],
                 height: float = LABEL_HEIGHT) -> list[tuple[float, float, bool] | None]:  # fmt: skip
    """For the first `len(texts)` of the (x, y, radius) `points`, where its
    label's left end and baseline go and whether it needs a leader line, or
    None where no place inside `area` is free of the other points and the
    labels placed before it. Places are tried ring by ring: right, left,
    above, below, then the four diagonals. `width_of` measures a label and
    `height` is a line's."""
    taken: list[Box] = [Box(x - r, y - r, x + r, y + r) for x, y, r in points]
    placed: list[tuple[float, float, bool] | None] = []
    for index, ((x, y, radius), text) in enumerate(zip(points, texts)):
        width = width_of(text)
        chosen = None
        for ring in RINGS:
            gap = radius + 3 + ring
            for left, baseline in [(x + gap, y + 4), (x - gap - width, y + 4),
                                   (x - width / 2, y - gap - 2), (x - width / 2, y + gap + 11),
                                   (x + gap, y - gap), (x + gap, y + gap + 8),
                                   (x - gap - width, y - gap), (x - gap - width, y + gap + 8)]:  # fmt: skip
                box = Box(left, baseline - height + 3, left + width, baseline + 3)
                inside = (area.left <= box.left and box.right <= area.right
                          and area.top <= box.top and box.bottom <= area.bottom)  # fmt: skip
                if inside and not any(box.overlaps(b) for i, b in enumerate(taken) if i != index):
                    chosen = (left, baseline, ring > 0)
                    taken.append(box)
                    break
            if chosen is not None:
                break
        placed.append(chosen)
    return placed


__all__ = ["LABEL_HEIGHT", "RINGS", "Box", "place_labels"]
