"""`ember bench --profile` and `--plot`, run as users run them."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from tests.tools.test_cli import run

HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
ROW = re.compile(r"^(.+? \(kernel \d+\)) +(.+?) +(\d+) +(\d+\.\d+) +(\d+\.\d+) +(\S+) +(\S+) "
                 r"+(\d+\.\d)%$")  # fmt: skip
"""One kernel row: title (the model's nodes, kernel number), what, calls,
total ms, us/call, GFLOP/s, % peak, % time."""


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"]), helper.make_node("Relu", ["c"], ["d"])],
        "small",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [32, 48]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [48, 16])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, [32, 16])],
    )  # fmt: skip
    path = tmp_path_factory.mktemp("models") / "small.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_bench_profile_prints_one_row_per_kernel(small_model: Path) -> None:
    result = run("ember", "bench", str(small_model), "--profile", "--runs", "3", "-O0", "--quiet")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("machine: ") for line in lines)
    assert any("GFLOP/s per core" in line and "NumPy sgemm 1024^3" in line for line in lines)
    header = next(i for i, line in enumerate(lines) if line.startswith("kernel "))
    for column in ("calls", "total ms", "us/call", "GFLOP/s", "% peak", "% time"):
        assert column in lines[header]
    rows = [ROW.match(line) for line in lines[header + 1 : -1]]
    assert rows and all(rows), lines[header + 1 :]
    assert {int(row.group(3)) for row in rows if row} == {3}  # the timed runs, not the warm-up
    assert any(row.group(2).startswith("matmul") for row in rows if row)
    # Each row is named by the node it runs (these nodes have no names: their outputs').
    titles = {re.sub(r"\d+", "N", row.group(1)) for row in rows if row}
    assert titles == {"c (kernel N)", "d (kernel N)"}, titles
    assert re.match(r"kernels \d+\.\d+ ms of \d+\.\d+ ms measured", lines[-1])


def test_bench_profile_peak_counts_every_thread(small_model: Path) -> None:
    result = run("ember", "bench", str(small_model), "--profile", "--runs", "2", "--threads", "2",
                 "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    core = float(re.search(r"peak (\d+\.\d) GFLOP/s per core", result.stdout).group(1))
    both = re.search(r"profile over 2 runs on 2 thread\(s\), % peak of (\d+\.\d) GFLOP/s:",
                     result.stdout)  # fmt: skip
    assert both, result.stdout
    assert float(both.group(1)) == pytest.approx(2 * core, abs=0.2)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib (the plot extra) is not installed")
def test_bench_plot_writes_a_png(small_model: Path, tmp_path: Path) -> None:
    target = tmp_path / "roofline.png"
    result = run("ember", "bench", str(small_model), "--profile", "--plot", str(target),
                 "--runs", "2", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert target.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert f"roofline: {target}" in result.stdout


def test_bench_plot_without_matplotlib_says_how_to_get_it(
    small_model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ember import cli

    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # import fails
    code = cli.main(["bench", str(small_model), "--profile", "--plot", str(tmp_path / "r.png"),
                     "--quiet"])  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: --plot needs matplotlib, an optional dependency: pip install 'ember[plot]'"
    ]


@pytest.mark.slow
def test_bench_trace_writes_a_chrome_trace(small_model: Path, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    result = run("ember", "bench", str(small_model), "--trace", str(path), "--runs", "2",
                 "--threads", "2", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"trace: {path}" in result.stdout
    assert "% peak" not in result.stdout  # the profile's table only with --profile
    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert all({"ph", "ts", "dur", "pid", "tid", "name"} <= set(e) for e in slices)
    assert sum(e["cat"] == "run" for e in slices) == 2
    kernels = [e for e in slices if e["cat"] == "kernel"]
    assert kernels and len(kernels) % 2 == 0  # the same calls in each run
    assert {re.sub(r"\d+", "N", e["name"]) for e in kernels} <= {"c (kernel N)", "d (kernel N)",
                                                                 "c + d (kernel N)"}  # fmt: skip


def test_bench_trace_needs_cpu_kernels(small_model: Path, tmp_path: Path) -> None:
    result = run("ember", "bench", str(small_model), "--trace", str(tmp_path / "t.json"),
                 "--target", "npu", "--quiet")  # fmt: skip
    assert result.returncode != 0
    assert result.stderr == (
        "error: --trace times CPU kernels; on the npu target the table has every layer\n"
    ), result.stderr
    assert not (tmp_path / "t.json").exists()
