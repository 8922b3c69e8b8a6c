"""`loop-mark-noalias` in the CPU pipeline: the ops whose loops it lets LLVM
vectorise (depthwise convolution, channel shuffle, pooling, concatenation)
still compute what onnxruntime computes, and kernels of a model get marked
where their buffers lie apart."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import CallOp
from xdsl.ir import BlockArgument, SSAValue

import ember
from ember.dialects.loop import KERNEL_ATTR
from ember.reference import entry_function
from ember.targets.cpu.mark_noalias import NOALIAS
from ember.targets.cpu.pipeline import cpu_passes, make_entry
from tests.support.models import light_model_path, random_inputs, run_onnxruntime

C, H = 24, 10


def _model(nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto]) -> onnx.ModelProto:
    shape = [1, C, H, H]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _weights(name: str, shape: tuple[int, ...], seed: int) -> onnx.TensorProto:
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return numpy_helper.from_array(values, name)


def _ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def depthwise_shuffle_pool() -> onnx.ModelProto:
    """Depthwise 3x3, ReLU, channel shuffle (Reshape-Transpose-Reshape),
    max and average pooling, a slice concatenated four times."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], group=C, kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Reshape", ["r", "s5"], ["r5"]),
        helper.make_node("Transpose", ["r5"], ["t5"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["t5", "s4"], ["sh"]),
        helper.make_node("MaxPool", ["sh"], ["mp"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("AveragePool", ["mp"], ["ap"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Slice", ["ap", "start", "end", "axis"], ["sl"]),
        helper.make_node("Concat", ["sl", "sl", "sl", "sl"], ["cc"], axis=1),
        helper.make_node("Add", ["cc", "x"], ["y"]),
    ]
    inits = [_weights("w", (C, 1, 3, 3), 1), _ints("s5", [1, 4, C // 4, H, H]),
             _ints("s4", [1, C, H, H]), _ints("start", [0]), _ints("end", [C // 4]),
             _ints("axis", [1])]  # fmt: skip
    return _model(nodes, inits)


@pytest.mark.parametrize("opt_level", [1, 2])
def test_vectorised_ops_match_onnxruntime(opt_level: int) -> None:
    model = depthwise_shuffle_pool()
    inputs = random_inputs(model, seed=3)
    (want,) = run_onnxruntime(model, inputs)
    (got,) = ember.compile(model, opt_level=opt_level).run(inputs)
    scale = float(np.max(np.abs(want)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale)


def _byte_range(value: SSAValue) -> tuple[SSAValue, int, float]:
    """(root argument, first byte, end) a call operand may reach: the bytes
    of the arena or weights view it is (a view of), else its whole root."""
    while not isinstance(value, BlockArgument):
        owner = value.owner
        if isinstance(owner, memref.ViewOp):
            shift = owner.byte_shift.owner
            assert isinstance(shift, arith.ConstantOp) and isinstance(owner.result.type, MemRefType)
            start = shift.value.value.data
            size = int(np.prod(owner.result.type.get_shape())) * 4
            return owner.source, start, start + size
        value = owner.operands[0]
    return value, 0, np.inf


@pytest.mark.parametrize("name", ["ops", "shufflenet"])
def test_marked_kernel_arguments_lie_apart_at_every_call(name: str) -> None:
    """After the loop stage, each marked argument's bytes overlap no other
    buffer of the call (checked on the planned byte ranges), and the
    model's kernels have some marked. At -O2 ShuffleNet has a call whose
    buffers share arena bytes (placed there for different nests of one
    kernel), which must stay unmarked."""
    model = depthwise_shuffle_pool() if name == "ops" else onnx.load(light_model_path(name))
    module = ember.import_onnx(model)
    make_entry(entry_function(module), "main")
    context = Context()
    for _, compiler_pass in cpu_passes():
        if compiler_pass.name == "convert-loop-to-llvm":
            break
        compiler_pass.apply(context, module)
    kernels = {op.sym_name.data: op for op in module.ops if KERNEL_ATTR in op.attributes}
    marked = 0
    for call in module.walk():
        if not isinstance(call, CallOp):
            continue
        kernel = kernels[call.callee.string_value()]
        ranges = {i: _byte_range(v) for i, v in enumerate(call.arguments)
                  if isinstance(v.type, MemRefType)}  # fmt: skip
        for index, attrs in enumerate(kernel.arg_attrs or ()):
            if NOALIAS not in attrs.data:
                continue
            marked += 1
            root, start, end = _byte_range(call.arguments[index])
            for other_index, other in ranges.items():
                if other_index == index:
                    continue
                assert other[0] is not root or other[2] <= start or end <= other[1]
    assert marked > 0
