"""The generic version of a model with symbolic dims next to static compiles
of the same model at the same sizes, and onnxruntime.

    python benchmarks/dynamic.py [-k encoder,mlp] [--runs 20] [--threads 1,2]

For each model, at each thread count: one generic compile (the sizes left
symbolic) and, for each size, a static compile (the symbol pinned to it
with `dims=`), all run
in this process with onnxruntime, their runs alternating in rounds. The
table gives each one's median latency and the ratios generic / static,
versioned / static (a `VersionedModel` holding that static version and the
generic one: the entry check and the choice of version) and static /
onnxruntime, and checks that the generic version's outputs match the
static one's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Compile times here are the pipeline's, never a compile-cache hit's (ember/cache.py).
os.environ.setdefault("EMBER_CACHE", "0")

from ember.benchmarking import (  # noqa: E402
    ROUNDS,
    onnxruntime_session,
    round_blocks,
    run_onnxruntime,
    timed_calls,
)
from ember.compiler import compile as ember_compile  # noqa: E402
from ember.frontends.onnx import import_onnx  # noqa: E402
from ember.reference import entry_function  # noqa: E402
from ember.targets.versions import EntryCheck, VersionedModel, model_ranges  # noqa: E402
from tests.support.models import (  # noqa: E402
    mlp,
    resnet50_with_a_dynamic_batch,
    transformer_encoder,
)


@dataclass
class Case:
    name: str
    model: Callable[[], onnx.ModelProto]
    """The model with its sizes symbolic; the static compiles pin `symbol`."""
    inputs: Callable[[int], dict[str, np.ndarray]]
    sizes: tuple[int, ...]
    symbol: str


def _encoder_inputs(seq: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seq)
    return {"hidden": rng.standard_normal((1, seq, 768)).astype(np.float32),
            "mask": (rng.random((1, seq)) > 0.2).astype(np.int64)}  # fmt: skip


def _mlp_inputs(batch: int) -> dict[str, np.ndarray]:
    return {"input": np.random.default_rng(batch).standard_normal((batch, 784)).astype(np.float32)}


def _resnet_inputs(batch: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    return {"gpu_0/data_0": x}


CASES = [
    Case("encoder (BERT-base layer)", lambda: transformer_encoder(seq="S"),  # type: ignore[arg-type]
         _encoder_inputs, (7, 128, 384), "S"),
    Case("mlp 784-1024-1024-10", lambda: mlp(batch="N"),  # type: ignore[arg-type]
         _mlp_inputs, (1, 13, 64), "N"),
    Case("resnet50", resnet50_with_a_dynamic_batch, _resnet_inputs, (1, 3, 8), "N"),
]  # fmt: skip


def _median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1e3


def _row(case: Case, proto: onnx.ModelProto, generic: Any, size: int, threads: int,
         runs: int) -> str:  # fmt: skip
    """The table's row for one size: the generic version, a static compile
    at that size and onnxruntime, their runs alternating."""
    static = ember_compile(proto, threads=threads, dims={case.symbol: (size, size)})
    versioned = VersionedModel(EntryCheck(generic.inputs, model_ranges(entry_function(
        import_onnx(proto)))), generic.outputs, {((case.symbol, size),): static}, generic)  # fmt: skip
    session = onnxruntime_session(proto, threads)
    inputs = case.inputs(size)
    calls = {
        "generic": lambda: generic.run(inputs),
        "static": lambda: static.run(inputs),
        "versioned": lambda: versioned.run(inputs),
        "ort": lambda: run_onnxruntime(session, inputs),
    }
    times: dict[str, list[float]] = {key: [] for key in calls}
    outputs = {}
    for block in round_blocks(runs, ROUNDS):
        for key, call in calls.items():
            outputs[key] = timed_calls(call, block, times[key], True)
    difference = max(float(np.max(np.abs(a - b), initial=0))
                     for a, b in zip(outputs["generic"], outputs["static"]))  # fmt: skip
    g, s, v, o = (_median_ms(times[k]) for k in ("generic", "static", "versioned", "ort"))
    return (f"{case.name:28} {threads:>2} {case.symbol}={size:<5} {g:9.3f} {s:9.3f} "
            f"{o:9.3f} {g / s:8.2f}x {v / s:8.2f}x {s / o:8.2f}x {difference:9.1e}")  # fmt: skip


def measure(case: Case, threads: int, runs: int) -> list[str]:
    proto = case.model()
    generic = ember_compile(proto, threads=threads)
    return [_row(case, proto, generic, size, threads, runs) for size in case.sizes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="models whose name contains one of these words")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--threads", default="1", help="comma-separated thread counts")
    args = parser.parse_args()
    words = [w for w in args.k.split(",") if w]
    cases = [c for c in CASES if not words or any(w in c.name for w in words)]
    print(f"{'model':28} {'th':>2} {'size':7} {'generic':>9} {'static':>9} {'ort':>9} "
          f"{'gen/stat':>9} {'ver/stat':>9} {'stat/ort':>9} {'max diff':>9}   (ms)")  # fmt: skip
    for threads in (int(t) for t in args.threads.split(",")):
        for case in cases:
            for row in measure(case, threads, args.runs):
                print(row, flush=True)


if __name__ == "__main__":
    main()
