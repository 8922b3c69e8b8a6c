"""Mistaken thread counts, wherever they are given: one clear error naming
`threads`, never a traceback, a hang or a silent fallback."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

import ember
from ember.benchmarking import benchmark_model
from ember.cli import main
from ember.errors import EmberError
from ember.options import MAX_THREADS
from tests.robustness.test_ember_opt import assert_one_line_error, run_opt
from tests.tools.test_cli import diagnostics

BAD_COUNTS = [0, -1, MAX_THREADS + 1, 1.5, 2.0, True, "2", [2]]


@pytest.fixture(scope="module")
def relu() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("threads", BAD_COUNTS)
def test_compile_rejects_a_bad_count(relu: onnx.ModelProto, threads: object) -> None:
    with pytest.raises(EmberError, match=r"^threads must be an integer from 1 to 1024, got "):
        ember.compile(relu, threads=threads)  # type: ignore[arg-type]


@pytest.mark.parametrize("threads", [0, -3, MAX_THREADS + 1])
def test_benchmark_rejects_a_bad_count(relu: onnx.ModelProto, threads: int) -> None:
    with pytest.raises(EmberError, match="threads must be"):
        benchmark_model(relu, threads=threads, runs=1)


@pytest.mark.parametrize("command", ["run", "compile", "bench"])
@pytest.mark.parametrize("text", ["0", "-2", "1025", "two", "1.5", ""])
def test_cli_rejects_a_bad_count(
    relu: onnx.ModelProto, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    command: str, text: str,
) -> None:  # fmt: skip
    path = tmp_path / "relu.onnx"
    onnx.save(relu, path)
    extra = ["-o", str(tmp_path / "out")] if command == "compile" else []
    with pytest.raises(SystemExit) as exit_:  # a usage mistake, found by argparse
        main([command, str(path), "--threads", text, *extra])
    assert exit_.value.code == 1
    lines = diagnostics(capsys.readouterr().err)
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0].startswith(f"ember {command}: error: argument --threads: must be an integer "
                               f"from 1 to {MAX_THREADS}, got '{text}'")  # fmt: skip
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("threads", ["0", "-4"])
def test_ember_opt_rejects_a_bad_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], threads: str
) -> None:
    path = tmp_path / "empty.mlir"
    path.write_text("func.func @f() {\n  func.return\n}\n")
    code, _, err = run_opt(capsys, str(path), "-p", f"loop-parallelize{{threads={threads}}}")
    assert_one_line_error(code, err, ".*empty.mlir", f"threads must be at least 1, got {threads}")


@pytest.mark.parametrize("attribute", ["0 : i64", "-2 : i64", '"many"'])
def test_a_malformed_launch_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], attribute: str
) -> None:
    path = tmp_path / "launch.mlir"
    path.write_text(
        "func.func @f(%n: index) {\n"
        "  %c0 = arith.constant 0 : index\n"
        f"  func.call @g(%c0, %n) {{ember.parallel_threads = {attribute}}} : (index, index) -> ()\n"
        "  func.return\n}\n"
        "func.func private @g(%b: index, %e: index) attributes {ember.parallel_body} {\n"
        "  func.return\n}\n"
    )
    code, _, err = run_opt(capsys, str(path), "-p", "convert-loop-to-llvm")
    assert_one_line_error(code, err, ".*launch.mlir", "ember.parallel_threads needs a positive")


def test_threads_with_the_reference_interpreter_is_a_mistake(
    relu: onnx.ModelProto, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "relu.onnx"
    onnx.save(relu, path)
    assert main(["run", str(path), "--target", "reference", "--threads", "2"]) == 1
    lines = diagnostics(capsys.readouterr().err)
    assert lines == ["error: --threads applies to --target cpu (the reference interpreter does "
                     "not run compiled code)"]  # fmt: skip
