"""Small helpers for writing SVG by hand: escaping, text widths, numbers."""

from __future__ import annotations

from html import escape

CHAR_WIDTH = 6.6
"""Average width of a character of the 11 px sans-serif labels, in px: what
label placement assumes (a little wide, so that labels do not touch)."""

FONT = 'font-family="Helvetica, Arial, sans-serif"'


def attr(text: object) -> str:
    """Text for an attribute value or an element's content."""
    return escape(str(text), quote=True)


def text_width(text: str, size: float = 11.0) -> float:
    return len(text) * CHAR_WIDTH * size / 11.0


def fmt(value: float) -> str:
    """A coordinate, short."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def si(value: float, unit: str = "") -> str:
    """`1.5e6` -> `1.5M`."""
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g}{prefix}{unit}"
    return f"{value:.3g}{unit}"


def binary_bytes(count: float) -> str:
    """`4157952` -> `3.97 MiB`."""
    for factor, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if count >= factor:
            return f"{count / factor:.2f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{count:.0f} B"


__all__ = ["CHAR_WIDTH", "FONT", "attr", "binary_bytes", "fmt", "si", "text_width"]
