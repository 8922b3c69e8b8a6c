"""Measuring one schedule of one NPU task: the product alone, timed by the
cycle model.

`measure` builds the smallest program that runs just the task's product
with the schedule, as the segment lowering emits it (`emit_products` on a
builder of its own, the product's own DRAM addresses and its segment's
column of ones), and runs the cycle model on it
(`ember.targets.npu.simulator.cycles`): its cycles and the matrix unit's
utilisation over them. The model is deterministic, so one run is the
measurement (no repeats, no spread). It takes the instructions in program
order, which a single product's tokens always allow (each pop follows its
push); the full check of the program (`check_program`: limits, tokens,
memory hazards) runs where the candidate is at least as fast as
`check_at` cycles, the fastest so far, so that every schedule the records
can give as a task's fastest has passed it. A schedule the accumulator or
the scratchpad cannot hold, or one whose program fails the check, is an
error, never a time.

Records (`ember.targets.tuning_records`) hold seconds: cycles at a
nominal clock of `CLOCK_HZ` (1 GHz: seconds x 1e9 are cycles), and name
the machine in their `cpu` column as `npu/` and a hash of its
`NpuParams`, so a record counts only for the NPU whose sizes made it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass

from ember.dialects.npu.machine import F32, NpuParams, NpuProgramError, check_program
from ember.dialects.npu.schedule import NpuScheduleAttr
from ember.lowering.graph_to_npu.matmul import MatmulSchedule, ProgramBuilder, emit_products
from ember.targets.npu.simulator.cycles import cycle_model
from ember.targets.npu.tasks import NpuTask
from ember.targets.tuning_records import Identity, identity

CLOCK_HZ = 1e9
"""The nominal clock records convert cycles at (seconds = cycles / CLOCK_HZ)."""


def npu_identity(params: NpuParams) -> Identity:
    """Who measures NPU records: this Ember build, and `npu/` with a hash of
    the machine's sizes."""
    sizes = json.dumps(dataclasses.asdict(params), sort_keys=True)
    return Identity(identity().version, f"npu/{hashlib.sha256(sizes.encode()).hexdigest()[:8]}")


def schedule_text(schedule: MatmulSchedule) -> str:
    """A schedule as the records and the IR write it (`#npu.schedule<...>`)."""
    return str(NpuScheduleAttr(schedule.block_m, schedule.block_n, schedule.buffers,
                               schedule.regions))  # fmt: skip


@dataclass(frozen=True)
class NpuMeasurement:
    """One schedule of one task in the cycle model."""

    schedule: MatmulSchedule
    cycles: int | None = None
    utilization: float = 0.0
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and self.cycles is not None

    @property
    def seconds(self) -> float:
        """The cycles at `CLOCK_HZ` (infinite for an error)."""
        return self.cycles / CLOCK_HZ if self.ok else math.inf  # type: ignore[operator]


def measure(task: NpuTask, schedule: MatmulSchedule, params: NpuParams,
            check_at: int | None = None) -> NpuMeasurement:  # fmt: skip
    """`schedule` of `task` in the cycle model (see the module docstring);
    `check_at`: check the program where its cycles are at most this (None:
    always)."""
    builder = ProgramBuilder(params, {F32.code: task.ones})
    try:
        emit_products(builder, [task.product], [schedule])
        program = builder.finish()
        timing = cycle_model(program, params, range(len(program) - 1))
        if check_at is None or timing.cycles <= check_at:
            check_program(program, params)
    except NpuProgramError as error:
        return NpuMeasurement(schedule, error=str(error))
    return NpuMeasurement(schedule, timing.cycles, timing.utilization)


__all__ = ["CLOCK_HZ", "NpuMeasurement", "measure", "npu_identity", "schedule_text"]
