"""The NPU's search: each task's schedules measured in the cycle model and
recorded.

The cycle model is deterministic, so a schedule is measured once
(`ember.targets.npu.measure`) and the search is an order of trials, not a
statistical one. Tasks are taken heaviest first (their count times their
multiply-accumulates). For each, the default schedule is measured first
(the baseline, and always checked), then, where the task's space
(`ember.targets.npu.space`) has no more points than `trials`, every point;
else, best by estimate first: half the trials on the blocks at the
default's two buffers and two regions in `by_estimate`'s order, then
every buffers and regions of the `VARIED` fastest blocks measured so
far, then the rest of the space in `by_estimate`'s order, until the task
has had `trials` schedules measured (those the records held before
included: a search that was stopped resumes where it was) or the
`time_budget` is spent. Every measurement goes into the records as it is
made, seconds being cycles at the nominal clock (`CLOCK_HZ`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ember.dialects.npu.machine import NpuParams
from ember.lowering.graph_to_npu.matmul import MatmulSchedule, default_schedule
from ember.targets.npu.measure import (
    CLOCK_HZ,
    NpuMeasurement,
    measure,
    npu_identity,
    schedule_text,
)
from ember.targets.npu.space import by_estimate, schedule_space
from ember.targets.npu.tasks import NpuTask
from ember.targets.tuning_records import Record, Records

VARIED = 3
"""The fastest blocks whose every buffers and regions are tried."""


@dataclass
class NpuTaskState:
    """What the search knows of one task: cycles per schedule text (None:
    an error)."""

    task: NpuTask
    dim: int
    measured: dict[str, int | None] = field(default_factory=dict)
    default: str = ""

    @property
    def default_cycles(self) -> int | None:
        return self.measured.get(self.default)

    @property
    def best(self) -> tuple[str, int | None]:
        """The fastest schedule measured and its cycles."""
        finite = {s: c for s, c in self.measured.items() if c is not None}
        if not finite:
            return "", None
        schedule = min(finite, key=finite.__getitem__)
        return schedule, finite[schedule]

    def utilization(self, cycles: int | None) -> float:
        """The matrix unit's share of its peak at `cycles`."""
        return self.task.macs / (cycles * self.dim * self.dim) if cycles else 0.0


Listener = Callable[[NpuTaskState, NpuMeasurement], None]


def records_cycles(record: Record) -> int | None:
    """A record's cycles (None: an error)."""
    if record.error or record.seconds is None:
        return None
    return round(record.seconds * CLOCK_HZ)


class NpuSearch:
    """One search over a model's NPU tasks (see the module docstring)."""

    def __init__(self, tasks: Sequence[NpuTask], records: Records, trials: int = 32,
                 params: NpuParams | None = None, time_budget: float | None = None,
                 listener: Listener | None = None):  # fmt: skip
        self.params = params or NpuParams()
        self.who = npu_identity(self.params)
        self.records = records
        self.trials = trials
        self.time_budget = time_budget
        self.listener = listener
        self.tasks = sorted(tasks, key=lambda t: -t.count * t.macs)
        self._start = time.monotonic()

    def run(self) -> list[NpuTaskState]:
        states = []
        for task in self.tasks:
            state = self.resume(task)
            states.append(state)
            if state.default not in state.measured and not self._out_of_time():
                self._measure(state, default_schedule(task.product, self.params))
            for schedule in self._order(state):
                if len(state.measured) >= self.trials or self._out_of_time():
                    break
                self._measure(state, schedule)
        return states

    def _out_of_time(self) -> bool:
        budget = self.time_budget
        return budget is not None and time.monotonic() - self._start >= budget

    def resume(self, task: NpuTask) -> NpuTaskState:
        """What the records hold of `task`: measured, not measured again."""
        state = NpuTaskState(task, self.params.dim)
        state.default = schedule_text(default_schedule(task.product, self.params))
        for record in self.records.of_task(task.key, self.who):
            state.measured[record.schedule] = records_cycles(record)
        return state

    def _order(self, state: NpuTaskState) -> Iterator[MatmulSchedule]:
        """The schedules to measure, in order (see the module docstring)."""
        product = state.task.product
        space = by_estimate(product, schedule_space(product, self.params), self.params)
        if len(space) <= self.trials:
            yield from space
            return
        blocks = [s for s in space if (s.buffers, s.regions) == (2, 2)]
        yield from blocks[: self.trials // 2]
        by_text = {schedule_text(s): s for s in space}
        fastest = sorted((c, s) for s, c in state.measured.items() if c is not None)
        chosen = {(by_text[s].block_m, by_text[s].block_n) for _, s in fastest[:VARIED]
                  if s in by_text}  # fmt: skip
        yield from [s for s in space if (s.block_m, s.block_n) in chosen]
        yield from space

    def _measure(self, state: NpuTaskState, schedule: MatmulSchedule) -> None:
        text = schedule_text(schedule)
        if text in state.measured:
            return
        _, best = state.best
        found = measure(state.task, schedule, self.params, best)
        state.measured[text] = found.cycles if found.ok else None
        task = state.task
        record = Record(task.key, text, text == state.default,
                        found.seconds if found.ok else None, 0.0 if found.ok else None,
                        found.error, 1, task.op_name, task.extents, tuple(task.names))  # fmt: skip
        self.records.add(record, self.who)
        if self.listener is not None:
            self.listener(state, found)


@dataclass(frozen=True)
class NpuSummary:
    """The model's products: cycles (count x cycles per task) and the mean
    utilisation over its products, with the default schedules and tuned."""

    default_cycles: int
    tuned_cycles: int
    default_utilization: float
    tuned_utilization: float


def npu_summary(states: Sequence[NpuTaskState]) -> NpuSummary:
    known = [s for s in states if s.default_cycles is not None]
    count = sum(s.task.count for s in known) or 1
    default = sum(s.task.count * (s.default_cycles or 0) for s in known)
    tuned = [min(s.best[1] or math.inf, s.default_cycles or math.inf) for s in known]
    return NpuSummary(
        default, int(sum(s.task.count * c for s, c in zip(known, tuned, strict=True))),
        sum(s.task.count * s.utilization(s.default_cycles) for s in known) / count,
        sum(s.task.count * s.utilization(int(c)) for s, c in zip(known, tuned, strict=True))
        / count,
    )  # fmt: skip


def tune_npu(tasks: Sequence[NpuTask], records: Records, trials: int = 32,
             params: NpuParams | None = None, time_budget: float | None = None,
             listener: Listener | None = None) -> list[NpuTaskState]:  # fmt: skip
    """Searches schedules for the NPU `tasks` (see the module docstring)."""
    return NpuSearch(tasks, records, trials, params, time_budget, listener).run()


__all__ = ["Listener", "NpuSearch", "NpuSummary", "NpuTaskState", "npu_summary", "records_cycles",
           "tune_npu"]  # fmt: skip
