"""The CPU's space of schedules: the default is a point, every point built is valid."""

from __future__ import annotations

import random

from xdsl.parser import Parser

from ember.context import make_context
from ember.dialects.schedule import iteration_space, verify_schedule
from ember.targets.cpu.schedule.cpu_target import cpu_target
from ember.targets.cpu.schedule.default_schedule import default_for
from ember.targets.cpu.schedule.space import ScheduleSpace, schedule_space
from ember.targets.cpu.schedule.tasks import Task
from ember.tuning.measure import head_op


def spaces(tasks: list[Task], cpu: str) -> list[ScheduleSpace]:
    target = cpu_target(cpu)
    found = []
    for task in tasks:
        op = head_op(Parser(make_context(), task.harness).parse_module())
        found.append(schedule_space(iteration_space(op), default_for(op, target), target))
    return found


def test_the_default_is_a_point_of_the_space(tasks: list[Task]) -> None:
    for cpu in ("znver4", "haswell", "generic"):
        for space in spaces(tasks, cpu):
            assert space.schedule(space.default) == space.default_schedule


def test_every_point_built_fits_its_op(tasks: list[Task]) -> None:
    rng = random.Random(0)
    for space in spaces(tasks, "znver4"):
        built = 0
        for _ in range(100):
            schedule = space.schedule(space.random_point(rng))
            if schedule is not None:
                verify_schedule(schedule, space.space, "test")
                built += 1
        assert built > 0


def test_a_contraction_may_change_its_micro_kernel(tasks: list[Task]) -> None:
    wide, narrow = spaces(tasks, "znver4")[0], spaces(tasks, "haswell")[0]
    assert len(wide.knobs["micro"]) > 3
    # AVX2's 16 registers hold fewer accumulators than AVX-512's 32
    assert max(m[2] * m[3] for m in narrow.knobs["micro"] if m) <= 12
    rng = random.Random(1)
    mutated = wide.mutate(wide.default, rng)
    assert sum(mutated.knob(k) != wide.default.knob(k) for k in wide.knobs) == 1


def test_on_several_threads_the_parallel_loops_are_a_knob(tasks: list[Task]) -> None:
    target = cpu_target("znver4")
    task = next(t for t in tasks if t.op_name == "linalg.matmul")
    op = head_op(Parser(make_context(), task.harness).parse_module())
    default = default_for(op, target)
    one = schedule_space(iteration_space(op), default, target, threads=1)
    two = schedule_space(iteration_space(op), default, target, threads=2)
    assert "parallel" not in one.knobs
    assert tuple(default.parallel_dims) in two.knobs["parallel"]
    outermost = next(p for p in two.knobs["parallel"] if len(p) == 1)  # type: ignore[arg-type]
    point = two.default.with_knob("parallel", outermost)
    schedule = two.schedule(point)
    assert schedule is not None and schedule.parallel_dims == list(outermost)  # type: ignore[arg-type]
