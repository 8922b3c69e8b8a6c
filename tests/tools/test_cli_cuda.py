"""`ember run|compile|bench --target cuda`: in process (`ember.cli.main`),
and as a user runs it where an error must be one line without a traceback.

No GPU is needed: `run --emulate` runs the kernels on this CPU, `compile`
and `bench --dry-run` stop at PTX and ptxas (skipped without ptxas), and
without a GPU `run` and `bench` say in one line what to install or to pass.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ember.cli import main
from ember.targets.cuda.runtime import cuda_available
from tests.tools.test_cli import assert_one_line_error, run

Capsys = pytest.CaptureFixture[str]
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
without_gpu = pytest.mark.skipif(cuda_available() is None, reason="a CUDA driver and GPU are here")

ROW = re.compile(r"^  (\w+) +(\d+x\d+x\d+) +(\d+x\d+x\d+) +(\d+) +(\d+) +(\d+)/(\d+)$")
"""A dry-run row: kernel, grid, block, registers, shared bytes, spill stores/loads."""
SUMMARY = re.compile(
    r"^  (\d+) kernel\(s\), (\d+) launch\(es\), at most (\d+) registers, (\d+) spill bytes "
    r"\(ptxas -arch=(sm_\d+)\)$"
)


def _save(graph: onnx.GraphProto, path: Path) -> str:
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


def _weights(rng: np.random.Generator, **shapes: tuple[int, ...]) -> list[onnx.TensorProto]:
    return [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
            for name, shape in shapes.items()]  # fmt: skip


@pytest.fixture(scope="module")
def matmul_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """relu(x @ W + B), x 8x32, W 32x24."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"]), helper.make_node("Add", ["y", "B"], ["z"]),
         helper.make_node("Relu", ["z"], ["r"])],
        "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 32])],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [8, 24])],
        _weights(np.random.default_rng(0), W=(32, 24), B=(24,)),
    )  # fmt: skip
    return _save(graph, tmp_path_factory.mktemp("models") / "mm.onnx")


@pytest.fixture(scope="module")
def conv_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A padded 3x3 convolution, Relu, a 2x2 max pool and a global average pool."""
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["p"], ["y"])],
        "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1, 1])],
        _weights(np.random.default_rng(1), w=(4, 3, 3, 3), b=(4,)),
    )  # fmt: skip
    return _save(graph, tmp_path_factory.mktemp("models") / "cnn.onnx")


@pytest.mark.parametrize("name", ["matmul_model", "conv_model"])
def test_run_emulated_checks_against_onnxruntime(name: str, request: pytest.FixtureRequest,
                                                 capsys: Capsys) -> None:  # fmt: skip
    model = request.getfixturevalue(name)
    assert main(["run", model, "--target", "cuda", "--emulate", "--check", "-q"]) == 0
    out = capsys.readouterr().out
    assert f"{model}: 1 output(s) from cuda" in out
    [check] = [line for line in out.splitlines() if "check " in line]
    assert "max abs error" in check and check.endswith("-> ok")


def test_compile_prints_the_files_it_wrote(matmul_model: str, tmp_path: Path,
                                           capsys: Capsys) -> None:  # fmt: skip
    out = tmp_path / "out"
    assert main(["compile", matmul_model, "--target", "cuda", "-o", str(out), "--arch", "sm_80",
                 "-q"]) == 0  # fmt: skip
    printed = [Path(line) for line in capsys.readouterr().out.split()]
    cubin = ["model.cubin"] if shutil.which("ptxas") else []
    assert sorted(p.name for p in printed) == sorted(["model.ptx", "model.weights", "model.json",
                                                      *cubin])  # fmt: skip
    assert all(path.parent == out and path.is_file() for path in printed)
    assert ".target sm_80" in (out / "model.ptx").read_text()
    manifest = json.loads((out / "model.json").read_text())
    assert manifest["arch"] == "sm_80" and manifest["launches"]


def test_compile_without_ptxas_writes_no_cubin(matmul_model: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: Capsys) -> None:  # fmt: skip
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["compile", matmul_model, "--target", "cuda", "-o", str(tmp_path), "-q"]) == 0
    printed = [Path(line).name for line in capsys.readouterr().out.split()]
    assert printed == ["model.ptx", "model.weights", "model.json"]


@without_gpu
@pytest.mark.parametrize("command", ["run", "bench"])
def test_without_a_gpu_running_is_one_line_that_says_what_to_do(matmul_model: str,
                                                                command: str) -> None:  # fmt: skip
    result = run("ember", command, matmul_model, "--target", "cuda")
    assert_one_line_error(result, "--emulate")
    assert "cuda-bindings" in result.stderr or "driver" in result.stderr


@needs_ptxas
def test_bench_dry_run_prints_a_row_per_launch(matmul_model: str,
                                               capsys: Capsys) -> None:  # fmt: skip
    assert main(["bench", matmul_model, "--target", "cuda", "--dry-run", "--arch", "sm_80",
                 "-q"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{matmul_model}: cuda dry run, nothing run"
    assert lines[1].split()[:4] == ["kernel", "grid", "block", "registers"]
    rows = [ROW.match(line) for line in lines[2:-1]]
    assert rows and all(rows), lines
    summary = SUMMARY.match(lines[-1])
    assert summary is not None, lines[-1]
    kernels, launches, registers, spills, arch = summary.groups()
    assert arch == "sm_80" and int(launches) == len(rows)
    assert int(kernels) == len({row.group(1) for row in rows if row})
    assert int(registers) == max(int(row.group(4)) for row in rows if row) > 0
    assert int(spills) == 0


def test_bench_dry_run_without_ptxas_is_one_line(matmul_model: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: Capsys) -> None:  # fmt: skip
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["bench", matmul_model, "--target", "cuda", "--dry-run", "-q"]) == 1
    assert capsys.readouterr().err == (
        "error: ptxas not found on PATH (it comes with the CUDA toolkit, or the "
        "nvidia-cuda-nvcc wheel)\n"
    )


@pytest.mark.parametrize(("argv", "message"), [
    (["bench", "--target", "cpu", "--dry-run"], "--dry-run: the cpu target has no dry run"),
    (["bench", "--target", "cuda", "--dry-run", "--profile"], "--dry-run runs nothing"),
    (["run", "--target", "cpu", "--emulate"], "--emulate applies to targets that run kernels "
                                              "on a device (cuda); --target cpu has no emulation"),
    (["run", "--target", "reference", "--emulate"], "--target reference has no emulation"),
    (["bench", "--target", "cuda", "--profile"], "the cuda target has no kernel profile"),
])  # fmt: skip
def test_options_that_do_not_apply_are_one_line_errors(matmul_model: str, argv: list[str],
                                                       message: str,
                                                       capsys: Capsys) -> None:  # fmt: skip
    assert main([argv[0], matmul_model, *argv[1:], "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
