"""The search: which candidates of which task to measure next.

`tune` first measures each task's default schedule (the baseline every
candidate is checked and compared against), then spends its budget in
rounds. Each round picks the task where time is most likely to be won:
the largest share of the model's estimated time (its ops' count times its
best time so far), divided by the square root of one plus the rounds it
has had, so that no task is starved and none hogs the budget (as Ansor's
task scheduler weighs tasks). For that task it draws candidates: random
points of its space (`targets/cpu/schedule/space.py`) and mutations of
its fastest schedules (one knob changed), drops those that are not
schedules or were measured before, ranks the rest with the cost model
(`ember.tuning.cost_model`) and measures the best `batch - EXPLORE` of
them and `EXPLORE` drawn at random (the model learns from both). Every
measurement is stored as it comes (`ember.targets.tuning_records`), so a search
that is stopped (Ctrl-C, a kill, the time budget) resumes where it was:
what the records hold for a task is not measured again.

The search stops when every task has had `trials` schedules measured
(those the records held before included) or the
`time_budget` is spent. Then each task's result is confirmed: a schedule's
time is the median of its measurements, and while the fastest schedule or
the default has fewer than `SAMPLES` of them, both are measured again (at
most `CONFIRM_ROUNDS` times). Of many candidates that run as fast as the
default, one is always measured in a quiet moment of a busy machine and
looks faster than it is; it must be fast three times to win, or another
takes its place and is put to the same test.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.parser import Parser

from ember.context import make_context
from ember.dialects.schedule import IterationSpace, ScheduleAttr, iteration_space, parse_schedule
from ember.targets.cpu.schedule.cpu_target import CpuTarget, cpu_target
from ember.targets.cpu.schedule.default_schedule import default_for
from ember.targets.cpu.schedule.space import ScheduleSpace, point_of, schedule_space
from ember.targets.cpu.schedule.tasks import Task
from ember.targets.tuning_records import MARGIN, Identity, Record, Records
from ember.tuning.cost_model import CostModel, features
from ember.tuning.measure import Candidate, Measurement, head_op
from ember.tuning.runner import Runner

EXPLORE = 2
"""Candidates of each batch drawn at random rather than by the model."""
DRAWN = 64
"""Random points and mutations drawn per round (each)."""
PARENTS = 4
"""The fastest schedules of a task that mutations start from."""
SAMPLES = 3
"""Measurements of a task's fastest schedule and of its default before the
search ends."""
CONFIRM_ROUNDS = 8
"""The most rounds of confirmation per task."""
GRACE = 0.25
"""The share of the time budget confirmation may take after it is spent."""


@dataclass(frozen=True)
class Settings:
    """How long and how wide to search."""

    trials: int = 64
    """Measurements per task at most (its default included)."""
    time_budget: float | None = None
    """Seconds for the whole search (None: no limit)."""
    threads: int = 1
    batch: int = 8
    seed: int = 0


@dataclass
class TaskState:
    """What the search knows of one task."""

    task: Task
    space: ScheduleSpace
    iteration: IterationSpace
    measured: dict[str, float] = field(default_factory=dict)
    """Every schedule measured (this run or before): its seconds (inf: an error)."""
    samples: dict[str, list[float]] = field(default_factory=dict)
    """Every time measured of each schedule (errors none)."""
    default_seconds: float | None = None
    rounds: int = 0

    def keep(self, schedule: str, seconds: float, is_default: bool) -> None:
        """One measurement (inf: an error): a schedule's time is the median
        of its measurements."""
        if math.isfinite(seconds):
            self.samples.setdefault(schedule, []).append(seconds)
            self.measured[schedule] = statistics.median(self.samples[schedule])
        else:
            self.measured.setdefault(schedule, math.inf)
        if is_default and math.isfinite(seconds):
            self.default_seconds = self.measured[schedule]

    def spread(self, schedule: str) -> float:
        """(max - min) / median of the schedule's measurements (0 with one)."""
        times = self.samples.get(schedule, [])
        return (max(times) - min(times)) / statistics.median(times) if times else 0.0

    @property
    def best(self) -> tuple[str, float]:
        """The fastest schedule measured and its seconds."""
        if not self.measured:
            return "", math.inf
        schedule = min(self.measured, key=self.measured.__getitem__)
        return schedule, self.measured[schedule]

    @property
    def chosen(self) -> tuple[str, float]:
        """What a compile with the records takes: the best schedule where it
        is `MARGIN` faster than the default, else the default."""
        best, seconds = self.best
        default = self.default_seconds
        if default is not None and not seconds < (1 - MARGIN) * default:
            return str(self.space.default_schedule), default
        return best, seconds

    @property
    def speedup(self) -> float:
        """The default's time over the chosen one's (1 before both are known)."""
        chosen = self.chosen[1]
        if self.default_seconds is None or not math.isfinite(chosen):
            return 1.0
        return self.default_seconds / chosen

    def weight(self) -> float:
        """The task's share of the model's time, by its best time so far."""
        best = self.best[1]
        if not math.isfinite(best):
            best = self.default_seconds or 0.0
        return self.task.count * best


@dataclass(frozen=True)
class Summary:
    """The model-level estimate: the sum over tasks of count x time."""

    default_seconds: float
    tuned_seconds: float

    @property
    def speedup(self) -> float:
        return self.default_seconds / self.tuned_seconds if self.tuned_seconds else 1.0


Listener = Callable[[TaskState, Measurement, Summary], None]


def task_state(task: Task, target: CpuTarget, threads: int = 1) -> TaskState:
    """A task's space (from its harness's head op and the default schedule)."""
    op = head_op(Parser(make_context(), task.harness).parse_module())
    space = iteration_space(op)
    return TaskState(task, schedule_space(space, default_for(op, target), target,
                                          threads=threads), space)  # fmt: skip


def summary(states: Sequence[TaskState]) -> Summary:
    known = [s for s in states if s.default_seconds is not None]
    default = sum(s.task.count * (s.default_seconds or 0.0) for s in known)
    tuned = sum(s.task.count * s.chosen[1] for s in known)
    return Summary(default, tuned)


class Search:
    """One search over a model's tasks (see the module docstring)."""

    def __init__(self, tasks: Sequence[Task], records: Records, runner: Runner,
                 settings: Settings = Settings(), listener: Listener | None = None,
                 target: CpuTarget | None = None):  # fmt: skip
        self.records = records
        self.runner = runner
        self.settings = settings
        self.listener = listener
        self.target = target or cpu_target("host")
        self.rng = random.Random(settings.seed)
        self.model = CostModel(settings.seed)
        self.states = [task_state(t, self.target, settings.threads) for t in tasks]
        self.trials: dict[str, int] = {}
        """Schedules measured per task, by this run and the records before it."""
        self._start = time.monotonic()

    def run(self) -> list[TaskState]:
        for state in self.states:
            self._resume(state)
        for state in self.states:
            if state.default_seconds is None and not self._out_of_time():
                self._measure(state, [""])
        self.model.update()
        while not self._out_of_time():
            state = self._next_task()
            if state is None:
                break
            state.rounds += 1
            candidates = self._candidates(state)
            if not candidates:
                self.trials[state.task.key] = self.settings.trials  # the space is exhausted
                continue
            self._measure(state, candidates)
            self.model.update()
        for state in self.states:
            if state.default_seconds is not None:
                self._confirm(state)
        return self.states

    def _confirm(self, state: TaskState) -> None:
        """Measures the fastest schedule and the default again until both
        have `SAMPLES` measurements (see the module docstring)."""
        default = str(state.space.default_schedule)
        for _ in range(CONFIRM_ROUNDS):
            best, seconds = state.best
            if not math.isfinite(seconds) or self._out_of_time(grace=True):
                return
            wanted = [s for s in dict.fromkeys((default, best))
                      if len(state.samples.get(s, ())) < SAMPLES]  # fmt: skip
            if not wanted:
                return
            self._measure(state, ["" if s == default else s for s in wanted])

    def _out_of_time(self, grace: bool = False) -> bool:
        """Whether the time budget is spent (with `grace`, the confirmation's
        extra `GRACE` of it too)."""
        budget = self.settings.time_budget
        if budget is None:
            return False
        return time.monotonic() - self._start >= budget * (1 + GRACE if grace else 1)

    def _resume(self, state: TaskState) -> None:
        """What the records hold of the task: measured, not measured again."""
        for record in self.records.of_task(state.task.key):
            if record.threads != self.settings.threads:
                continue
            seconds = record.seconds if not record.error and record.seconds else math.inf
            state.keep(record.schedule, seconds, record.is_default)
        self.trials[state.task.key] = len(state.measured)
        if state.default_seconds is not None:
            for schedule, seconds in state.measured.items():
                if math.isfinite(seconds):
                    self._learn(state, schedule, seconds)

    def _next_task(self) -> TaskState | None:
        left = [s for s in self.states if s.default_seconds is not None
                and self.trials.get(s.task.key, 0) < self.settings.trials]  # fmt: skip
        if not left:
            return None
        return max(left, key=lambda s: s.weight() / math.sqrt(1 + s.rounds))

    def _candidates(self, state: TaskState) -> list[str]:
        """The schedules to measure next for `state`'s task (see the module
        docstring), as text."""
        space = state.space
        points = [space.random_point(self.rng) for _ in range(DRAWN)]
        finite = sorted((s for s, t in state.measured.items() if math.isfinite(t)),
                        key=state.measured.__getitem__)  # fmt: skip
        parents = [point_of(parse_schedule(s), state.iteration) for s in finite[:PARENTS]]
        parents = parents or [space.default]
        points += [space.mutate(self.rng.choice(parents), self.rng) for _ in range(DRAWN)]
        fresh: dict[str, ScheduleAttr] = {}
        for point in points:
            schedule = space.schedule(point)
            if schedule is None:
                continue
            text = str(schedule)
            if text not in state.measured and text not in fresh:
                fresh[text] = schedule
        texts = list(fresh)
        left = self.settings.trials - self.trials.get(state.task.key, 0)
        wanted = min(self.settings.batch, left)
        rows = [features(state.iteration, fresh[t], self.target) for t in texts]
        ranked = [texts[i] for i in self.model.rank(rows, self.rng)]
        explore = min(EXPLORE, wanted // 2) if self.model.fitted else 0
        chosen = ranked[: wanted - explore]
        rest = ranked[wanted - explore :]
        chosen += self.rng.sample(rest, min(explore, len(rest)))
        return chosen

    def _measure(self, state: TaskState, schedules: Sequence[str]) -> None:
        task = state.task
        candidates = [
            Candidate(task.key, task.harness, s, self.settings.threads) for s in schedules
        ]
        for measurement in self.runner.run(candidates):
            self._store(state, measurement)

    def _store(self, state: TaskState, measurement: Measurement) -> None:
        task = state.task
        is_default = not measurement.candidate.schedule
        seconds = measurement.seconds if measurement.ok else math.inf
        record = Record(task.key, measurement.schedule, is_default,
                        seconds if measurement.ok else None,
                        measurement.spread if measurement.ok else None, measurement.error,
                        self.settings.threads, task.op_name, task.extents,
                        tuple(task.names))  # fmt: skip
        who = Identity(measurement.version, measurement.cpu) if measurement.cpu else None
        self.records.add(record, who)
        if measurement.schedule not in state.measured:
            self.trials[task.key] = self.trials.get(task.key, 0) + 1
        state.keep(measurement.schedule, seconds, is_default)
        if measurement.ok and state.default_seconds is not None:
            self._learn(state, measurement.schedule, seconds)
        if self.listener is not None:
            self.listener(state, measurement, summary(self.states))

    def _learn(self, state: TaskState, schedule: str, seconds: float) -> None:
        assert state.default_seconds is not None
        row = features(state.iteration, parse_schedule(schedule), self.target)
        self.model.add(row, seconds, state.default_seconds)


def tune(tasks: Sequence[Task], records: Records, runner: Runner,
         settings: Settings = Settings(), listener: Listener | None = None) -> list[TaskState]:  # fmt: skip
    """Searches schedules for `tasks` (see the module docstring)."""
    return Search(tasks, records, runner, settings, listener).run()


__all__ = ["Search", "Settings", "Summary", "TaskState", "summary", "tune"]
