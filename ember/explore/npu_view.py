"""The NPU's cycles per layer as an SVG chart (the PNG one is
`ember/npu_plot.py`): one row per layer, its cycles as a bar coloured by the
matrix unit's utilisation, and under it two thin bars: the cycles its
multiply-accumulates need at the matrix unit's peak (compute) and those
its DMA traffic needs at the DMA's bytes per cycle (transfer). A layer
whose bar is much longer than both waits on latency or dependencies."""

from __future__ import annotations

from typing import Any

from ember.explore.svg import FONT, attr, fmt, text_width

ROW = 30.0
LABEL_CHARS = 48
BAR_WIDTH = 520.0


def utilisation_colour(share: float) -> str:
    """From pale red (idle) to deep green (the matrix unit busy)."""
    share = min(max(share, 0.0), 1.0)
    low, high = (230, 120, 110), (40, 150, 90)
    red, green, blue = (round(a + (b - a) * share) for a, b in zip(low, high))
    return f"rgb({red},{green},{blue})"


def layer_label(layer: Any) -> str:
    text = f"{layer.segment}: {layer.ops}"
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "\u2026"


def cycles_svg(report: Any, dma_bytes_per_cycle: int) -> str:
    layers = [layer for segment in report.segments for layer in segment.layers]
    if not layers:
        return ""
    left = max(text_width(layer_label(layer)) for layer in layers) + 16
    most = max(layer.cycles for layer in layers) or 1
    width, height = left + BAR_WIDTH + 130, 30 + ROW * len(layers) + 30
    parts = [f'<svg class="npu-cycles" xmlns="http://www.w3.org/2000/svg" width="{fmt(width)}" '
             f'height="{fmt(height)}" viewBox="0 0 {fmt(width)} {fmt(height)}" {FONT} '
             'font-size="11">',
             f'<text x="{fmt(left)}" y="14">cycles per layer ({report.cycles:,} in all); bar '
             "colour: matrix-unit utilisation; thin bars: compute (blue) and DMA (orange) "
             "cycles</text>"]  # fmt: skip

    def bar(value: float, y: float, h: float, colour: str, klass: str) -> str:
        return (f'<rect class="{klass}" x="{fmt(left)}" y="{fmt(y)}" '
                f'width="{fmt(max(value / most * BAR_WIDTH, 0.5))}" height="{fmt(h)}" '
                f'fill="{colour}"/>')  # fmt: skip

    for row, layer in enumerate(layers):
        top = 26 + row * ROW
        compute = layer.macs / (layer.dim * layer.dim) if layer.dim else 0
        dma = layer.bytes_moved / dma_bytes_per_cycle if dma_bytes_per_cycle else 0
        title = (f"{layer.segment}: {layer.ops} ({layer.shape})\n{layer.cycles:,} cycles, "
                 f"utilisation {layer.utilization:.1%}\ncompute at peak {compute:,.0f} cycles; "
                 f"DMA {layer.bytes_moved:,} bytes = {dma:,.0f} cycles\nschedule: {layer.schedule}")  # fmt: skip

        parts.append(f'<g class="layer" id="layer-{row}"><title>{attr(title)}</title>'
                     f'<text x="{fmt(left - 6)}" y="{fmt(top + 11)}" text-anchor="end">'
                     f"{attr(layer_label(layer))}</text>"
                     + bar(layer.cycles, top, 14, utilisation_colour(layer.utilization), "cycles")
                     + bar(compute, top + 16, 4, "#3b6fb6", "compute")
                     + bar(dma, top + 21, 4, "#e08a2c", "dma")
                     + f'<text x="{fmt(left + layer.cycles / most * BAR_WIDTH + 4)}" '
                     f'y="{fmt(top + 11)}">{layer.cycles:,} ({layer.utilization:.0%})</text></g>')  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts)


__all__ = ["cycles_svg", "utilisation_colour"]
