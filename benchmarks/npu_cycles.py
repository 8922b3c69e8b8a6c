"""The NPU's cycle model next to an independent analytical one, on matrix
products, and what double buffering does.

    python benchmarks/npu_cycles.py               # 64^3 .. 512^3, int8 and f32
    python benchmarks/npu_cycles.py --sizes 512

The analytical model is SCALE-Sim's for a weight-stationary systolic
array (Samajdar et al., "SCALE-Sim: Systolic CNN Accelerator Simulator",
2018, sec. III): an M x K x N product on an R x C array runs in
ceil(K / R) * ceil(N / C) folds; a fold fills the weights (R cycles),
streams the M rows of A through the array with its skew (M + R + C - 2
cycles), so `2R + C + M - 2` cycles per fold, with memory assumed never to
stall. Ember's cycle model times the instructions the compiler emits,
DMA included; run with a DMA fast enough never to stall it should agree
with the analytical model up to what it does differently: the next fold's
weights load while the current one computes (Gemmini's second weight
registers) and consecutive folds follow each other through the array, so
only the first fill and the last drain show. The second analytical column
counts them that way.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

from ember.dialects.npu.machine import F32, INT8, INT32, ElementType, NpuParams
from ember.lowering.graph_to_npu.matmul import (
    MatmulSchedule,
    ProgramBuilder,
    default_schedule,
    dense,
    emit_products,
)
from ember.targets.npu.simulator.cycles import cycle_model

FAST_DMA = 1 << 14
"""Bytes per cycle that never stall the array (a tile in one cycle)."""


def scale_sim_ws_cycles(m: int, k: int, n: int, rows: int, cols: int,
                        overlapped: bool = False) -> int:  # fmt: skip
    """SCALE-Sim's weight-stationary runtime (see the module docstring);
    `overlapped`: each fold's fill and drain hidden behind its neighbours'
    streaming, as double-buffered weights do, but the first fill and the
    last drain."""
    folds = -(-k // rows) * -(-n // cols)
    if overlapped:
        return folds * m + 2 * rows + cols - 2
    return folds * (2 * rows + cols + m - 2)


@dataclass(frozen=True)
class Comparison:
    size: int
    elem: str
    ember: int
    analytical: int
    overlapped: int
    ember_with_dma: int
    single_buffer: int
    ideal: int

    def apart(self, analytical: int) -> float:
        return self.ember / analytical - 1


def product_cycles(size: int, elem: ElementType, params: NpuParams,
                   schedule: MatmulSchedule | None = None) -> int:  # fmt: skip
    out = INT32 if elem == INT8 else F32
    square = size * size * elem.bytes
    product = dense("mm", size, size, size, 1024, 1024 + square, 1024 + 2 * square, elem=elem,
                     out=out)  # fmt: skip
    builder = ProgramBuilder(params, {F32.code: 0})
    emit_products(builder, [product], [schedule or default_schedule(product, params)])
    return cycle_model(builder.finish(), params).cycles


def compare(size: int, elem: ElementType) -> Comparison:
    params = NpuParams()
    fast = replace(params, dma_bytes_per_cycle=FAST_DMA, dma_latency=1)
    out = INT32 if elem == INT8 else F32
    chosen = default_schedule(dense("mm", size, size, size, 0, 0, 0, elem=elem, out=out), params)
    single = replace(chosen, buffers=1)
    return Comparison(size, elem.name, product_cycles(size, elem, fast),
                      scale_sim_ws_cycles(size, size, size, params.dim, params.dim),
                      scale_sim_ws_cycles(size, size, size, params.dim, params.dim, True),
                      product_cycles(size, elem, params), product_cycles(size, elem, params, single),
                      size**3 // params.dim**2)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512])
    args = parser.parse_args(argv)
    print(
        "| M=K=N | type | SCALE-Sim WS | SCALE-Sim WS, folds overlapped | Ember, DMA never "
        "stalls | apart (SCALE-Sim, overlapped) | Ember, 16 B/cycle DMA | utilisation | "
        "one SP buffer |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        for elem in (INT8, F32):
            c = compare(size, elem)
            print(f"| {size} | {c.elem} | {c.analytical:,} | {c.overlapped:,} | {c.ember:,} | "
                  f"{c.apart(c.analytical):+.1%}, {c.apart(c.overlapped):+.1%} | "
                  f"{c.ember_with_dma:,} | {c.ideal / c.ember_with_dma:.1%} | "
                  f"{c.single_buffer:,} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
