"""What each graph-level optimisation buys: an ablation, side by side with onnxruntime.

    python benchmarks/graph_ablation.py [--runs 10] [-k resnet] [--layouts NCHWc,NHWC]

For every light model (random weights), the MLP and the encoder layer: graph
ops as imported and after clean-up, fusion groups and kernels without and
with fusion (the fusion report), then the median latency of the compiled
model as optimisations are switched on one after another:

    O0          nothing but what lowering needs
    +canon      canonicalisation and CSE (-O1 without BatchNorm folding)
    +bn         BatchNorm folding (= -O1)
    +gfuse      graph-fuse: fused groups become one kernel each
    +lfuse      loop-fuse: their loop nests merge (-O2 --layout none)
    +NHWC ...   -O2 with a conv layout, Winograd off (one column per
                --layouts entry; NHWC is the -O2 default)
    +winograd   convert-conv-to-winograd on 3x3 convolutions (= -O2)

and onnxruntime's latency at the same thread count, measured in the same
process, runs alternating. Numbers are measurements on a shared machine:
read ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Compile times here are the pipeline's, never a compile-cache hit's (ember/cache.py).
os.environ.setdefault("EMBER_CACHE", "0")

import ember  # noqa: E402
from benchmarks.cpu_models import models  # noqa: E402
from ember.benchmarking import benchmark_model  # noqa: E402
from ember.compiler import Options  # noqa: E402
from ember.fusion_report import fusion_report  # noqa: E402

STEPS: list[tuple[str, Options]] = [
    ("O0", Options(opt_level=0)),
    ("+canon", Options(opt_level=1, disabled=("graph-fold-batchnorm",))),
    ("+bn", Options(opt_level=1)),
    ("+gfuse", Options(opt_level=2, layout="none", disabled=("loop-fuse",))),
    ("+lfuse", Options(opt_level=2, layout="none")),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("-k", default="", help="only models whose name contains this")
    parser.add_argument(
        "--layouts", default="NCHWc,NHWC", help="comma-separated, or empty for none"
    )
    args = parser.parse_args(argv)
    no_winograd = ("convert-conv-to-winograd",)
    steps = STEPS + [(f"+{layout}", Options(opt_level=2, layout=layout, disabled=no_winograd))
                     for layout in filter(None, args.layouts.split(","))]  # fmt: skip
    steps.append(("+winograd", Options()))
    for name, model in models().items():
        if args.k not in name:
            continue
        print(fusion_report(ember.import_onnx(model)).format(name), flush=True)
        cells, ort = [], []
        for label, options in steps:
            result = benchmark_model(model, threads=args.threads, runs=args.runs, warmup=2,
                                     options=options)  # fmt: skip
            cells.append(f"{label} {result.ember_ms:.1f}")
            ort.append(result.ort_ms)
        best_ort = min(ort)
        print(f"  ms: {' | '.join(cells)} | onnxruntime {best_ort:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
