"""A small model whose tasks compile in a fraction of a second each."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp

from ember.frontends.onnx import import_onnx
from ember.options import Options
from ember.targets.cpu.schedule.tasks import Task, lower_to_tasks, model_tasks
from tests.support.models import mlp

SIZES = (32, 48, 48, 48, 10)
"""Two hidden layers of one shape (one task of two ops), then a classifier."""


def small_model() -> onnx.ModelProto:
    return mlp(batch=8, sizes=SIZES)


@pytest.fixture
def model_path(tmp_path: Path) -> Path:
    path = tmp_path / "mlp.onnx"
    onnx.save(small_model(), path)
    return path


@pytest.fixture(scope="session")
def tasks() -> list[Task]:
    return model_tasks(import_onnx(small_model()), Options(threads=1))


def bufferized() -> ModuleOp:
    """The small model lowered to where schedules are attached."""
    return lower_to_tasks(import_onnx(small_model()), Options(threads=1))


@pytest.fixture(scope="session")
def int8_cnn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small CNN quantised by onnxruntime (per-tensor scales): four int8
    convolutions on the NPU, a max pool between them."""
    from tests.compiler.test_npu import _cnn
    from tests.support.quantized import quantized

    return quantized(_cnn(batch=1), tmp_path_factory.mktemp("int8"), per_channel=False)
