"""Tasks: each distinct structured op once, with its fill and epilogue, keyed by its harness."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.linalg import ops as linalg
from xdsl.parser import Parser

from ember.context import make_context
from ember.targets.cpu.schedule.tasks import (
    HEAD_ATTR,
    Task,
    collect_tasks,
    harness_module,
    task_heads,
)
from ember.tuning.measure import Harness
from tests.tuning.conftest import bufferized


def test_equal_layers_are_one_task_counted_twice(tasks: list[Task]) -> None:
    contractions = [t for t in tasks if t.op_name == "linalg.matmul"]
    counts = sorted((t.extents, t.count) for t in contractions)
    assert counts == [((8, 10, 48), 1), ((8, 48, 32), 1), ((8, 48, 48), 2)]
    repeated = next(t for t in contractions if t.count == 2)
    assert {"fc1", "fc2"} <= set(repeated.names)


def test_a_contraction_holds_its_fill_and_its_epilogue(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.extents == (8, 48, 32))
    module = Parser(make_context(), task.harness).parse_module()
    names = [
        op.name
        for op in module.walk()
        if op.name.startswith("linalg.") and op.name != "linalg.yield"
    ]
    # fill, the matmul, the bias add and the relu
    assert names[:2] == ["linalg.fill", "linalg.matmul"]
    assert names.count("linalg.generic") == 2


def test_the_key_does_not_depend_on_weights_or_names(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.count == 2)
    assert "fc1" not in task.harness and "w1" not in task.harness
    assert "dense<0.000000e+00>" in task.harness
    again = collect_tasks(bufferized())
    assert [t.key for t in again] == [t.key for t in tasks]


def test_a_kernel_is_one_task_headed_by_its_op_of_most_work(tasks: list[Task]) -> None:
    classifier = next(t for t in tasks if t.extents == (8, 10, 48))
    # the last Gemm and the Softmax after it run in one kernel: one harness
    assert classifier.names == ["fc3", "probs"]
    module = Parser(make_context(), classifier.harness).parse_module()
    heads = [op for op in module.walk() if HEAD_ATTR in op.attributes]
    assert [op.name for op in heads] == ["linalg.matmul"]
    assert sum(isinstance(op, linalg.GenericOp) for op in module.walk()) >= 3  # the softmax's


def test_task_heads_skip_the_ops_of_an_epilogue() -> None:
    module = bufferized()
    heads = list(task_heads(module))
    matmuls = [op for op in module.walk() if isinstance(op, linalg.MatmulOp)]
    assert all(m in heads for m in matmuls)
    for head in heads:
        assert "schedule" not in str(harness_module(head))


def test_a_harness_compiles_and_runs_on_its_buffers(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.extents == (8, 48, 32))
    harness = Harness(task.harness, "", threads=1)
    first = harness.results()
    second = harness.results()
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    # the relu's output: no negative value
    assert (first[-1] >= 0).all() and first[-1].any()
    assert harness.schedule.startswith("#loop.schedule<")
