"""Where an NPU model's cycles go: per segment and per layer (product),
from the cycle model, and what stayed on the host.

A layer's cycles run from the end of the layer before it (or the program's
start) to the end of its own last instruction, so the layers of a segment
add up to its program's cycles (less the final `finish`); its utilisation
is its multiply-accumulates over those cycles x dim^2, the matrix unit's
share of its peak while the layer runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ember.lowering.graph_to_npu import NpuKernel
from ember.targets.npu.simulator.cycles import cycle_model, dma_bytes


@dataclass(frozen=True)
class LayerCycles:
    segment: str
    ops: str
    shape: str
    schedule: str
    cycles: int
    macs: int
    bytes_moved: int
    dim: int

    @property
    def utilization(self) -> float:
        return self.macs / (self.cycles * self.dim * self.dim) if self.cycles else 0.0


@dataclass(frozen=True)
class SegmentCycles:
    name: str
    cycles: int
    utilization: float
    bytes_loaded: int
    bytes_stored: int
    instructions: int
    layers: list[LayerCycles]


def kernel_report(kernel: NpuKernel, order: Sequence[int] | None = None) -> SegmentCycles:
    """`order`: the program's checked order, if it has been checked."""
    timing = cycle_model(kernel.program, kernel.params, order)
    layers = []
    previous = 0
    for layer in kernel.layers:
        end = max(timing.ends[i] for i in layer.instructions)
        moved = sum(dma_bytes(kernel.program[i]) for i in layer.instructions
                    if kernel.program[i].mnemonic in ("load", "store"))  # fmt: skip
        schedule = layer.schedule.describe() + (" (tuned)" if layer.tuned else "")
        layers.append(LayerCycles(kernel.name, layer.ops, layer.shape, schedule,
                                  end - previous, layer.macs, moved, kernel.params.dim))  # fmt: skip
        previous = end
    return SegmentCycles(kernel.name, timing.cycles, timing.utilization, timing.bytes_loaded,
                         timing.bytes_stored, len(kernel.program), layers)  # fmt: skip


@dataclass(frozen=True)
class NpuReport:
    segments: list[SegmentCycles]
    host_ops: list[str]
    """The graph ops that run on the host, in order."""
    host_labels: list[str] = field(default_factory=list)
    """The same ops named by the model's nodes they came from (the table shows these)."""

    @property
    def cycles(self) -> int:
        return sum(s.cycles for s in self.segments)

    def table(self) -> str:
        """The per-layer table `ember bench --target npu` prints."""
        header = ("segment", "layer", "m x k x n", "cycles", "util", "KiB moved", "schedule")
        rows = [(layer.segment, layer.ops, layer.shape, f"{layer.cycles:,}",
                 f"{layer.utilization:.1%}", f"{layer.bytes_moved / 1024:,.1f}", layer.schedule)
                for segment in self.segments for layer in segment.layers]  # fmt: skip
        for segment in self.segments:
            rows.append((segment.name, "(whole program)", "", f"{segment.cycles:,}",
                         f"{segment.utilization:.1%}",
                         f"{(segment.bytes_loaded + segment.bytes_stored) / 1024:,.1f}",
                         f"{segment.instructions} instructions"))  # fmt: skip
        widths = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]
        lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip()
                 for row in [header, *rows]]  # fmt: skip
        host = ", ".join(self.host_labels or self.host_ops) or "none"
        lines.append(f"on the host: {host}")
        return "\n".join(lines)


__all__ = ["LayerCycles", "NpuReport", "SegmentCycles", "kernel_report"]
