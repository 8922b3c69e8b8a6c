"""A roofline of a profile: each kernel's GFLOP/s against its arithmetic
intensity, under the machine's measured limits.

The roof is min(peak, bandwidth x intensity): a kernel left of the ridge
is bounded by memory, right of it by arithmetic, and its distance below
the roof is what a better schedule can win. One point per kernel function
whose flops are known, its area proportional to its share of the time; the
slowest few are named, each where a place beside its point is free of the
other points and labels (`ember.label_places`). matplotlib is an optional dependency (`pip install
'ember[plot]'`); without it `plot_roofline` says so.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ember.errors import EmberError
from ember.label_places import Box, place_labels
from ember.output_files import written

if TYPE_CHECKING:
    from ember.benchmarking import ProfileReport

NAMED_KERNELS = 6
MAX_LABEL = 32
"""The most characters of a kernel's title a label shows."""
"""How many of the slowest kernels get their name next to their point."""


def check_plot_target(path: str | Path) -> None:
    """Fails early (before a long compile) when the plot cannot be written:
    matplotlib missing, or `path` not a writable `.png` in an existing folder."""
    target = Path(path)
    if target.suffix.lower() != ".png":
        raise EmberError(f"--plot {target}: the plot is a PNG file (name it *.png)")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise EmberError(f"--plot {target}: no such directory '{folder}'")
    if (
        target.is_dir()
        or not os.access(folder, os.W_OK)
        or (target.exists() and not os.access(target, os.W_OK))
    ):
        raise EmberError(f"--plot {target}: not writable")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise EmberError(
            "--plot needs matplotlib, an optional dependency: pip install 'ember[plot]'"
        ) from None


def plot_roofline(report: ProfileReport, path: str | Path, title: str = "") -> None:
    """Writes the roofline of `report` to the PNG file `path`."""
    check_plot_target(path)
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    limits = report.limits
    peak = limits.peak_gflops * report.threads
    rows = [r for r in report.rows if r.intensity and r.gflops]
    total = report.total_seconds or 1.0
    ridge = peak / limits.bandwidth_gbs
    intensities = [r.intensity for r in rows if r.intensity] + [ridge]
    low, high = min(intensities) / 4, max(intensities) * 4
    figure, axes = plt.subplots(figsize=(9, 6))
    xs = [low, ridge, high]
    axes.plot(xs, [min(peak, limits.bandwidth_gbs * x) for x in xs], color="black",
              label=f"roof: peak {peak:.0f} GFLOP/s, copy bandwidth "
                    f"{limits.bandwidth_gbs:.0f} GB/s")  # fmt: skip
    axes.axhline(limits.sgemm_gflops, color="gray", linestyle="--",
                 label=f"NumPy sgemm 1024^3: {limits.sgemm_gflops:.0f} GFLOP/s")  # fmt: skip
    axes.scatter([r.intensity for r in rows], [r.gflops for r in rows],
                 s=[20 + 2000 * r.seconds / total for r in rows], alpha=0.6)  # fmt: skip
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high)
    _name_kernels(figure, axes, rows[:NAMED_KERNELS], total)
    axes.set_xlabel("arithmetic intensity (flop / byte of the kernel's buffers)")
    axes.set_ylabel("GFLOP/s")
    axes.set_title(title or "roofline")
    axes.legend(loc="lower right", fontsize=8)
    axes.grid(True, which="both", alpha=0.3)
    try:
        save_figure(figure, path)
    except OSError as error:
        raise EmberError(f"--plot {path}: cannot write: {error.strerror or error}") from None
    finally:
        plt.close(figure)


LABEL_POINTS = 7
"""The kernels' labels' font size."""


def _name_kernels(figure: Any, axes: Any, rows: list[Any], total: float) -> list[Any]:
    """Names `rows` next to their points where a place is free of the other
    points and labels (`ember.label_places`, in the figure's pixels), with a
    leader line where it is not right beside its point; a kernel with no
    free place stays unnamed (the profile's table names it). Returns the
    labels."""
    figure.canvas.draw()  # the axes' final limits: the points' pixels
    height = figure.bbox.height
    renderer = figure.canvas.get_renderer()
    frame = axes.get_window_extent(renderer)
    points = []
    for row in rows:
        x, y = axes.transData.transform((row.intensity, row.gflops))
        radius = math.sqrt(20 + 2000 * row.seconds / total) / 2 * figure.dpi / 72
        points.append((float(x), float(height - y), radius))
    texts = [f"{row.title[:MAX_LABEL]} ({row.label.split(',')[0]})" for row in rows]

    def width_of(text: str) -> float:
        label = axes.text(0, 0, text, fontsize=LABEL_POINTS)
        width = label.get_window_extent(renderer).width
        label.remove()
        return float(width)

    line = LABEL_POINTS * figure.dpi / 72 * 1.2
    area = Box(frame.x0, height - frame.y1, frame.x1, height - frame.y0)
    labels = []
    for (x, y, _), text, spot in zip(
        points, texts, place_labels(points, texts, area, width_of, line)
    ):
        if spot is None:
            continue
        left, baseline, leader = spot
        target = axes.transData.inverted().transform((left, height - baseline))
        arrow = {"arrowstyle": "-", "color": "gray", "lw": 0.5} if leader else None
        labels.append(axes.annotate(text, axes.transData.inverted().transform((x, height - y)),
                                    xytext=target, textcoords="data", fontsize=LABEL_POINTS,
                                    ha="left", va="baseline", arrowprops=arrow))  # fmt: skip
    return labels


def save_figure(figure: Any, path: str | os.PathLike[str]) -> None:
    """`figure.savefig`, the file written whole or not at all, in the format
    its suffix names (png where it has none)."""
    with written(path, "wb") as stream:
        figure.savefig(stream, dpi=120, format=Path(path).suffix.lstrip(".").lower() or "png")


__all__ = ["NAMED_KERNELS", "check_plot_target", "plot_roofline", "save_figure"]
