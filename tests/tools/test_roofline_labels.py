"""The `--plot` roofline names its slowest kernels without labels over one
another: each label goes where `ember.label_places` finds a free place."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from ember.roofline import _name_kernels

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def test_crowded_kernels_get_labels_that_do_not_overlap() -> None:
    # Six kernels at nearly the same intensity and speed (equal layers).
    rows = [SimpleNamespace(title=f"conv{i}/3x3 + relu (kernel {i})", label="conv, 7 loops",
                            intensity=10.0 * (1 + 0.02 * i), gflops=50.0 * (1 + 0.03 * i),
                            seconds=0.001)
            for i in range(6)]  # fmt: skip
    figure, axes = plt.subplots(figsize=(9, 6))
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(1, 100)
    axes.set_ylim(10, 500)
    axes.scatter([r.intensity for r in rows], [r.gflops for r in rows])
    labels = _name_kernels(figure, axes, rows, total=0.006)
    renderer = figure.canvas.get_renderer()
    boxes = [label.get_window_extent(renderer) for label in labels]
    plt.close(figure)
    assert len(boxes) >= 4  # most are named even when crowded
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)
