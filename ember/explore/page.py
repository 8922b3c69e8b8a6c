"""The explorer's report: one self-contained HTML file (styles, script and
pictures inline; nothing fetched) with the graph before and after
optimisation, the pipeline, the kernels, the memory plan and, for the
NPU, the cycles per layer."""

from __future__ import annotations

from html import escape

from ember.explore.collect import Exploration
from ember.explore.graph_model import Graph
from ember.explore.graph_svg import draw_graph, kernel_anchor
from ember.explore.memory_view import memory_svg
from ember.explore.memory_view import summary as memory_summary
from ember.explore.naming import short_kernel
from ember.explore.npu_view import cycles_svg
from ember.explore.roofline_svg import roofline_svg
from ember.explore.snapshots import KernelCode, PassView

PARALLEL_BODY = "_parallel"
"""`loop-parallelize` names the function of a kernel's parallel loop body
`KERNEL_parallelN`: its code is shown with its kernel's."""

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 1400px;
       padding: 0 18px 40px; color: #1d1d24; }
header { border-bottom: 1px solid #ccd; margin-bottom: 8px; }
nav a { margin-right: 14px; }
h2 { border-bottom: 1px solid #dde; padding-top: 10px; }
.figure { overflow: auto; max-height: 900px; border: 1px solid #dde; background: #fff; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border-bottom: 1px solid #e4e4ec; padding: 3px 8px; text-align: right; }
td.text, th.text { text-align: left; }
pre.ir { font-size: 12px; background: #f7f7fa; padding: 6px; overflow: auto; max-height: 600px; }
pre.ir .chg { background: #fff0b3; display: block; }
pre.ir .fold { color: #888; font-style: italic; display: block; }
pre.ir .no { color: #aab; user-select: none; display: inline-block; width: 5em; }
details { margin: 4px 0; }
details > summary { cursor: pointer; }
details.pass > summary .stats { color: #667; font-size: 12px; }
details.pass.unchanged > summary { color: #889; }
details.kernel.flash, details.kernel:target { outline: 3px solid #f0a030; }
.note { color: #667; font-size: 12px; }
svg a { cursor: pointer; }
"""

SCRIPT = """
function openTarget(id) {
  const target = document.getElementById(id);
  if (!target) return;
  for (let node = target; node; node = node.parentElement)
    if (node.tagName === 'DETAILS') node.open = true;
  target.scrollIntoView({block: 'start'});
  const kernel = target.closest('details.kernel');
  if (kernel) { kernel.classList.add('flash'); setTimeout(() => kernel.classList.remove('flash'), 1500); }
}
document.addEventListener('click', (event) => {
  const link = event.target.closest('a');
  if (!link) return;
  const href = link.getAttribute('href') || link.getAttribute('xlink:href') || '';
  if (!href.startsWith('#kernel-')) return;
  event.preventDefault();
  history.replaceState(null, '', href);
  openTarget(href.slice(1));
});
window.addEventListener('hashchange', () => openTarget(location.hash.slice(1)));
if (location.hash) openTarget(location.hash.slice(1));
"""


def _graph_section(
    graph: Graph | None, title: str, element_id: str, engine: str
) -> tuple[str, str]:
    if graph is None:
        return f"<h3>{title}</h3><p class='note'>not available</p>", engine
    svg, used = draw_graph(graph, engine)
    clusters = len(graph.clusters)
    nodes = sum(n.op not in ("input", "output") for n in graph.nodes)
    return (f'<details open id="{element_id}" data-clusters="{clusters}"><summary><b>{title}</b>: '
            f"{nodes} ops, {clusters} cluster(s) (fusion groups or NPU segments), laid out with "
            f"<span class='engine'>{used}</span></summary><div class='figure'>{svg}</div></details>",
            used)  # fmt: skip


def _pass_html(index: int, view: PassView) -> str:
    rows = []
    for row in view.rows:
        if row.number == 0:
            rows.append(f'<span class="fold">{escape(row.text)}</span>')
            continue
        line = f'<span class="no">{row.number}</span>{escape(row.text)}'
        rows.append(f'<span class="chg">{line}</span>' if row.changed else line + "\n")
    unchanged = " unchanged" if view.added == 0 and view.removed == 0 else ""
    stats = (f"{view.lines} lines, +{view.added} -{view.removed}, {view.seconds * 1e3:.0f} ms"
             if not unchanged else f"{view.lines} lines, no change")  # fmt: skip
    if not view.rows:  # listed, not shown
        return (f'<details class="pass unchanged" id="pass-{index}"><summary>{index}. '
                f"<code>{escape(view.name)}</code> <span class='stats'>{escape(view.note)}</span>"
                "</summary></details>")  # fmt: skip
    note = f"<p class='note'>{escape(view.note)}</p>" if view.note else ""
    return (f'<details class="pass{unchanged}" id="pass-{index}"><summary>{index}. '
            f"<code>{escape(view.name)}</code> <span class='stats'>{stats}</span></summary>"
            f'{note}<pre class="ir">{"".join(rows)}</pre></details>')  # fmt: skip


def _kernel_nodes(graph: Graph | None) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for node in graph.nodes if graph is not None else []:
        for kernel in node.kernels:
            if node.name not in found.setdefault(kernel, []):
                found[kernel].append(node.name)
    return found


def _kernels_section(found: Exploration) -> str:
    snapshots = found.snapshots
    profile = found.profile
    nodes = _kernel_nodes(snapshots.graph_after)
    rows = {row.name: row for row in profile.rows} if profile is not None else {}
    order = list(rows) + [k for k in dict.fromkeys(snapshots.call_order) if k not in rows]
    order += [k for k in snapshots.kernels if k not in order and snapshots.kernels[k].loop_ir
              and not any(k.startswith(f"{o}{PARALLEL_BODY}") for o in order)]  # fmt: skip
    parts = ["<h2 id='kernels'>Kernels</h2>"]
    if profile is not None:
        peak = profile.limits.peak_gflops * profile.threads
        parts.append(f"<p>{escape(profile.limits.format())}<br>profile over {profile.runs} runs "
                     f"on {profile.threads} thread(s); % of peak of {peak:.1f} GFLOP/s; kernels "
                     f"{profile.kernel_seconds * 1e3:.3f} ms of {profile.total_seconds * 1e3:.3f} "
                     "ms measured around the runs. Hover a point for its numbers, click it for its "
                     "code.</p>")  # fmt: skip
        parts.append(f"<div class='figure'>{roofline_svg(profile)}</div>")
    else:
        parts += [f"<p class='note'>{escape(note)}</p>" for note in found.notes]
    header = ("<tr><th class='text'>kernel</th><th class='text'>what</th><th class='text'>graph "
              "nodes</th><th>calls</th><th>total ms</th><th>us/call</th><th>GFLOP/s</th>"
              "<th>% peak</th><th>flop/B</th><th>% time</th><th class='text'>code</th></tr>")  # fmt: skip
    body = []
    for name in order:
        row = rows.get(name)
        anchor = kernel_anchor(name)
        cells = [f"<td class='text'><a class='kernel-link' href='#{anchor}'>{short_kernel(name)}</a></td>",
                 f"<td class='text'>{escape(row.label) if row else ''}</td>",
                 f"<td class='text'>{escape(', '.join(nodes.get(name, [])))}</td>"]  # fmt: skip
        if row is not None and profile is not None:
            peak = profile.limits.peak_gflops * profile.threads
            gflops, intensity = row.gflops, row.intensity
            cells += [f"<td>{row.calls}</td>", f"<td>{row.seconds * 1e3:.3f}</td>",
                      f"<td>{row.seconds_per_call * 1e6:.1f}</td>",
                      f"<td>{gflops:.1f}</td>" if gflops else "<td>-</td>",
                      f"<td>{100 * gflops / peak:.1f}</td>" if gflops else "<td>-</td>",
                      f"<td>{intensity:.2f}</td>" if intensity else "<td>-</td>",
                      f"<td>{100 * row.seconds / (profile.total_seconds or 1):.1f}</td>"]  # fmt: skip
        else:
            cells += ["<td>-</td>"] * 7
        cells.append(f"<td class='text'><a href='#{anchor}-loop'>loop IR</a> "
                     f"<a href='#{anchor}-llvm'>LLVM IR</a></td>")  # fmt: skip
        body.append(f"<tr>{''.join(cells)}</tr>")
    if body:
        parts.append(f"<table class='kernels'>{header}{''.join(body)}</table>")
    for name in order:
        row = rows.get(name)
        bodies = {
            k: c for k, c in snapshots.kernels.items() if k.startswith(f"{name}{PARALLEL_BODY}")
        }
        parts.append(f"<details class='kernel' id='{kernel_anchor(name)}'><summary><b>"
                     f"{short_kernel(name)}</b> <code>{escape(name)}</code> "
                     f"{escape(row.label) if row else ''} {escape(', '.join(nodes.get(name, [])))}"
                     f"</summary>{_kernel_code(name, snapshots.kernels.get(name), bodies)}</details>")  # fmt: skip
    return "\n".join(parts)


def _kernel_code(name: str, code: KernelCode | None, bodies: dict[str, KernelCode]) -> str:
    """A kernel's schedules, loop IR and LLVM IR, and those of the functions
    its parallel loops run (`bodies`)."""
    code = code or KernelCode()
    anchor = kernel_anchor(name)
    schedules = "".join(f"<li><code>{escape(s)}</code></li>" for s in code.schedules)
    parts = [f"<div>schedules: <ul>{schedules}</ul></div>" if schedules else
             "<p>schedule: none recorded (its loops were made before it became a kernel)</p>",
             f"<h4 id='{anchor}-loop'>loop IR</h4><pre class='ir loop-ir'>{escape(code.loop_ir)}</pre>"]  # fmt: skip
    parts += [f"<h4>loop IR of its parallel body <code>{escape(body)}</code></h4>"
              f"<pre class='ir loop-ir'>{escape(bodies[body].loop_ir)}</pre>" for body in bodies]  # fmt: skip
    parts.append(f"<h4 id='{anchor}-llvm'>LLVM IR (before LLVM's optimisation)</h4>"
                 f"<pre class='ir llvm-ir'>{escape(code.llvm_ir)}</pre>")  # fmt: skip
    parts += [f"<h4>LLVM IR of <code>{escape(body)}</code></h4>"
              f"<pre class='ir llvm-ir'>{escape(bodies[body].llvm_ir)}</pre>" for body in bodies]  # fmt: skip
    return "".join(parts)


def _memory_section(found: Exploration) -> str:
    plan = found.snapshots.memory
    parts = ["<h2 id='memory'>Memory plan</h2>"]
    if plan is None and found.npu is not None:
        moved = sum(s.bytes_loaded + s.bytes_stored for s in found.npu.segments)
        parts.append("<p class='note'>The NPU's programs place their data in the scratchpad "
                     f"layer by layer (their DMA traffic, {moved:,} bytes in all, is in the NPU "
                     "section); the host's share is compiled apart, its arena not shown here.</p>")  # fmt: skip
        return "\n".join(parts)
    if plan is None:
        parts.append("<p class='note'>no memory plan: the target plans no arena</p>")
        return "\n".join(parts)
    parts.append(f"<p>{escape(memory_summary(plan))} (<code>loop-plan-memory</code> on "
                 f"<code>@{escape(plan.function)}</code>). Hover a buffer for its name, size, "
                 "offset and live range; the red line is the bytes live at each step.</p>")  # fmt: skip
    if found.report.arena_bytes and found.report.arena_bytes != plan.arena_bytes:
        parts.append(f"<p class='note'>the compiled arena is {found.report.arena_bytes:,} bytes: "
                     "the plan's buffers and what later passes add (a profile's counters)</p>")  # fmt: skip
    svg = memory_svg(plan)
    if svg:
        parts.append(f"<div class='figure'>{svg}</div>")
    return "\n".join(parts)


def _npu_section(found: Exploration) -> str:
    report = found.npu
    parts = ["<h2 id='npu'>NPU cycles</h2>",
             f"<p>{report.cycles:,} cycles on the NPU in {len(report.segments)} segment(s); on the "
             f"host: {escape(', '.join(report.host_ops) or 'nothing')}</p>",
             f"<div class='figure'>{cycles_svg(report, found.dma_bytes_per_cycle)}</div>"]  # fmt: skip
    header = ("<tr><th class='text'>segment</th><th class='text'>layer</th><th class='text'>m x k x "
              "n</th><th>cycles</th><th>utilisation</th><th>KiB moved</th><th class='text'>"
              "schedule</th></tr>")  # fmt: skip
    body = [f"<tr id='{kernel_anchor(layer.segment)}-{index}'><td class='text'>{escape(layer.segment)}</td>"
            f"<td class='text'>{escape(layer.ops)}</td><td class='text'>{escape(layer.shape)}</td>"
            f"<td>{layer.cycles:,}</td><td>{layer.utilization:.1%}</td>"
            f"<td>{layer.bytes_moved / 1024:,.1f}</td><td class='text'>{escape(layer.schedule)}</td></tr>"
            for segment in report.segments for index, layer in enumerate(segment.layers)]  # fmt: skip
    parts.append(f"<table class='npu-layers'>{header}{''.join(body)}</table>")
    for segment in report.segments:
        parts.append(f"<details class='kernel' id='{kernel_anchor(segment.name)}'><summary>segment "
                     f"<b>{escape(segment.name)}</b>: {segment.cycles:,} cycles, utilisation "
                     f"{segment.utilization:.1%}, {segment.instructions:,} instructions, "
                     f"{segment.bytes_loaded:,} bytes loaded, {segment.bytes_stored:,} stored"
                     "</summary></details>")  # fmt: skip
    return "\n".join(parts)


def render_page(found: Exploration, engine: str = "auto") -> str:
    """The report of `found` as HTML; `engine` lays the graphs out (see `draw_graph`)."""
    snapshots = found.snapshots
    after, used = _graph_section(
        snapshots.graph_after, "Graph after optimisation", "graph-after", engine
    )
    before, _ = _graph_section(snapshots.graph_before, "Graph as imported", "graph-before", engine)
    stages = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in found.report.seconds.items())
    options = found.options
    sections = ["graph", "pipeline", "kernels", "memory"] + (
        ["npu"] if found.npu is not None else []
    )
    nav = " ".join(f"<a href='#{s}'>{s}</a>" for s in sections)
    passes = "\n".join(_pass_html(i, view) for i, view in enumerate(snapshots.passes, 1))
    parts = [
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>ember explore: {escape(found.model)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>{escape(found.model)} on {escape(found.target)}</h1>",
        f"<p>-O{options.opt_level}, layout {escape(options.layout)}, {options.threads} thread(s); "
        f"compile stages: {escape(stages)}. Graph layout engine: <b id='layout-engine'>{used}</b>"
        f"{'' if used == 'dot' else ' (Graphviz dot not found: the built-in layered layout)'}.</p>",
        f"<nav>{nav}</nav></header>",
        "<h2 id='graph'>Graph</h2><p>Dashed boxes are fusion groups (one kernel each) or NPU "
        "segments; each node shows its name, op, result shapes, layout and the kernel(s) it "
        "ended in (click to see them).</p>", after, before,
        "<h2 id='pipeline'>Pipeline</h2><p>The IR after each pass, large constants elided; "
        "highlighted lines are the ones the pass changed.</p>", passes,
        _kernels_section(found), _memory_section(found),
        _npu_section(found) if found.npu is not None else "",
        f"<script>{SCRIPT}</script></body></html>",
    ]  # fmt: skip
    return "\n".join(parts)


__all__ = ["render_page"]
