"""`ember tune MODEL --target npu`: the model's NPU tasks listed, or their
schedules searched in the cycle model and recorded.

`--list` prints the tasks (`ember.targets.npu.tasks`): their op, m x k x
n and type, how many of the model's products run each, and, where the
records hold measurements of them, the default's and the fastest
schedule's cycles and utilisation. Without it, it searches
(`ember.tuning.npu_search`) until every task has had `--trials`
schedules measured or `--time-budget` seconds have passed, then prints
per task the default's and the best cycles and the model's products in
all: cycles and the mean utilisation. Ctrl-C stops the search where it
is: every measurement made is in the records already.
"""

from __future__ import annotations

import argparse
import sys

from xdsl.dialects.builtin import ModuleOp

from ember.dialects.npu.machine import NpuParams
from ember.errors import EmberError
from ember.options import Options
from ember.targets.npu.measure import NpuMeasurement, npu_identity
from ember.targets.npu.tasks import NpuTask, model_tasks
from ember.targets.tuning_records import Records
from ember.tuning.command import records_file
from ember.tuning.npu_search import Listener, NpuSearch, NpuTaskState, npu_summary

HEADER = (f"{'key':<20} {'ops':>3} {'default':>12} {'util':>6} {'best':>12} {'util':>6} "
          f"{'trials':>6}  task")  # fmt: skip


def _cycles(cycles: int | None) -> str:
    return "-" if cycles is None else f"{cycles:,}"


def _row(state: NpuTaskState) -> str:
    _, best = state.best
    default = state.default_cycles
    return (f"{state.task.key:<20} {state.task.count:>3} {_cycles(default):>12} "
            f"{state.utilization(default):>6.1%} {_cycles(best):>12} "
            f"{state.utilization(best):>6.1%} {len(state.measured):>6}  {state.task.describe()}")  # fmt: skip


def print_states(states: list[NpuTaskState], records: Records, listed: bool) -> None:
    """One line per task, heaviest first, and the model's products in all."""
    tasks = sum(s.task.count for s in states)
    if listed:
        print(f"{len(states)} tasks ({tasks} products); records: {records.path}")
    print(HEADER)
    for state in states:
        print(_row(state))
    total = npu_summary(states)
    print(f"model's products: {total.tuned_cycles:,} cycles tuned, {total.default_cycles:,} "
          f"default; mean utilisation {total.tuned_utilization:.1%} tuned, "
          f"{total.default_utilization:.1%} default; records: {records.path}")  # fmt: skip


def _progress(quiet: bool) -> Listener:
    def listen(state: NpuTaskState, found: NpuMeasurement) -> None:
        if quiet:
            return
        status = found.error[:60] if found.error else f"{found.cycles:,} cycles"
        print(f"ember: tune {state.task.key[:8]} {found.schedule.block_m}x"
              f"{found.schedule.block_n}/{found.schedule.buffers}/{found.schedule.regions}: "
              f"{status} (best {_cycles(state.best[1])})", file=sys.stderr, flush=True)  # fmt: skip

    return listen


def _check_arguments(args: argparse.Namespace) -> None:
    """The CPU's measurement options mean nothing in the cycle model."""
    given = [flag for flag, value in (("--scheduler", args.scheduler),
                                      ("--local-cluster", args.local_cluster),
                                      ("--in-process", args.in_process),
                                      ("--threads", args.threads != 1)) if value]  # fmt: skip
    if given:
        raise EmberError(f"{', '.join(given)} applies to --target cpu (the NPU's schedules are "
                         "measured in its cycle model, here)")  # fmt: skip


def run_npu_tune(args: argparse.Namespace, module: ModuleOp, options: Options) -> int:
    """`ember tune --target npu` on an imported model (parsed arguments in `args`)."""
    _check_arguments(args)
    records = records_file(args.records)
    params = NpuParams()
    tasks: list[NpuTask] = model_tasks(module, options, params)
    search = NpuSearch(tasks, records, args.trials, params, args.time_budget,
                       _progress(args.quiet))  # fmt: skip
    if args.list:
        print_states([search.resume(t) for t in search.tasks], records, listed=True)
        return 0
    if not args.quiet:
        print(f"ember: tune: {len(tasks)} tasks on {npu_identity(params).cpu}, measured in the "
              f"cycle model; records: {records.path}", file=sys.stderr)  # fmt: skip
    try:
        states = search.run()
    except KeyboardInterrupt:
        print("ember: tune: stopped; every measurement made is in the records", file=sys.stderr)
        return 130
    print_states(states, records, listed=False)
    return 0


__all__ = ["print_states", "run_npu_tune"]
