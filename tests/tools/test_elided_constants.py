"""IR written with `--elide-large-constants` (`dense_resource<__elided__>`)
parses, verifies and optimises, but a step that needs a constant's data
(a kernel's weights, an NPU program's DRAM image) stops with one line
naming the pass, the constant and why its data is missing, and writes no
output file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ember.cli import main as ember_main
from ember.opt import main as opt_main

CPU = "graph-optimize{level=2},convert-graph-to-tensor,convert-tensor-to-loop,convert-loop-to-llvm"
NPU = "graph-simplify,graph-partition-npu,convert-graph-to-npu"


@pytest.fixture
def elided_ir(tmp_path: Path) -> Path:
    """`ember import m.onnx --elide-large-constants -o m.mlir` of a MatMul by
    a 32 x 8 weight."""
    weight = numpy_helper.from_array(np.arange(256, dtype=np.float32).reshape(32, 8), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 8])], [weight],
    )  # fmt: skip
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    ir = tmp_path / "m.mlir"
    assert ember_main(["import", str(model), "--elide-large-constants", "-o", str(ir)]) == 0
    assert "%w = graph.constant dense_resource<__elided__> : tensor<32x8xf32>" in ir.read_text()
    return ir


@pytest.mark.parametrize("pipeline, step", [(CPU, "convert-tensor-to-loop"),
                                            (NPU, "convert-graph-to-npu")])  # fmt: skip
def test_the_step_that_needs_the_data_names_itself_and_the_constant(
    elided_ir: Path, pipeline: str, step: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = elided_ir.with_name("out.mlir")
    assert opt_main([str(elided_ir), "-p", pipeline, "-o", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"{elided_ir}: error: {step}: graph.constant %w : tensor<32x8xf32>: its data is "
        "elided: the IR was written with --elide-large-constants "
        "(dense_resource<__elided__>); give this step IR written without it\n"
    )
    assert not out.exists()
    assert sorted(p.name for p in elided_ir.parent.iterdir()) == ["m.mlir", "m.onnx"]


def test_a_failed_run_keeps_the_output_file_that_was_there(
    elided_ir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = elided_ir.with_name("out.ll")
    out.write_text("from an earlier run\n")
    assert opt_main([str(elided_ir), "-p", CPU, "-t", "llvm", "-o", str(out)]) == 1
    assert "convert-tensor-to-loop: graph.constant %w" in capsys.readouterr().err
    assert out.read_text() == "from an earlier run\n"


def test_the_graph_passes_run_on_elided_constants(
    elided_ir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Optimising needs no data it cannot do without: it leaves the elided
    constant as it is."""
    assert opt_main([str(elided_ir), "-p", "graph-optimize{level=2}"]) == 0
    # (xDSL numbers a handle it has seen in this process before: __elided___2)
    assert "%w = graph.constant dense_resource<__elided__" in capsys.readouterr().out
