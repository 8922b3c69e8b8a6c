"""ResNet-50 in int8 on the NPU: the matrix unit's utilisation on its
convolutions with the default schedules and with tuned ones.

    python -m benchmarks.npu_tune                      # tune (24 trials a task) and compare
    python -m benchmarks.npu_tune --records r.sqlite --whole

The model is the ONNX package's ResNet-50 with random weights (seed 7),
quantised by onnxruntime's `quantize_static` after `quant_pre_process`
(per-tensor scales), as `tests/compiler/test_npu_quantized.py` makes it.
Its NPU tasks (`ember.targets.npu.tasks`) are tuned in the cycle model
(`ember.tuning.npu_search`), and per task the default's and the best
schedule's cycles and utilisation are printed, each product alone. The
mean utilisation is over the model's convolutions (each task counted
once per layer it stands for). With `--whole` the model is also compiled
for the NPU with and without the records and the same mean is taken
over the convolution layers of the cycle report, where each layer runs
in its segment's program (a few minutes each).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import onnx

import ember
from ember.targets.npu.tasks import model_tasks
from ember.targets.tuning_records import Records
from ember.tuning.npu_search import NpuTaskState, tune_npu
from tests.support.models import light_model_path, with_logits, with_random_weights
from tests.support.quantized import quantized

CONVOLUTION = "graph.qlinear_conv"


def resnet50_int8(folder: Path) -> Path:
    model, _ = with_logits(with_random_weights(onnx.load(light_model_path("resnet50")), seed=7))
    return quantized(model, folder, per_channel=False, preprocess=True)


def mean_utilization(states: list[NpuTaskState], tuned: bool) -> float:
    """Over the convolution layers, each task once per layer."""
    values = []
    for state in states:
        if state.task.op_name != CONVOLUTION:
            continue
        cycles = state.best[1] if tuned else state.default_cycles
        values += [state.utilization(cycles)] * state.task.count
    return statistics.mean(values)


def whole_model(path: Path, records: str | bool) -> tuple[float, int]:
    """The mean utilisation of the convolution layers of the cycle report,
    and the NPU's cycles in all."""
    compiled = ember.compile(str(path), target="npu", records=records)
    layers = [layer for segment in compiled.report.segments for layer in segment.layers
              if CONVOLUTION in layer.ops]  # fmt: skip
    return statistics.mean(layer.utilization for layer in layers), compiled.report.cycles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default=None, help="the records file (default: a new one)")
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--whole", action="store_true",
                        help="also compile the whole model with and without the records")  # fmt: skip
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="ember-npu-tune-"))
    path = resnet50_int8(folder)
    records_path = args.records or str(folder / "records.sqlite")
    tasks = model_tasks(ember.import_onnx(str(path)))
    start = time.monotonic()
    states = tune_npu(tasks, Records(records_path), args.trials)
    print(f"{len(tasks)} tasks ({sum(t.count for t in tasks)} products) tuned in "
          f"{time.monotonic() - start:.0f} s, {args.trials} trials a task; records: "
          f"{records_path}")  # fmt: skip
    print("| task | layers | default | cycles | util | tuned | cycles | util |")
    print("|---|---|---|---|---|---|---|---|")
    for state in states:
        best, cycles = state.best
        print(f"| {state.task.describe()} | {state.task.count} | {state.default[14:-1]} | "
              f"{state.default_cycles:,} | {state.utilization(state.default_cycles):.1%} | "
              f"{best[14:-1]} | {cycles:,} | {state.utilization(cycles):.1%} |")  # fmt: skip
    print(f"mean utilisation over the convolutions, each alone: default "
          f"{mean_utilization(states, False):.1%}, tuned {mean_utilization(states, True):.1%}")  # fmt: skip
    if args.whole:
        for name, records in (("default", False), ("tuned", records_path)):
            mean, cycles = whole_model(path, records)
            print(f"whole model, {name}: mean utilisation over the convolution layers "
                  f"{mean:.1%}, {cycles:,} NPU cycles")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
