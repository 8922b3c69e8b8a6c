"""The explorer's building blocks on small inputs: the layered layout,
the roofline's label placement, what a pass changed."""

from __future__ import annotations

import itertools

from ember.explore.ir_diff import changed_lines, shown_rows
from ember.explore.layered_layout import layered_layout, longest_path_layers
from ember.explore.svg import text_width
from ember.label_places import Box, place_labels

DIAMOND = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("a", "d")]


def test_layers_follow_the_longest_path() -> None:
    assert longest_path_layers("abcd", DIAMOND) == {"a": 0, "b": 1, "c": 1, "d": 2}


def test_a_cycle_does_not_hang_the_layering() -> None:
    layers = longest_path_layers("xyz", [("x", "y"), ("y", "z"), ("z", "x")])
    assert set(layers) == {"x", "y", "z"}


def test_layout_keeps_boxes_apart_and_edges_downward() -> None:
    ids = [f"n{i}" for i in range(12)]
    edges = [(ids[0], n) for n in ids[1:6]] + [(n, ids[6 + i]) for i, n in enumerate(ids[1:6])]
    edges += [(ids[0], ids[11]), (ids[6], ids[11])]
    sizes = {n: (60.0 + 7 * i, 30.0) for i, n in enumerate(ids)}
    layout = layered_layout(ids, sizes, edges)
    boxes = {n: Box(x - sizes[n][0] / 2, y - 15, x + sizes[n][0] / 2, y + 15)
             for n, (x, y) in layout.positions.items()}  # fmt: skip
    for a, b in itertools.combinations(ids, 2):
        assert not boxes[a].overlaps(boxes[b]), (a, b)
    assert all(0 <= box.left and box.right <= layout.width for box in boxes.values())
    assert len(layout.routes) == len(edges)
    for _, _, points in layout.routes:
        assert all(y1 < y2 for (_, y1), (_, y2) in zip(points, points[1:]))
    long_edge = next(points for s, t, points in layout.routes if (s, t) == (ids[0], ids[11]))
    assert len(long_edge) == 4  # bends through a dummy in each layer it crosses


def test_labels_never_overlap_each_other_or_other_points() -> None:
    points = [(100.0 + 6 * (i % 4), 100.0 + 5 * (i // 4), 5.0) for i in range(12)]
    texts = [f"kernel {i} conv" for i in range(12)]
    area = Box(0, 0, 400, 300)
    spots = place_labels(points, texts, area, text_width)
    boxes = [
        Box(x, y - 10, x + text_width(t), y + 3)
        for t, s in zip(texts, spots)
        if s
        for x, y, _ in [s]
    ]
    assert len(boxes) >= 6  # crowded points still get most of their names
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)
    for box in boxes:
        assert area.left <= box.left and box.right <= area.right


def test_renumbered_values_are_not_changes() -> None:
    before = ["%0 = arith.constant 1 : index", "%1 = foo %0", "bar"]
    after = ["%3 = arith.constant 1 : index", "%4 = foo %3", "baz", "bar"]
    changed, removed = changed_lines(before, after)
    assert changed == [False, False, True, False] and removed == 0


def test_large_ir_shows_its_changes_within_the_limit() -> None:
    lines = [f"line {i}" for i in range(1000)]
    changed = [i in (10, 500, 501) for i in range(1000)]
    rows, note = shown_rows(lines, changed, 40)
    shown = [row for row in rows if row.number]
    assert {10, 500, 501} <= {row.number - 1 for row in shown}
    assert len(shown) <= 40 and "1000 lines" in note
    assert any(row.number == 0 and "unchanged" in row.text for row in rows)
    rows, note = shown_rows(lines[:30], changed[:30], 40)
    assert len(rows) == 30 and note == ""
