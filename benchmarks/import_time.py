"""Import time of every light model, as shipped (ConstantOfShape weights) and
with random weights stored as initializers (real weight bytes), plus the
reference interpreter's run time. Run: python benchmarks/import_time.py"""

from __future__ import annotations

import time

import onnx

import ember
from tests.support.models import (
    LIGHT_MODELS,
    light_model_path,
    random_inputs,
    with_random_weights,
)


def main() -> None:
    print(f"{'model':<14} {'ops':>5} {'import (s)':>10} {'weights MB':>10} "
          f"{'import w/ weights (s)':>21} {'reference run (s)':>17}")  # fmt: skip
    for name in LIGHT_MODELS:
        model = onnx.load(light_model_path(name))
        start = time.perf_counter()
        module = ember.import_onnx(model)
        shipped = time.perf_counter() - start
        ops = sum(1 for _ in module.walk())
        weighted = with_random_weights(model)
        size = weighted.ByteSize() / 1e6
        start = time.perf_counter()
        module = ember.import_onnx(weighted)
        real = time.perf_counter() - start
        start = time.perf_counter()
        ember.reference.run(module, random_inputs(weighted))
        run = time.perf_counter() - start
        print(f"{name:<14} {ops:>5} {shipped:>10.3f} {size:>10.1f} {real:>21.3f} {run:>17.2f}")


if __name__ == "__main__":
    main()
