"""The memory plan as an SVG picture: time steps across, arena offsets
down, each buffer a rectangle over its live range at its offset (hover
for its name, size and range); a strip under it shows the bytes live at
each step, up to the arena's size. The arena (the peak) against the
naive sum says what reuse saved."""

from __future__ import annotations

import zlib

from ember.explore.memory_plan import MemoryPlan
from ember.explore.svg import FONT, attr, binary_bytes, fmt

WIDTH, HEIGHT = 820.0, 460.0
LEFT, RIGHT, TOP, BOTTOM = 80.0, 20.0, 20.0, 130.0
STRIP = 70.0
"""Height of the strip of live bytes."""
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip


def summary(plan: MemoryPlan) -> str:
    if plan.symbolic:
        return f"arena of {plan.function}: {plan.formula} bytes (sizes over the model's symbols)"
    saved = 1 - plan.arena_bytes / plan.naive_bytes if plan.naive_bytes else 0.0
    return (f"{len(plan.buffers)} buffers in one arena of {binary_bytes(plan.arena_bytes)} "
            f"({plan.arena_bytes:,} bytes); without reuse {binary_bytes(plan.naive_bytes)} "
            f"({plan.naive_bytes:,} bytes): reuse saves {saved:.0%}")  # fmt: skip


def live_bytes(plan: MemoryPlan) -> list[int]:
    """The bytes of the buffers live at each time step."""
    changes = [0] * (plan.steps + 1)
    for buffer in plan.buffers:
        changes[buffer.start] += buffer.bytes
        changes[buffer.end + 1] -= buffer.bytes
    live, running = [], 0
    for change in changes[:-1]:
        running += change
        live.append(running)
    return live


def memory_svg(plan: MemoryPlan) -> str:
    if plan.symbolic or not plan.buffers:
        return ""
    span = max(plan.arena_bytes, 1)
    steps = max(plan.steps, 1)
    inner_width, inner_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(step: float) -> float:
        return LEFT + step / steps * inner_width

    def sy(offset: float) -> float:
        return TOP + offset / span * inner_height

    parts = [f'<svg class="memory" xmlns="http://www.w3.org/2000/svg" width="{fmt(WIDTH)}" '
             f'height="{fmt(HEIGHT)}" viewBox="0 0 {fmt(WIDTH)} {fmt(HEIGHT)}" {FONT} '
             'font-size="11">',
             f'<rect x="{fmt(LEFT)}" y="{fmt(TOP)}" width="{fmt(inner_width)}" '
             f'height="{fmt(inner_height)}" fill="#fbfbfd" stroke="#999"/>']  # fmt: skip
    for tick in range(5):
        offset = span * tick / 4
        parts.append(f'<text x="{fmt(LEFT - 6)}" y="{fmt(sy(offset) + 4)}" text-anchor="end">'
                     f"{binary_bytes(offset)}</text>")  # fmt: skip
    for tick in range(5):
        step = steps * tick / 4
        parts.append(f'<text x="{fmt(sx(step))}" y="{fmt(TOP + inner_height + 15)}" '
                     f'text-anchor="middle">{step:.0f}</text>')  # fmt: skip
    parts.append(f'<text x="{fmt(LEFT + inner_width / 2)}" y="{fmt(TOP + inner_height + 30)}" '
                 'text-anchor="middle">time step of the entry function (a kernel call counts its '
                 "kernel's ops); down: arena offset</text>")  # fmt: skip
    for buffer in plan.buffers:
        colour = PALETTE[zlib.crc32(buffer.name.encode()) % len(PALETTE)]
        title = (f"{buffer.name}: {binary_bytes(buffer.bytes)} ({buffer.bytes:,} bytes) at offset "
                 f"{buffer.offset:,}, live in steps {buffer.start}-{buffer.end}")  # fmt: skip
        height = max(sy(buffer.offset + buffer.bytes) - sy(buffer.offset), 1.0)
        parts.append(f'<rect class="buffer" x="{fmt(sx(buffer.start))}" y="{fmt(sy(buffer.offset))}" '
                     f'width="{fmt(max(sx(buffer.end + 1) - sx(buffer.start), 1.0))}" '
                     f'height="{fmt(height)}" fill="{colour}" fill-opacity="0.7" stroke="#333" '
                     f'stroke-width="0.4"><title>{attr(title)}</title></rect>')  # fmt: skip
    live = live_bytes(plan)
    base = HEIGHT - 20
    scale = STRIP / span
    path = " ".join(f"{fmt(sx(step))},{fmt(base - bytes_ * scale)} "
                    f"{fmt(sx(step + 1))},{fmt(base - bytes_ * scale)}"
                    for step, bytes_ in enumerate(live))  # fmt: skip
    parts.append(f'<rect x="{fmt(LEFT)}" y="{fmt(base - STRIP)}" width="{fmt(inner_width)}" '
                 f'height="{fmt(STRIP)}" fill="#fbfbfd" stroke="#999"/>'
                 f'<text x="{fmt(LEFT - 6)}" y="{fmt(base - STRIP + 10)}" text-anchor="end">'
                 f"{binary_bytes(span)}</text>"
                 f'<text x="{fmt(LEFT - 6)}" y="{fmt(base - STRIP / 2 + 4)}" text-anchor="end">'
                 "live</text>"
                 f'<polyline class="live" points="{fmt(LEFT)},{fmt(base)} {path} '
                 f'{fmt(LEFT + inner_width)},{fmt(base)}" fill="#f3c1b8" stroke="#c0392b" '
                 f'stroke-width="1"><title>bytes live at each step (peak {binary_bytes(max(live))}, '
                 f"arena {binary_bytes(span)})</title></polyline>")  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts)


__all__ = ["live_bytes", "memory_svg", "summary"]
