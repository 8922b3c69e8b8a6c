"""The CPU pipeline (targets/cpu/pipeline.py): its passes by stage, and the
verification of the module before the first pass and after the graph,
tensor and loop stages."""

from __future__ import annotations

import gc
import re
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, ModuleOp, i64
from xdsl.dialects.tensor import ExtractSliceOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass

import ember
from ember.compiler import compile_module
from ember.context import make_context
from ember.errors import CompileError, EmberError
from ember.options import DEFAULT_OPTIONS, Options
from ember.targets.cpu import pipeline, streamed_codegen
from ember.targets.cpu.pipeline import cpu_passes


def _slice_model() -> bytes:
    """y = x[1:3] for x: float32[4, 8], a `tensor.extract_slice` at the tensor level."""
    constants = {"starts": [1], "ends": [3], "axes": [0]}
    initializers = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in constants.items()]
    graph = helper.make_graph(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"])], "slice",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


class _MoveSlicesOutOfBounds(ModulePass):
    """A broken pass: every extract_slice gets a dynamic offset marker without
    the offset value that must come with it."""

    name: ClassVar[str] = "test-move-slices-out-of-bounds"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if isinstance(inner, ExtractSliceOp):
                offsets = [DYNAMIC_INDEX, *inner.static_offsets.get_values()[1:]]
                inner.static_offsets = DenseArrayBase.from_list(i64, offsets)


def _with_broken_pass(options: Options = DEFAULT_OPTIONS) -> list[tuple[str, ModulePass]]:
    passes = cpu_passes(options)
    last_tensor = max(i for i, (stage, _) in enumerate(passes) if stage == "tensor")
    return [
        *passes[: last_tensor + 1],
        ("tensor", _MoveSlicesOutOfBounds()),
        *passes[last_tensor + 1 :],
    ]


def test_the_passes_come_in_stage_order_with_loop_fuse_only_at_level_2() -> None:
    for level in (0, 1, 2):
        stages = [stage for stage, _ in cpu_passes(Options(opt_level=level))]
        assert stages == sorted(stages, key=["graph", "tensor", "loop", "llvm"].index)
        names = [p.name for _, p in cpu_passes(Options(opt_level=level))]
        assert ("loop-fuse" in names) == (level == 2)
        assert names[-1] == "convert-loop-to-llvm"
    names = [p.name for _, p in cpu_passes(Options(disabled=("loop-fuse", "graph-fuse")))]
    assert "loop-fuse" not in names and "graph-fuse" not in names
    with pytest.raises(EmberError, match="cannot disable convert-loop-to-llvm: optional passes"):
        cpu_passes(Options(disabled=("convert-loop-to-llvm",)))


def test_the_slice_model_compiles_and_runs() -> None:
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    (y,) = ember.compile(_slice_model())(x)
    np.testing.assert_array_equal(y, x[1:3])


def test_an_op_a_pass_breaks_is_a_compile_error_naming_the_op_its_node_and_the_stage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pipeline, "cpu_passes", _with_broken_pass)
    with pytest.raises(CompileError) as caught:
        compile_module(ember.import_onnx(_slice_model()))
    message = str(caught.value)
    assert "\n" not in message
    assert re.fullmatch(
        r"invalid IR after the tensor stage: tensor\.extract_slice \(node y\): The number of dynamic "
        r"positions passed as values \(0\) does not match the number of dynamic position "
        r"markers \(1\) in the offset arguments\.", message
    ), message  # fmt: skip


def test_invalid_hand_written_ir_is_reported_before_the_first_pass() -> None:
    text = """
    func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x4xf32> {
      %z = graph.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
      func.return %z : tensor<2x4xf32>
    }
    """
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(CompileError, match=r"^invalid IR before the graph stage: graph\.add: "):
        compile_module(module)


def test_the_cli_prints_a_verifier_failure_as_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from ember.cli import main

    path = tmp_path / "slice.onnx"
    path.write_bytes(_slice_model())
    monkeypatch.setattr(pipeline, "cpu_passes", _with_broken_pass)
    assert main(["run", str(path), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "invalid IR after the tensor stage: tensor.extract_slice (node y): " in err


def test_the_collector_thresholds_are_raised_while_lowering_and_restored_after_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = []

    class _Probe(ModulePass):
        name: ClassVar[str] = "test-probe"

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            seen.append(gc.get_threshold())

    def probed(options: Options = DEFAULT_OPTIONS) -> list[tuple[str, ModulePass]]:
        return [("graph", _Probe()), *_with_broken_pass(options)]

    monkeypatch.setattr(pipeline, "cpu_passes", probed)
    before = gc.get_threshold()
    with pytest.raises(CompileError):
        compile_module(ember.import_onnx(_slice_model()))
    assert seen and all(threshold == pipeline.GC_THRESHOLDS for threshold in seen)  # each part
    assert gc.get_threshold() == before


def test_the_collector_thresholds_are_raised_while_the_llvmlite_module_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = []
    to_llvmlite = streamed_codegen.to_llvmlite

    def probed(module: ModuleOp) -> object:
        seen.append(gc.get_threshold())
        return to_llvmlite(module)

    monkeypatch.setattr(streamed_codegen, "to_llvmlite", probed)
    before = gc.get_threshold()
    compile_module(ember.import_onnx(_slice_model()))
    assert seen and all(threshold == pipeline.GC_THRESHOLDS for threshold in seen)  # each part
    assert gc.get_threshold() == before
