"""The `ember` command on mistaken or unusual arguments: one `error:` line and
status 1, or a documented result; options are never silently ignored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ember.cli import main
from tests.tools.test_cli import diagnostics


def _save(tmp_path: Path, name: str, nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
          outputs: list[onnx.ValueInfoProto]) -> str:  # fmt: skip
    graph = helper.make_graph(nodes, name, inputs, outputs)
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


@pytest.fixture
def relu_sum(tmp_path: Path) -> str:
    """y = ReduceSum(Relu(x)) over x: float32[n, 3], n unknown."""
    return _save(tmp_path, "relu_sum",
                 [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("ReduceSum", ["r"], ["y"])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])  # fmt: skip


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 1
    lines = diagnostics(capsys.readouterr().err)
    assert len(lines) == 1, lines
    return lines[0]


def test_zero_size_dimension_runs_and_matches_onnxruntime(
    relu_sum: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in ("cpu", "reference"):
        assert main(["run", relu_sum, "--input-shape", "x=0x3", "--target", target, "--check"]) == 0
        out = capsys.readouterr().out
        assert "y: float32[1, 1] mean=0" in out and "-> ok" in out


def test_input_file_is_checked_before_compiling(
    relu_sum: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "wide.npy", np.zeros((2, 4), np.float32))
    np.save(tmp_path / "ints.npy", np.zeros((2, 3), np.int64))
    np.savez(tmp_path / "two.npz", a=np.zeros(2), b=np.zeros(2))
    message = _error(capsys, ["run", relu_sum, "--input", f"x={tmp_path / 'wide.npy'}",
                              "--input-shape", "x=2x3"])  # fmt: skip
    assert "--input x: the model takes float32[2x3], the file holds float32[2x4]" in message
    message = _error(capsys, ["run", relu_sum, "--input", f"x={tmp_path / 'ints.npy'}"])
    assert "the file holds int64[2x3]" in message
    message = _error(capsys, ["run", relu_sum, "--input", f"x={tmp_path / 'two.npz'}"])
    assert "several arrays" in message
    message = _error(capsys, ["run", relu_sum, "--input", f"z={tmp_path / 'ints.npy'}",
                              "--input-shape", "x=2x3"])  # fmt: skip
    assert "unknown input(s) z" in message


def test_check_when_onnxruntime_rejects_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # onnxruntime has no float64 Erf kernel; Ember compiles it.
    path = _save(tmp_path, "erf64", [helper.make_node("Erf", ["x"], ["y"])],
                 [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [4])],
                 [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [4])])  # fmt: skip
    assert main(["run", path, "--quiet"]) == 0
    capsys.readouterr()
    assert "onnxruntime cannot load the model" in _error(capsys, ["run", path, "--check"])


def test_check_when_onnxruntime_rejects_the_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    # The override makes the batch empty; onnxruntime runs the model as declared (batch 1).
    argv = ["run", "light:squeezenet", "--input-shape", "data_0=0x3x224x224", "--check", "-O0"]
    assert "onnxruntime cannot run the model" in _error(capsys, argv)


def test_quiet_silences_progress_and_errors_stay_one_line(
    relu_sum: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", relu_sum, "--input-shape", "x=2x3", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["run", relu_sum, "--input-shape", "x=2x3"]) == 0
    stages = capsys.readouterr().err.split()
    assert {"import", "graph", "tensor", "loop", "llvm", "llvm-jit", "run"} <= set(stages)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_status:
        main(["--version"])
    assert exit_status.value.code == 0
    assert capsys.readouterr().out.startswith("ember 0.")
