"""The graph as an SVG picture: with Graphviz's `dot` where it is on PATH,
else with the layered layout of `layered_layout.py`.

Both pictures share the markup the report's script and tests read: a
cluster (fusion group, NPU segment) is a `<g class="cluster">`, a node a
`<g class="node">` whose `<title>` says what it is, linking to its kernel
(`#kernel-NAME`) where it ended in one.
"""

from __future__ import annotations

import shutil
import subprocess

from ember.explore.graph_model import Graph, Node
from ember.explore.layered_layout import layered_layout
from ember.explore.naming import short_kernel
from ember.explore.svg import FONT, attr, fmt, text_width

DOT = "dot"
"""Graphviz's layered-layout program."""

DOT_SECONDS = 60
LINE_HEIGHT = 13.0
MAX_LINE = 44
"""Characters of a label line; longer ones are cut with an ellipsis."""

FILLS = {"input": "#d8f0d8", "output": "#f6e0c8"}
DEFAULT_FILL = "#e4ecf8"
BOLD = ' font-weight="bold"'


def label_lines(node: Node) -> list[str]:
    """What a node's box says: its name, op, shapes, layout and kernel."""
    lines = [node.name]
    if node.op not in ("input", "output"):
        lines.append(node.op)
    lines.append(node.shapes)
    if node.layout:
        lines.append(node.layout)
    if node.kernels:
        lines.append("-> " + ", ".join(short_kernel(k) for k in node.kernels))
    return [line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "\u2026" for line in lines]


def tooltip(node: Node) -> str:
    parts = [f"{node.name}: {node.op}", f"shapes: {node.shapes}"]
    if node.layout:
        parts.append(f"layout: {node.layout}")
    if node.kernels:
        parts.append(f"kernels: {', '.join(node.kernels)}")
    return "\n".join(parts)


def kernel_anchor(kernel: str) -> str:
    """The id of a kernel's entry in the report."""
    return f"kernel-{kernel}"


def dot_available() -> bool:
    return shutil.which(DOT) is not None


def draw_graph(graph: Graph, engine: str = "auto") -> tuple[str, str]:
    """(SVG markup, the engine that laid it out: `dot` or `layered`).
    `engine`: `auto` (dot where available), `dot` or `layered`."""
    if engine in ("auto", "dot") and dot_available():
        svg = _draw_with_dot(graph)
        if svg is not None:
            return svg, "dot"
    return _draw_layered(graph), "layered"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def dot_source(graph: Graph) -> str:
    """The graph in Graphviz's language: clusters as `subgraph cluster_N`."""
    lines = ["digraph model {", "  rankdir=TB; nodesep=0.25; ranksep=0.35;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, '
             f'fillcolor="{DEFAULT_FILL}", color="#5a6b86"];',
             '  edge [color="#667", arrowsize=0.6];']  # fmt: skip
    lines += [_dot_node(node) for node in graph.nodes if not node.cluster]
    for cluster in graph.clusters:
        lines.append(f"  subgraph {cluster.id} {{")
        lines.append(f'    label={_dot_quote(cluster.label)}; style="dashed,rounded"; '
                     'color="#c0672a"; fontname="Helvetica"; fontsize=10; fontcolor="#c0672a";')  # fmt: skip
        lines += ["  " + _dot_node(node) for node in graph.nodes if node.cluster == cluster.id]
        lines.append("  }")
    lines += [f"  {source} -> {target};" for source, target in graph.edges]
    lines.append("}")
    return "\n".join(lines)


def _dot_node(node: Node) -> str:
    options = [f"label={_dot_quote(chr(10).join(label_lines(node)))}",
               f"tooltip={_dot_quote(tooltip(node))}", f"id={_dot_quote('node-' + node.id)}"]  # fmt: skip
    if node.op in FILLS:
        options.append(f'fillcolor="{FILLS[node.op]}"')
    if node.kernels:
        options.append(f"URL={_dot_quote('#' + kernel_anchor(node.kernels[0]))}")
    return f"  {node.id} [{', '.join(options)}];"


def _draw_with_dot(graph: Graph) -> str | None:
    try:
        done = subprocess.run([DOT, "-Tsvg"], input=dot_source(graph), capture_output=True,
                              text=True, timeout=DOT_SECONDS, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or "<svg" not in done.stdout:
        return None
    svg = done.stdout[done.stdout.index("<svg") :]
    return svg.replace("<svg ", '<svg class="graph" data-engine="dot" ', 1)


def _draw_layered(graph: Graph) -> str:
    sizes = {}
    for node in graph.nodes:
        lines = label_lines(node)
        sizes[node.id] = (
            max(text_width(line) for line in lines) + 16,
            LINE_HEIGHT * len(lines) + 10,
        )
    layout = layered_layout([n.id for n in graph.nodes], sizes, graph.edges)
    pos = layout.positions
    parts = [f'<svg class="graph" data-engine="layered" xmlns="http://www.w3.org/2000/svg" '
             f'xmlns:xlink="http://www.w3.org/1999/xlink" width="{fmt(layout.width + 20)}" '
             f'height="{fmt(layout.height + 20)}" viewBox="-10 -10 {fmt(layout.width + 20)} '
             f'{fmt(layout.height + 20)}" {FONT} font-size="11">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
             'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#667"/></marker>'
             "</defs>"]  # fmt: skip
    for number, cluster in enumerate(graph.clusters, 1):
        members = [n.id for n in graph.nodes if n.cluster == cluster.id]
        if not members:
            continue
        left = min(pos[m][0] - sizes[m][0] / 2 for m in members) - 8
        right = max(pos[m][0] + sizes[m][0] / 2 for m in members) + 8
        top = min(pos[m][1] - sizes[m][1] / 2 for m in members) - 18
        bottom = max(pos[m][1] + sizes[m][1] / 2 for m in members) + 6
        parts.append(f'<g id="clust{number}" class="cluster"><title>{attr(cluster.id)}</title>'
                     f'<rect x="{fmt(left)}" y="{fmt(top)}" width="{fmt(right - left)}" '
                     f'height="{fmt(bottom - top)}" rx="6" fill="#fff7ef" stroke="#c0672a" '
                     f'stroke-dasharray="5,3"/><text x="{fmt(left + 6)}" y="{fmt(top + 12)}" '
                     f'fill="#c0672a" font-size="10">{attr(cluster.label)}</text></g>')  # fmt: skip
    for source, target, points in layout.routes:
        path = " ".join(f"{fmt(x)},{fmt(y)}" for x, y in points)
        parts.append(f'<g class="edge"><title>{attr(source)}-&gt;{attr(target)}</title>'
                     f'<polyline points="{path}" fill="none" stroke="#667" '
                     'marker-end="url(#arrow)"/></g>')  # fmt: skip
    for node in graph.nodes:
        x, y = pos[node.id]
        width, height = sizes[node.id]
        lines = label_lines(node)
        text = "".join(
            f'<text x="{fmt(x)}" y="{fmt(y - height / 2 + 15 + i * LINE_HEIGHT)}" '
            f'text-anchor="middle"{BOLD if i == 0 else ""}>{attr(line)}</text>'
            for i, line in enumerate(lines)
        )
        box = (f'<rect x="{fmt(x - width / 2)}" y="{fmt(y - height / 2)}" width="{fmt(width)}" '
               f'height="{fmt(height)}" rx="5" fill="{FILLS.get(node.op, DEFAULT_FILL)}" '
               f'stroke="#5a6b86"/>{text}')  # fmt: skip
        if node.kernels:
            box = f'<a xlink:href="#{attr(kernel_anchor(node.kernels[0]))}">{box}</a>'
        parts.append(f'<g id="node-{attr(node.id)}" class="node"><title>{attr(tooltip(node))}'
                     f"</title>{box}</g>")  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts)


__all__ = ["DOT", "dot_available", "dot_source", "draw_graph", "kernel_anchor", "label_lines"]
