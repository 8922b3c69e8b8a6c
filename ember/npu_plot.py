"""`ember bench --target npu --plot FILE.png`: where an NPU model's cycles
go, one bar per layer (its cycles), coloured by the matrix unit's
utilisation while it runs. matplotlib is optional (`pip install
'ember[plot]'`), checked up front by `ember.roofline.check_plot_target`."""

from __future__ import annotations

from pathlib import Path

from ember.roofline import check_plot_target, save_figure
from ember.targets.npu.report import NpuReport


def plot_cycles(report: NpuReport, path: str | Path, title: str = "") -> None:
    check_plot_target(path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    layers = [layer for segment in report.segments for layer in segment.layers]
    labels = [f"{layer.segment}: {layer.ops.split(',')[0]}" for layer in layers]
    figure, axes = plt.subplots(figsize=(9, 1.2 + 0.35 * max(len(layers), 1)))
    colours = plt.get_cmap("viridis")([layer.utilization for layer in layers])
    axes.barh(range(len(layers)), [layer.cycles for layer in layers], color=colours)
    axes.set_yticks(range(len(layers)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("cycles")
    for row, layer in enumerate(layers):
        axes.annotate(f" {layer.utilization:.0%}", (layer.cycles, row), va="center", fontsize=7)
    mappable = plt.cm.ScalarMappable(cmap="viridis", norm=plt.Normalize(0, 1))
    figure.colorbar(mappable, ax=axes, label="matrix-unit utilisation")
    axes.set_title(f"{title} on the NPU: {report.cycles:,} cycles" if title else
                   f"NPU: {report.cycles:,} cycles")  # fmt: skip
    figure.tight_layout()
    try:
        save_figure(figure, path)
    finally:
        plt.close(figure)


__all__ = ["plot_cycles"]
