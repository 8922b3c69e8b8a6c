"""The roofline of a profile as an SVG chart (the PNG one is
`ember/roofline.py`): each kernel's GFLOP/s against its arithmetic
intensity, under min(peak, bandwidth x intensity), on log axes.

A point's area follows its share of the time; hovering shows its numbers
(`<title>`), clicking opens its kernel. The slowest kernels are named next
to their points; each label takes the first of a few places around its
point where it overlaps no label placed before it and no other point, and
stays unnamed (hover still tells) where none is free; one placed away
from its point gets a leader line.
"""

from __future__ import annotations

import math

from ember.benchmarking import ProfileReport
from ember.explore.graph_svg import kernel_anchor
from ember.explore.naming import short_kernel
from ember.explore.svg import FONT, attr, fmt, si, text_width
from ember.label_places import Box, place_labels

WIDTH, HEIGHT = 820.0, 460.0
LEFT, RIGHT, TOP, BOTTOM = 64.0, 24.0, 24.0, 48.0
NAMED = 8
"""How many of the slowest kernels are named next to their points."""


def decades(low: float, high: float) -> list[float]:
    """The powers of ten between 10^low and 10^high: where grid lines go."""
    return [10.0**d for d in range(math.ceil(low), math.floor(high) + 1)]


def roofline_svg(profile: ProfileReport) -> str:
    limits = profile.limits
    peak = limits.peak_gflops * profile.threads
    bandwidth = limits.bandwidth_gbs
    ridge = peak / bandwidth
    rows = [r for r in profile.rows if r.intensity and r.gflops]
    total = profile.total_seconds or 1.0
    xs = [r.intensity or 1.0 for r in rows] + [ridge]
    ys = [r.gflops or 1.0 for r in rows] + [peak]
    x_low, x_high = math.log10(min(xs) / 3), math.log10(max(xs) * 3)
    y_low, y_high = math.log10(min(ys) / 3), math.log10(max(ys) * 2)
    plot = Box(LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM)

    def sx(value: float) -> float:
        return plot.left + (math.log10(value) - x_low) / (x_high - x_low) * (plot.right - plot.left)

    def sy(value: float) -> float:
        return plot.bottom - (math.log10(value) - y_low) / (y_high - y_low) * (
            plot.bottom - plot.top
        )

    parts = [f'<svg class="roofline" xmlns="http://www.w3.org/2000/svg" '
             f'xmlns:xlink="http://www.w3.org/1999/xlink" width="{fmt(WIDTH)}" '
             f'height="{fmt(HEIGHT)}" viewBox="0 0 {fmt(WIDTH)} {fmt(HEIGHT)}" {FONT} '
             'font-size="11">',
             f'<rect x="{fmt(plot.left)}" y="{fmt(plot.top)}" width="{fmt(plot.right - plot.left)}" '
             f'height="{fmt(plot.bottom - plot.top)}" fill="#fbfbfd" stroke="#999"/>']  # fmt: skip
    for value in decades(x_low, x_high):
        parts.append(f'<line x1="{fmt(sx(value))}" x2="{fmt(sx(value))}" y1="{fmt(plot.top)}" '
                     f'y2="{fmt(plot.bottom)}" stroke="#e2e2e8"/><text x="{fmt(sx(value))}" '
                     f'y="{fmt(plot.bottom + 15)}" text-anchor="middle">{si(value)}</text>')  # fmt: skip
    for value in decades(y_low, y_high):
        parts.append(f'<line x1="{fmt(plot.left)}" x2="{fmt(plot.right)}" y1="{fmt(sy(value))}" '
                     f'y2="{fmt(sy(value))}" stroke="#e2e2e8"/><text x="{fmt(plot.left - 6)}" '
                     f'y="{fmt(sy(value) + 4)}" text-anchor="end">{si(value)}</text>')  # fmt: skip
    parts.append(f'<text x="{fmt((plot.left + plot.right) / 2)}" y="{fmt(HEIGHT - 10)}" '
                 'text-anchor="middle">arithmetic intensity (flop per byte of the kernel\'s '
                 "buffers)</text>")  # fmt: skip
    parts.append(f'<text transform="translate(14 {fmt((plot.top + plot.bottom) / 2)}) rotate(-90)" '
                 'text-anchor="middle">GFLOP/s</text>')  # fmt: skip
    low, high = 10.0**x_low, 10.0**x_high
    roof = [(low, min(peak, bandwidth * low)), (ridge, peak), (high, peak)]
    if ridge <= low or ridge >= high:
        roof = [(low, min(peak, bandwidth * low)), (high, min(peak, bandwidth * high))]
    points = " ".join(f"{fmt(sx(x))},{fmt(sy(y))}" for x, y in roof)
    parts.append(f'<polyline class="roof" points="{points}" fill="none" stroke="#222" '
                 f'stroke-width="1.6"><title>roof: peak {peak:.1f} GFLOP/s ({profile.threads} '
                 f'thread(s)), copy bandwidth {bandwidth:.1f} GB/s, ridge at {ridge:.2f} flop/B'
                 "</title></polyline>")  # fmt: skip
    sgemm = limits.sgemm_gflops
    if 10.0**y_low < sgemm < 10.0**y_high:
        parts.append(f'<line x1="{fmt(plot.left)}" x2="{fmt(plot.right)}" y1="{fmt(sy(sgemm))}" '
                     f'y2="{fmt(sy(sgemm))}" stroke="#888" stroke-dasharray="6,4"><title>NumPy '
                     f"sgemm 1024^3: {sgemm:.1f} GFLOP/s</title></line>")  # fmt: skip
    circles = [(sx(r.intensity or 1.0), sy(r.gflops or 1.0),
                3.0 + 14.0 * math.sqrt(r.seconds / total)) for r in rows]  # fmt: skip
    for row, (x, y, radius) in zip(rows, circles):
        gflops = row.gflops or 0.0
        title = (f"{short_kernel(row.name)}: {row.label}\n{row.seconds * 1e3:.3f} ms in "
                 f"{row.calls} calls ({100 * row.seconds / total:.1f}% of the time)\n"
                 f"{gflops:.1f} GFLOP/s = {100 * gflops / peak:.1f}% of peak\n"
                 f"intensity {row.intensity:.2f} flop/B")  # fmt: skip
        parts.append(f'<a xlink:href="#{attr(kernel_anchor(row.name))}"><circle class="kernel-point" '
                     f'data-kernel="{attr(row.name)}" cx="{fmt(x)}" cy="{fmt(y)}" r="{fmt(radius)}" '
                     f'fill="#3b6fb6" fill-opacity="0.55" stroke="#1d3f73"><title>{attr(title)}'
                     "</title></circle></a>")  # fmt: skip
    named = min(NAMED, len(rows))
    texts = [f"{short_kernel(r.name)} {r.label.split(',')[0]}" for r in rows[:named]]
    for text, spot, (x, y, _) in zip(
        texts, place_labels(circles, texts, plot, text_width), circles
    ):
        if spot is None:
            continue
        left, baseline, leader = spot
        if leader:  # from the point to the nearer end of the label
            end = (
                left
                if abs(left - x) < abs(left + text_width(text) - x)
                else left + text_width(text)
            )
            parts.append(f'<line x1="{fmt(x)}" y1="{fmt(y)}" x2="{fmt(end)}" y2="{fmt(baseline - 4)}" '
                         'stroke="#999" stroke-width="0.7"/>')  # fmt: skip
        parts.append(f'<text class="point-label" x="{fmt(left)}" y="{fmt(baseline)}">'
                     f"{attr(text)}</text>")  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts)


__all__ = ["Box", "place_labels", "roofline_svg"]
