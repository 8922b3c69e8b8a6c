"""NPU tasks: each distinct product of a model's segments, keyed by what it
computes and how its operands lie; and the space of its schedules."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import numpy_helper

import ember
from ember.dialects.npu.machine import NpuParams
from ember.lowering.graph_to_npu.matmul import default_schedule, fits, scratchpad_plan
from ember.targets.npu.space import by_estimate, schedule_space
from ember.targets.npu.tasks import NpuTask, model_tasks
from tests.compiler.test_npu import _cnn
from tests.support.quantized import quantized


def _tasks(model: onnx.ModelProto | Path) -> list[NpuTask]:
    return model_tasks(ember.import_onnx(model if isinstance(model, onnx.ModelProto)
                                         else str(model)))  # fmt: skip


def test_every_int8_convolution_is_a_task_named_by_its_node(int8_cnn: Path) -> None:
    tasks = _tasks(int8_cnn)
    assert [t.op_name for t in tasks] == ["graph.qlinear_conv"] * 4
    assert [t.extents for t in tasks] == [(12, 27, 440), (16, 108, 440), (20, 16, 440),
                                          (8, 500, 42)]  # fmt: skip
    assert tasks[0].names == ["r1_QuantizeLinear"]
    assert "relu=0 bias=per-row requantised=per-tensor" in tasks[0].text
    assert "address" not in tasks[0].text


def test_keys_depend_on_what_is_computed_not_on_weights_or_names(int8_cnn: Path) -> None:
    """The same model with other weights and node names has the same keys;
    per-channel scales or another image size make other tasks."""
    keys = [t.key for t in _tasks(int8_cnn)]
    assert keys == [t.key for t in _tasks(int8_cnn)]
    model = onnx.load(int8_cnn)
    for number, node in enumerate(model.graph.node):
        node.name = f"renamed{number}"
    for initializer in model.graph.initializer:
        if initializer.data_type == onnx.TensorProto.INT8:
            values = numpy_helper.to_array(initializer)
            initializer.CopyFrom(numpy_helper.from_array(-values, initializer.name))
    assert [t.key for t in _tasks(model)] == keys


def test_per_channel_scales_and_other_sizes_are_other_tasks(tmp_path: Path,
                                                            int8_cnn: Path) -> None:  # fmt: skip
    keys = {t.key for t in _tasks(int8_cnn)}
    per_channel = quantized(_cnn(batch=1), tmp_path, per_channel=True)
    assert keys.isdisjoint(t.key for t in _tasks(per_channel))
    model = _cnn(batch=1)
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_value = 24
    assert keys.isdisjoint(t.key for t in _tasks(model))


def test_a_batch_counts_each_image() -> None:
    (first, *_) = _tasks(_cnn(batch=2))
    assert first.count == 2 and first.product.elem.name == "f32"


def test_the_space_holds_the_default_and_only_schedules_that_fit(int8_cnn: Path) -> None:
    params = NpuParams()
    for task in _tasks(int8_cnn):
        space = schedule_space(task.product, params)
        assert default_schedule(task.product, params) in space
        assert len(set(space)) == len(space) > 4
        for schedule in space:
            assert fits(schedule, params, task.product)
            scratchpad_plan(task.product, schedule, params)  # raises where it does not fit
        assert sorted(by_estimate(task.product, space, params), key=str) == sorted(space, key=str)


@pytest.mark.parametrize("elem", ["int8", "f32"])
def test_the_space_leaves_out_blocks_the_accumulator_cannot_hold(elem: str,
                                                                 int8_cnn: Path) -> None:  # fmt: skip
    (task, *_) = _tasks(int8_cnn if elem == "int8" else _cnn(batch=1))
    params = NpuParams(accumulator_bytes=8 * 1024)  # 128 rows: 7 tiles of 16 and the relay row
    space = schedule_space(task.product, params)
    assert space and all(fits(s, params, task.product) for s in space)
    assert max(s.block_m * s.block_n * s.regions for s in space) <= 7
