"""Compile time and latency of Ember's CPU code next to onnxruntime.

    python benchmarks/cpu_models.py [--threads 1] [--runs 10] [-k resnet]

For every light model (random weights), the MLP (batch 64, 784-1024-1024-10)
and the BERT-base-like encoder layer (seq 128): compile seconds per stage,
median latency of both engines at the same thread count in one process,
their ratio (Ember / onnxruntime: below 1 means Ember is faster), the max
difference of the outputs, and the arena against the sum of all buffers.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Compile times here are the pipeline's, never a compile-cache hit's (ember/cache.py).
os.environ.setdefault("EMBER_CACHE", "0")

from ember.benchmarking import benchmark_model  # noqa: E402
from tests.support.models import (  # noqa: E402
    LIGHT_MODELS,
    light_model_path,
    mlp,
    transformer_encoder,
    with_random_weights,
)


def models() -> dict[str, onnx.ModelProto]:
    zoo = {name: with_random_weights(onnx.load(light_model_path(name))) for name in LIGHT_MODELS}
    return {**zoo, "mlp": mlp(), "transformer_encoder": transformer_encoder()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("-k", default="", help="only models whose name contains this")
    args = parser.parse_args(argv)
    print(f"{'model':<20} {'compile s':>9} {'ember ms':>10} {'ort ms':>9} {'ratio':>7} "
          f"{'max err':>8} {'arena MB':>9} {'naive MB':>9}")  # fmt: skip
    for name, model in models().items():
        if args.k not in name:
            continue
        r = benchmark_model(model, threads=args.threads, runs=args.runs, warmup=2)
        print(f"{name:<20} {r.compile_seconds:>9.1f} {r.ember_ms:>10.2f} {r.ort_ms:>9.2f} "
              f"{r.ratio:>7.1f} {r.max_abs_error:>8.1e} {r.arena_bytes / 1e6:>9.1f} "
              f"{r.naive_bytes / 1e6:>9.1f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
