"""The worked example of docs/adding-an-op.md (DepthToSpace), step by step."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ember
from ember.dialects.graph import (
    IMPORTABLE_OPS,
    OPS_BY_ONNX_TYPE,
    BinarizerOp,
    DepthToSpaceOp,
    ops_ml,
    ops_tensor,
)
from ember.errors import CompileError
from ember.lowering.graph_to_tensor import data_movement
from ember.reference.kernels import KERNELS
from tests.support.models import run_onnxruntime

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-an-op.md"


def test_step1_the_spec_defines_the_op() -> None:
    op = OPS_BY_ONNX_TYPE["DepthToSpace"]
    assert op is DepthToSpaceOp
    assert op.name == "graph.depth_to_space"
    assert [a.name for a in op.SPEC.attributes] == ["blocksize", "mode"]


def test_step1_the_doc_class_statement_is_the_tree_one() -> None:
    match = re.search(r"(@graph_op\(SPECS\)\n\s*class DepthToSpaceOp\(GraphOp\): \.\.\.)",
                      DOC.read_text())  # fmt: skip
    assert match, "the doc's class statement is missing"
    statement = re.sub(r"\n\s+", "\n", match.group(1))
    assert statement in Path(ops_tensor.__file__).read_text()


def _doc_ir_line() -> str:
    match = re.search(r"^\s*(%y = graph\.depth_to_space .*)$", DOC.read_text(), re.MULTILINE)
    assert match, "the doc's IR example is missing"
    return match.group(1)


def _opt(body: str, *args: str) -> subprocess.CompletedProcess[str]:
    result_type = body.rpartition("-> ")[2]
    source = (f"func.func @f(%x: tensor<1x8x3x3xf32>) -> {result_type} {{\n"
              f"  {body}\n  func.return %y : {result_type}\n}}\n")  # fmt: skip
    return subprocess.run([sys.executable, "-m", "ember.opt", *args], input=source,
                          capture_output=True, text=True)  # fmt: skip


def test_step2_and_5_the_doc_ir_round_trips_and_verifies() -> None:
    line = _doc_ir_line()
    result = _opt(line)
    assert result.returncode == 0, result.stderr
    assert line.strip() in result.stdout


def test_step5_a_wrong_declared_type_is_diagnosed() -> None:
    wrong = _doc_ir_line().replace("-> tensor<1x2x6x6xf32>", "-> tensor<1x2x5x5xf32>")
    result = _opt(wrong, "--disable-verify", "-p", "graph-infer-shapes")
    assert result.returncode == 0  # the pass recomputes the type...
    assert "tensor<1x2x6x6xf32>" in result.stdout
    result = _opt(wrong)  # ...and the verifier names the disagreement
    assert result.returncode == 1
    expected = ("graph.depth_to_space: result #0 has type tensor<1x2x5x5xf32>, "
                "but the operands imply tensor<1x2x6x6xf32>")  # fmt: skip
    assert expected in result.stderr
    assert expected in DOC.read_text()


def _model(mode: str) -> onnx.ModelProto:
    node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode=mode)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2, 6, 6])])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_step3_and_5_kernel_matches_onnxruntime_through_the_importer(mode: str) -> None:
    assert "DepthToSpace" in KERNELS
    model = _model(mode)
    x = np.random.default_rng(0).standard_normal((2, 8, 3, 3)).astype(np.float32)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = ember.reference.run(ember.import_onnx(model), [x])
    np.testing.assert_array_equal(got, want)


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_step4_the_doc_lowering_is_the_tree_one() -> None:
    tree = Path(data_movement.__file__).read_text()
    lowering = next(b for b in _python_blocks() if "def _lower_depth_to_space" in b)
    assert lowering in tree
    registration = next(b for b in _python_blocks() if "DepthToSpaceOp: _lower_depth_to_space" in b)
    assert registration in tree
    assert data_movement.DataMovementPattern.lowerings[DepthToSpaceOp] is (
        data_movement._lower_depth_to_space
    )


def test_step4_without_its_lowering_the_compiler_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    lowerings = dict(data_movement.DataMovementPattern.lowerings)
    del lowerings[DepthToSpaceOp]
    monkeypatch.setattr(data_movement.DataMovementPattern, "lowerings", lowerings)
    with pytest.raises(CompileError) as error:
        ember.compile(_model("DCR"))
    expected = "cannot lower 1 op: graph.depth_to_space (no lowering yet)"
    assert expected in str(error.value)
    assert expected in " ".join(DOC.read_text().split())


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_step4_the_compiled_op_matches_onnxruntime(mode: str) -> None:
    model = _model(mode)
    x = np.random.default_rng(1).standard_normal((2, 8, 3, 3)).astype(np.float32)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = ember.compile(model)(x)
    np.testing.assert_array_equal(got, want)


def _binarizer_row(source: str) -> str:
    """The OpSpec call for Binarizer in `source`, as an AST dump."""
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "OpSpec"
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "Binarizer"):  # fmt: skip
            return ast.dump(node)
    raise AssertionError("no Binarizer row")


def test_other_domain_the_doc_row_is_the_tree_one() -> None:
    """The Binarizer row the doc shows for an op of another domain is ops_ml's."""
    match = re.search(r"```python\n(OpSpec\(\s*\"Binarizer\".*?)```", DOC.read_text(), re.DOTALL)
    assert match, "the doc's Binarizer row is missing"
    assert _binarizer_row(match.group(1)) == _binarizer_row(Path(ops_ml.__file__).read_text())
    assert IMPORTABLE_OPS[("ai.onnx.ml", "Binarizer")] is BinarizerOp
    assert "Binarizer" in KERNELS
