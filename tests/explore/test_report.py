"""`ember explore`: the report of a tiny model, parsed (no browser): its
sections, its pictures as well-formed SVG, the clusters against the fusion
groups of the optimised graph, every link to a kernel landing on it."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import onnx
import pytest
from xdsl.context import Context

from ember.cli import main
from ember.dialects.graph import FusedOp
from ember.explore import explore
from ember.explore.collect import explore_model
from ember.explore.graph_svg import dot_available
from ember.frontends.onnx import import_onnx
from ember.options import Options
from ember.passes.graph.optimize import graph_passes
from ember.targets.cpu.pipeline import cpu_passes

SVG = "{http://www.w3.org/2000/svg}"


class Elements(HTMLParser):
    """Every element's tag and attributes, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {k: v or "" for k, v in attrs}))


def parsed(page: str) -> list[tuple[str, dict[str, str]]]:
    parser = Elements()
    parser.feed(page)
    return parser.found


def svgs(page: str) -> list[ET.Element]:
    """Each inline SVG picture, parsed as XML (it must be well formed)."""
    return [ET.fromstring(block) for block in re.findall(r"<svg\b.*?</svg>", page, re.S)]


def fused_groups(model_path: str) -> int:
    module = import_onnx(model_path)
    for graph_pass in graph_passes(2, Options().layout, ()):
        graph_pass.apply(Context(), module)
    return sum(isinstance(op, FusedOp) for op in module.walk())


@pytest.fixture(scope="module")
def report(tiny_model_path: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    path = tmp_path_factory.mktemp("report") / "tiny.html"
    found = explore(tiny_model_path, path, options=Options(threads=1), runs=2, engine="layered")
    return path.read_text(), found


def test_report_has_every_section(report: tuple[str, object]) -> None:
    page, _ = report
    ids = {attrs.get("id") for _, attrs in parsed(page)}
    assert {"graph", "graph-after", "graph-before", "pipeline", "kernels", "memory"} <= ids
    assert "npu" not in ids  # the CPU has no cycle model
    assert (
        "<script src" not in page
        and "<link" not in page
        and "http://" not in page.replace("http://www.w3.org/", "")
    )  # self-contained: nothing fetched


def test_graph_clusters_are_the_fusion_groups(
    report: tuple[str, object], tiny_model_path: str
) -> None:
    page, _ = report
    groups = fused_groups(tiny_model_path)
    assert groups >= 1
    pictures = {svg.get("class"): svg for svg in svgs(page) if svg.get("class") == "graph"}
    assert pictures
    after = re.search(r'id="graph-after" data-clusters="(\d+)"', page)
    assert after is not None and int(after.group(1)) == groups
    graph_after = svgs(page[page.index('id="graph-after"') :])[0]
    assert graph_after.get("data-engine") == "layered"
    clusters = [g for g in graph_after.iter(f"{SVG}g") if g.get("class") == "cluster"]
    assert len(clusters) == groups
    titles = [g.find(f"{SVG}title").text or "" for g in graph_after.iter(f"{SVG}g")
              if g.get("class") == "node"]  # fmt: skip
    assert any(title.startswith("conv1:") for title in titles)  # named by the model's weights
    assert any("kernels: ember_main_kernel" in title for title in titles)


def test_every_pass_is_listed_with_its_changes(report: tuple[str, object]) -> None:
    page, found = report
    names = [p.name for _, p in cpu_passes(found.options)]  # type: ignore[attr-defined]
    listed = re.findall(
        r'<details class="pass[^"]*" id="pass-\d+"><summary>\d+\. <code>([^<]+)</code>', page
    )
    assert listed == names
    assert 'class="chg"' in page  # changed lines highlighted
    assert "__elided__" in page or "dense<" in page


def test_kernels_have_times_code_and_a_roofline(report: tuple[str, object]) -> None:
    page, found = report
    profile = found.profile  # type: ignore[attr-defined]
    assert profile is not None and profile.rows
    ids = {attrs.get("id") for _, attrs in parsed(page)}
    for row in profile.rows:
        assert f"kernel-{row.name}" in ids and f"kernel-{row.name}-loop" in ids
        assert f"kernel-{row.name}-llvm" in ids
    links = {
        attrs["href"][1:]
        for tag, attrs in parsed(page)
        if tag == "a" and attrs.get("href", "").startswith("#")
    }
    assert links <= ids | {"graph", "pipeline", "kernels", "memory"}
    roofline = next(svg for svg in svgs(page) if svg.get("class") == "roofline")
    points = [c for c in roofline.iter(f"{SVG}circle") if c.get("class") == "kernel-point"]
    assert len(points) == sum(1 for r in profile.rows if r.gflops and r.intensity)
    assert all(point.find(f"{SVG}title") is not None for point in points)  # hover details
    assert "define " in page  # LLVM IR of the kernels


def test_memory_plan_matches_the_compiled_arena(tiny_model_path: str) -> None:
    found = explore_model(tiny_model_path, "tiny", options=Options(threads=1, opt_level=1))
    plan = found.snapshots.memory
    assert plan is not None and plan.buffers
    # Without a profile's counters the arena is exactly the plan's.
    compiled_arena = found.report.arena_bytes - 16 * len(found.report.kernel_costs)
    assert plan.arena_bytes <= compiled_arena <= plan.arena_bytes + 64
    assert plan.naive_bytes == found.report.naive_bytes
    for a in plan.buffers:  # buffers live together never share bytes
        for b in plan.buffers:
            if a is not b and a.start <= b.end and b.start <= a.end:
                assert a.offset + a.bytes <= b.offset or b.offset + b.bytes <= a.offset


@pytest.mark.skipif(not dot_available(), reason="Graphviz dot is not on PATH")
def test_dot_draws_the_same_clusters(report: tuple[str, object], tmp_path: Path) -> None:
    from ember.explore import write_report

    _, found = report
    path = tmp_path / "dot.html"
    write_report(found, path, engine="dot")  # type: ignore[arg-type]
    graph_after = svgs(path.read_text()[path.read_text().index('id="graph-after"') :])[0]
    assert graph_after.get("data-engine") == "dot"
    clusters = [g for g in graph_after.iter(f"{SVG}g") if g.get("class") == "cluster"]
    assert len(clusters) == int(
        re.search(r'id="graph-after" data-clusters="(\d+)"', path.read_text()).group(1)
    )  # type: ignore[union-attr]


def test_cli_writes_the_report(
    tiny_model_path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert main(["explore", tiny_model_path, "-o", str(out), "--threads", "1", "--runs", "1",
                 "--layout-engine", "layered", "-q"]) == 0  # fmt: skip
    assert f"report: {out}" in capsys.readouterr().out
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_cli_unwritable_report_is_one_line(tiny_model_path: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = tmp_path / "missing" / "r.html"
    assert (
        main(["explore", tiny_model_path, "-o", str(out), "--threads", "1", "--runs", "1", "-q"])
        == 1
    )
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1 and str(out) in error
    assert not out.parent.exists()


def test_compile_html_reports_the_deployed_compile(tiny_model_path: str, tmp_path: Path) -> None:
    out = tmp_path / "c.html"
    assert main(["compile", tiny_model_path, "-o", str(tmp_path / "lib"), "--threads", "1",
                 "--html", str(out), "-q"]) == 0  # fmt: skip
    page = out.read_text()
    assert 'id="graph-after"' in page and "loop-plan-memory" in page
    assert "no profile" in page


def test_npu_report_shows_segments_and_cycles(tiny_model_path: str, tmp_path: Path) -> None:
    path = tmp_path / "npu.html"
    found = explore(tiny_model_path, path, target="npu", engine="layered")
    page = path.read_text()
    segments = found.npu.segments
    assert segments
    after = re.search(r'id="graph-after" data-clusters="(\d+)"', page)
    assert after is not None and int(after.group(1)) == len(segments)
    chart = next(svg for svg in svgs(page) if svg.get("class") == "npu-cycles")
    layers = [g for g in chart.iter(f"{SVG}g") if g.get("class") == "layer"]
    assert len(layers) == sum(len(s.layers) for s in segments)
    assert all(
        {"cycles", "compute", "dma"} <= {r.get("class") for r in g.iter(f"{SVG}rect")}
        for g in layers
    )
    assert "id='npu'" in page
    assert "<code>convert-graph-to-npu</code> <span class='stats'>not shown" in page


def test_bench_html_has_the_profile(tiny_model_path: str, tmp_path: Path) -> None:
    out = tmp_path / "b.html"
    assert main(["bench", tiny_model_path, "--profile", "--runs", "2", "--threads", "1",
                 "--html", str(out), "-q"]) == 0  # fmt: skip
    page = out.read_text()
    assert 'class="roofline"' in page and "kernel-point" in page


def test_symbolic_dims_give_a_report_without_a_profile(
    tiny_model: onnx.ModelProto, tmp_path: Path
) -> None:
    model = tiny_model
    for value in (model.graph.input[0], model.graph.output[0]):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    path = tmp_path / "symbolic.html"
    found = explore(model.SerializeToString(), path, dims={"N": (1, 8)}, engine="layered")
    assert found.profile is None and found.snapshots.memory is not None
    assert found.snapshots.memory.symbolic and "N" in found.snapshots.memory.formula
    page = path.read_text()
    assert "symbolic dims" in page and 'id="graph-after"' in page
