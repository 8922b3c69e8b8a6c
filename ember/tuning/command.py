"""`ember tune`: the model's tasks listed, or their schedules searched and recorded.

`ember tune MODEL --list` prints the tasks (`ember.targets.cpu.schedule.tasks`) with
their op, extents, how many of the model's ops run each, their work and the
model's nodes, and, where the records hold measurements of them, the
fastest against the default. Without `--list` it searches
(`ember.tuning.search`) until every task has had `--trials` measurements
or `--time-budget` seconds have passed, then prints per task the default's
and the best time and the model-level estimate (the sum over tasks), and
then the whole model's time measured with the records and without
(`check_model`; `--no-check` leaves it out): a task runs alone in its
harness, and the model is the judge. Ctrl-C stops the search
where it is: every measurement made is in the records already.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import Any

from ember.errors import EmberError
from ember.targets.cpu.schedule.tasks import Task
from ember.targets.tuning_records import Records, default_path, identity
from ember.tuning.search import Settings, Summary, TaskState, tune


def records_file(given: str | None) -> Records:
    """The records `ember tune` writes: `--records`, else the default."""
    path = given or default_path()
    if path is None:
        raise EmberError("tuning records are off ($EMBER_RECORDS=0): give --records FILE")
    return Records(path)


def format_seconds(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    return f"{seconds * 1e3:.3f} ms"


def list_tasks(tasks: list[Task], records: Records, threads: int) -> None:
    """Prints the tasks, heaviest work first, with what the records hold."""
    best = records.best(threads)
    print(f"{len(tasks)} tasks ({sum(t.count for t in tasks)} ops); records: {records.path}")
    print(f"{'key':<20} {'ops':>3} {'MFLOP':>9} {'default':>11} {'best':>11}  task")
    for task in sorted(tasks, key=lambda t: -t.count * t.flops):
        defaults = [r for r in records.of_task(task.key) if r.is_default and r.seconds]
        default = min((r.seconds for r in defaults if r.seconds), default=None)
        found = best.get(task.key)
        print(f"{task.key:<20} {task.count:>3} {task.flops / 1e6:>9.2f} "
              f"{format_seconds(default):>11} "
              f"{format_seconds(found.seconds if found else None):>11}  {task.describe()}")  # fmt: skip


class Progress:
    """One line per measurement on stderr: the task, its best so far, the
    model-level estimate (a tqdm bar instead on a terminal, where tqdm is
    installed)."""

    def __init__(self, total: int, quiet: bool):
        self.quiet = quiet
        self.bar: Any = None
        if not quiet and sys.stderr.isatty():
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="trial", file=sys.stderr, leave=False)
            except ImportError:
                self.bar = None

    def __call__(self, state: TaskState, measurement: Any, summary: Summary) -> None:
        text = (f"{state.task.key[:8]} {state.task.op_name} best x{state.speedup:.2f} | model "
                f"{format_seconds(summary.tuned_seconds)} (default "
                f"{format_seconds(summary.default_seconds)}, x{summary.speedup:.3f})")  # fmt: skip
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.update(1)
        elif not self.quiet:
            status = measurement.error[:60] if measurement.error else format_seconds(
                measurement.seconds)  # fmt: skip
            print(f"ember: tune {text}: {status}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def print_results(states: list[TaskState], records: Records) -> None:
    print(f"{'key':<20} {'ops':>3} {'default':>11} {'best':>11} {'spread':>6} {'speedup':>8} "
          f"{'trials':>6}  task")  # fmt: skip
    for state in sorted(states, key=lambda s: -s.task.count * (s.default_seconds or 0.0)):
        schedule, seconds = state.chosen
        spread = f"{100 * state.spread(schedule):.0f}%" if math.isfinite(seconds) else "-"
        print(f"{state.task.key:<20} {state.task.count:>3} "
              f"{format_seconds(state.default_seconds):>11} {format_seconds(seconds):>11} "
              f"{spread:>6} {state.speedup:>7.2f}x {len(state.measured):>6}  "
              f"{state.task.describe()}")  # fmt: skip
    from ember.tuning.search import summary

    total = summary(states)
    print(f"model estimate: {format_seconds(total.tuned_seconds)} tuned, "
          f"{format_seconds(total.default_seconds)} default ({total.speedup:.3f}x); "
          f"records: {records.path}")  # fmt: skip


CHECK_RUNS = 20
"""Runs of the whole model, with and without the records, after a search."""


def check_model(compile_model: Callable[[bool | str], Any], records: Records) -> str:
    """The whole model's time with the records' schedules and with the
    defaults, their runs alternating (`alternating_medians`), as a line."""
    from ember.benchmarking import alternating_medians, spec_inputs

    default = compile_model(False)
    tuned = compile_model(str(records.path))
    inputs = list(spec_inputs(default.inputs).values())
    medians = alternating_medians({"default": lambda: default(*inputs),
                                   "tuned": lambda: tuned(*inputs)}, CHECK_RUNS)  # fmt: skip
    return (f"model measured: {format_seconds(medians['tuned'])} tuned, "
            f"{format_seconds(medians['default'])} default "
            f"({medians['default'] / medians['tuned']:.3f}x)")  # fmt: skip


def run_tune(args: argparse.Namespace, tasks: list[Task],
             compile_model: Callable[[bool | str], Any]) -> int:  # fmt: skip
    """`ember tune` on the model's tasks (parsed arguments in `args`);
    `compile_model(records)` compiles the model as it was tuned, with
    `records` (a path, or False for none), for the check at the end."""
    from ember.tuning.runner import DaskRunner, InProcessRunner, ProcessRunner

    records = records_file(args.records)
    stale = records.stale_count()
    if stale:
        print(f"ember: tune: {stale} records of this CPU from another Ember build are ignored",
              file=sys.stderr)  # fmt: skip
    if args.list:
        list_tasks(tasks, records, args.threads)
        return 0
    if args.scheduler is not None or args.local_cluster:
        runner: Any = DaskRunner(args.scheduler, workers=args.local_cluster or 2)
    elif args.in_process:
        runner = InProcessRunner()
    else:
        runner = ProcessRunner()
    settings = Settings(trials=args.trials, time_budget=args.time_budget, threads=args.threads,
                        batch=args.batch, seed=args.seed)  # fmt: skip
    if not args.quiet:
        print(f"ember: tune: {len(tasks)} tasks on {identity().cpu.split('/')[0]}, measured in "
              f"{runner.description}; records: {records.path}", file=sys.stderr)  # fmt: skip
    progress = Progress(len(tasks) * args.trials, args.quiet)
    try:
        states = tune(tasks, records, runner, settings, progress)
    except KeyboardInterrupt:
        progress.close()
        print("ember: tune: stopped; every measurement made is in the records", file=sys.stderr)
        return 130
    finally:
        runner.close()
    progress.close()
    print_results(states, records)
    if not args.no_check:
        print(check_model(compile_model, records))
    return 0


__all__ = ["list_tasks", "records_file", "run_tune"]
