"""The model's node names, carried as locations from import to the
compiled code (`ember.dialects.source_names`): each level keeps them, and
the reports name kernels by them."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.parser import Parser

import ember
from ember.context import make_context
from ember.dialects.graph import ConstantOp, FusedOp
from ember.dialects.schedule import describe
from ember.dialects.source_names import SOURCE_NAMES_ATTR, source_names
from ember.frontends.onnx import import_onnx
from ember.options import Options
from ember.targets.cpu.pipeline import cpu_passes


def conv_model() -> onnx.ModelProto:
    """conv1 -> relu1 -> pool1 -> fc (Gemm) with an unnamed Relu after it."""
    weights = [
        helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.1] * 108),
        helper.make_tensor("fw", TensorProto.FLOAT, [4 * 3 * 3, 5], [0.01] * 180),
        helper.make_tensor("shape", TensorProto.INT64, [2], [1, 36]),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv1/7x7_s2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="conv1/relu"),
        helper.make_node(
            "MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]
        ),  # fmt: skip
        helper.make_node("Reshape", ["p", "shape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fw"], ["g"], name="fc"),
        helper.make_node("Relu", ["g"], ["y"]),  # no name: named after its output
    ]
    graph = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], weights,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _named_ops(module: ModuleOp) -> list[tuple[str, list[str]]]:
    return [(op.name, source_names(op)) for op in module.walk()
            if op.name.startswith("graph.") and not isinstance(op, ConstantOp)]  # fmt: skip


def test_import_names_each_op_after_its_node_or_its_output() -> None:
    named = _named_ops(import_onnx(conv_model()))
    assert named == [
        ("graph.conv", ["conv1/7x7_s2"]), ("graph.relu", ["conv1/relu"]),
        ("graph.max_pool", ["pool1"]), ("graph.reshape", ["flatten"]),
        ("graph.gemm", ["fc"]), ("graph.relu", ["y"]),
    ]  # fmt: skip


def test_torch_exports_name_ops_by_module_path() -> None:
    model = conv_model()
    scopes = onnx.StringStringEntryProto(
        key="pkg.torch.onnx.name_scopes", value="['', 'features.0', 'conv2d']"
    )
    model.graph.node[0].metadata_props.append(scopes)
    assert _named_ops(import_onnx(model))[0] == ("graph.conv", ["features.0"])


def _lowered(options: Options, until: str) -> ModuleOp:
    module = import_onnx(conv_model())
    context = Context()
    for _, compiler_pass in cpu_passes(options):
        compiler_pass.apply(context, module)
        if compiler_pass.name == until:
            break
    return module


def test_fusion_groups_carry_all_their_members_names() -> None:
    module = _lowered(Options(opt_level=2), "graph-fuse")
    groups = [source_names(op) for op in module.walk() if isinstance(op, FusedOp)]
    assert ["conv1/7x7_s2", "conv1/relu"] in groups
    assert ["fc", "y"] in groups


def test_every_kernel_call_and_function_is_named() -> None:
    module = _lowered(Options(opt_level=2), "loop-mark-noalias")
    entry = next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == "main")
    calls = [op for op in entry.walk() if isinstance(op, CallOp)]
    assert calls and all(source_names(call) for call in calls)
    named = set()
    for function in module.ops:
        if isinstance(function, FuncOp) and function is not entry:
            sites = function.attributes[SOURCE_NAMES_ATTR]
            named |= {name.data for site in sites.data for name in site.data}  # type: ignore[attr-defined]
    assert {"conv1/7x7_s2", "conv1/relu", "pool1", "fc", "y"} <= named


def test_llvm_symbols_end_in_the_first_node_name() -> None:
    module = _lowered(Options(opt_level=2), "convert-loop-to-llvm")
    symbols = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)}
    assert any(s.startswith("main_kernel") and s.endswith("_conv1_7x7_s2") for s in symbols)
    assert any(s.startswith("main_kernel") and s.endswith("_fc") for s in symbols)


@pytest.mark.parametrize("opt_level", [0, 2])
def test_profile_rows_are_titled_by_node_names(opt_level: int) -> None:
    compiled = ember.compile(conv_model(), profile=True, opt_level=opt_level, threads=1)
    titles = [cost.title for cost in compiled.report.kernel_costs]
    assert all("(kernel " in title for title in titles), titles
    assert any(title.startswith("conv1/7x7_s2") for title in titles), titles


def test_diagnostics_name_the_node() -> None:
    text = """
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %m = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32> loc(fused["fc1", "bn1"])
      func.return %m : tensor<2x4xf32>
    }
    """
    module = Parser(make_context(), text).parse_module()
    matmul = next(op for op in module.walk() if op.name == "linalg.matmul")
    assert describe(matmul) == "linalg.matmul %m (nodes fc1 + bn1) in @main"
